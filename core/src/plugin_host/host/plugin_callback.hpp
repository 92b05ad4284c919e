// Wraps one instance of a plugin's C callback (th_callback_info + vtable) as a
// detail::InternalCallback, and gives it its own th_host table built on HostServices.
//
// Ownership and lifetime: the object owns the plugin instance (destroyed first
// in ~PluginCallback), then its th_host table, then its reference to the
// library, so the library outlives every call into it.
#pragma once

#include "../containment/crash_handler.hpp"
#include "../registry/plugin_library.hpp"
#include "host_table.hpp"

#include <trainhook/callbacks/callback.hpp>
#include <trainhook/plugin_host/host/host_services.hpp>

#include <memory>
#include <string>

namespace trainhook::detail {

class PluginCallback final : public InternalCallback {
 public:
  // Throws PluginError with the plugin's message when create() fails.
  PluginCallback(std::shared_ptr<const PluginLibrary> library, const th_callback_info& info,
                 HostServices& host, const std::string& config_json);
  ~PluginCallback() override;
  PluginCallback(const PluginCallback&) = delete;
  PluginCallback& operator=(const PluginCallback&) = delete;

  std::string name() const override { return name_; }
  uint64_t event_mask() const override { return info_.event_mask; }
  bool critical() const override { return host_.critical(); }
  void on_event(EventId event, const th_event_args& args) override;
  std::optional<nlohmann::json> save_state() override;
  void load_state(const nlohmann::json& state) override;
  // Whether the plugin has these functions (the isolated runner tells the trainer).
  bool has_save_state() const noexcept { return has_save_state_; }
  bool has_load_state() const noexcept { return has_load_state_; }
  // The events of its mask it declared it only observes (th_host.set_observe_only).
  uint64_t observe_only() const noexcept { return host_.observe_only() & info_.event_mask; }
  // The waited events it declared side by side (th_host.set_side_by_side).
  uint64_t side_by_side() const noexcept { return host_.side_by_side() & info_.event_mask & ~observe_only(); }

 private:
  std::string describe_failure(th_status status, const char* err) const;
  void on_train_begin(const th_event_args& args);
  // An event it declared observe-only or side by side: it may not steer there.
  void on_declared_event(EventId event, const th_event_args& args);
  // The vtable's on_event, watched as every event call is.
  th_status call_event(EventId event, const th_event_args& args, char* err);
  // err is the call's kErrSize buffer; terminated here before it is read.
  [[noreturn]] void throw_failure(th_status status, char* err) const;

  std::shared_ptr<const PluginLibrary> library_;
  th_callback_info info_;  // copied: fields beyond the plugin's struct_size stay zero
  const th_callback_vtable* vtable_;
  bool has_save_state_ = false;
  bool has_load_state_ = false;
  std::string name_;
  PluginCallNames scope_names_;  // the file and name as PluginCallScope shows them (process lifetime)
  HostTable host_;               // this instance's th_host table; outlives self_
  void* self_ = nullptr;
  uint64_t declared_ = 0;  // observe_only() | side_by_side(), as declared in create()
};

}  // namespace trainhook::detail
