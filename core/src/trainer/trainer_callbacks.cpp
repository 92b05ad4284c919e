// Trainer::add_callback / pop_callback / remove_callback: HF's callback list
// management on the C++ Trainer. The list itself is the
// CallbackHandler's (callbacks/callback_list.cpp takes entries out of it).
#include "trainer_impl.hpp"

#include <trainhook/callbacks/default_flow_callback.hpp>

#include <stdexcept>

namespace trainhook {
namespace {

std::optional<PoppedCallback> popped(std::unique_ptr<detail::InternalCallback> cb) {
  if (!cb) return std::nullopt;
  return PoppedCallback(std::move(cb));
}

void check_not_training(const Trainer::Impl& impl, const char* what) {
  // The handler's list is walked by fire(); changing it from a callback while
  // an event is dispatched would invalidate that walk.
  if (impl.in_train)
    throw std::logic_error(std::string(what) + ": the callback list cannot change while train() runs");
}

}  // namespace

void Trainer::add_callback(NamedCallback callback) {
  check_not_training(*impl_, "add_callback");
  if (!callback.callback)
    throw std::invalid_argument("add_callback: callback '" + callback.name + "' is null");
  impl_->handler.add(std::move(callback));
}

void Trainer::add_callback(const std::string& name) {
  check_not_training(*impl_, "add_callback");
  if (name == "DefaultFlowCallback") {
    impl_->handler.add(std::make_unique<DefaultFlowCallback>(impl_->args));
    return;
  }
  if (!impl_->registry) {
    throw std::invalid_argument(
        "add_callback(\"" + name +
        "\"): plugins are off for this Trainer (TrainerOptions::use_plugins = false)");
  }
  impl_->registry->check_callbacks({name});
  // The isolation policy and the host's keys apply as to the run's own plugins.
  impl_->handler.add(impl_->create_plugin_callback(name));
}

void Trainer::add_callback(PoppedCallback callback) {
  check_not_training(*impl_, "add_callback");
  auto cb = callback.release();
  if (!cb) throw std::invalid_argument("add_callback: this PoppedCallback was already added back");
  impl_->handler.add(std::move(cb));
}

std::optional<PoppedCallback> Trainer::pop_callback(const std::string& name) {
  check_not_training(*impl_, "pop_callback");
  return popped(impl_->handler.pop(name));
}

std::optional<PoppedCallback> Trainer::pop_callback(const Callback& instance) {
  check_not_training(*impl_, "pop_callback");
  return popped(impl_->handler.pop_instance(static_cast<const void*>(&instance)));
}

void Trainer::remove_callback(const std::string& name) { pop_callback(name); }

void Trainer::remove_callback(const Callback& instance) { pop_callback(instance); }

std::vector<std::string> Trainer::callback_names() const { return impl_->handler.listed_names(); }

}  // namespace trainhook
