// A callback taken out of a Trainer's list by Trainer::pop_callback (HF's
// pop_callback returns the callback object). Hand it back with
// Trainer::add_callback to re-enable it, on the same Trainer: a plugin's
// callback holds that Trainer's host. Dropping it destroys the callback.
#pragma once

#include <trainhook/callbacks/callback.hpp>

#include <memory>
#include <string>

namespace trainhook {

class PoppedCallback {
 public:
  explicit PoppedCallback(std::unique_ptr<detail::InternalCallback> cb) : cb_(std::move(cb)) {}
  std::string name() const { return cb_ ? cb_->name() : std::string(); }
  // The embedder's C++ callback (nullptr for the core's and plugins' callbacks).
  const Callback* callback() const noexcept { return cb_ ? cb_->user_callback() : nullptr; }
  // Internal: the handler's entry, for add_callback.
  std::unique_ptr<detail::InternalCallback> release() noexcept { return std::move(cb_); }

 private:
  std::unique_ptr<detail::InternalCallback> cb_;
};

}  // namespace trainhook
