// CallbackHandler::pop and listed_names: the list side of HF's
// pop_callback/remove_callback and callback list (the
// handler's dispatch lives in callback_handler.cpp). Internal callbacks (the
// trainer's own machinery, Listing::internal) are neither listed nor popped.
#include <trainhook/callbacks/callback_handler.hpp>

namespace trainhook {

std::unique_ptr<detail::InternalCallback> CallbackHandler::take_at(size_t index) {
  auto cb = std::move(callbacks_[index]);
  const auto at = static_cast<std::ptrdiff_t>(index);
  callbacks_.erase(callbacks_.begin() + at);
  enabled_.erase(enabled_.begin() + at);
  masks_.erase(masks_.begin() + at);
  critical_.erase(critical_.begin() + at);
  internal_.erase(internal_.begin() + at);
  deferred_.erase(deferred_.begin() + at);
  profile_actions_.erase(cb.get());  // another callback may get its address
  return cb;
}

std::vector<std::unique_ptr<detail::InternalCallback>> CallbackHandler::take_all() {
  std::vector<std::unique_ptr<detail::InternalCallback>> all = std::move(callbacks_);
  callbacks_.clear();
  enabled_.clear();
  masks_.clear();
  critical_.clear();
  internal_.clear();
  deferred_.clear();
  profile_actions_.clear();
  return all;
}

std::unique_ptr<detail::InternalCallback> CallbackHandler::pop(const std::string& name) {
  for (size_t i = 0; i < callbacks_.size(); ++i)
    if (internal_[i] == 0 && callbacks_[i]->name() == name) return take_at(i);
  return nullptr;
}

std::unique_ptr<detail::InternalCallback> CallbackHandler::pop_instance(const void* instance) {
  if (instance == nullptr) return nullptr;
  for (size_t i = 0; i < callbacks_.size(); ++i) {
    if (internal_[i] != 0) continue;
    const detail::InternalCallback& cb = *callbacks_[i];
    if (static_cast<const void*>(&cb) == instance || static_cast<const void*>(cb.user_callback()) == instance)
      return take_at(i);
  }
  return nullptr;
}

std::vector<std::string> CallbackHandler::listed_names() const {
  std::vector<std::string> names;
  for (size_t i = 0; i < callbacks_.size(); ++i)
    if (internal_[i] == 0) names.push_back(callbacks_[i]->name());
  return names;
}

}  // namespace trainhook
