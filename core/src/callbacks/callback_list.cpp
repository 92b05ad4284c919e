// CallbackHandler::pop: the list side of HF's pop_callback/remove_callback
// (owned by issue 24; the handler's dispatch lives in callback_handler.cpp).
#include <trainhook/callbacks/callback_handler.hpp>

namespace trainhook {
namespace {

template <class Match>
std::unique_ptr<detail::InternalCallback> take(
    std::vector<std::unique_ptr<detail::InternalCallback>>& callbacks, std::vector<char>& enabled,
    std::vector<uint64_t>& masks, Match match) {
  for (size_t i = 0; i < callbacks.size(); ++i) {
    if (!match(*callbacks[i])) continue;
    auto cb = std::move(callbacks[i]);
    const auto at = static_cast<std::ptrdiff_t>(i);
    callbacks.erase(callbacks.begin() + at);
    enabled.erase(enabled.begin() + at);
    masks.erase(masks.begin() + at);
    return cb;
  }
  return nullptr;
}

}  // namespace

std::unique_ptr<detail::InternalCallback> CallbackHandler::pop(const std::string& name) {
  return take(callbacks_, enabled_, masks_,
              [&](const detail::InternalCallback& cb) { return cb.name() == name; });
}

std::unique_ptr<detail::InternalCallback> CallbackHandler::pop_instance(const void* instance) {
  if (instance == nullptr) return nullptr;
  return take(callbacks_, enabled_, masks_, [&](const detail::InternalCallback& cb) {
    return static_cast<const void*>(&cb) == instance ||
           static_cast<const void*>(cb.user_callback()) == instance;
  });
}

}  // namespace trainhook
