// IsolatedCallback: the trainer's side of a plugin callback that runs in its
// own process (trainhook-plugin-runner, see plugin_runner.cpp). Each call
// (event, save_state, load_state) crosses a socket pair (isolation_protocol);
// while it waits for the answer it serves what the plugin asks of the host
// (logs, stop requests, metrics, learning rates, trainer state) from the real
// HostServices. The plugin's library is never loaded in this process.
//
// Failure: when the helper dies (a signal, exit()), closes its end or does not
// answer within the timeout, the call throws a message naming the file, the
// callback, the call and the cause; the helper is then killed and reaped, and
// every later call fails at once with the same cause (no second wait).
//
// Ownership: the object owns the helper process and its socket; destroying it
// asks the helper to destroy the plugin instance, then reaps it (killing it
// after the timeout). `host` must outlive the object, as for PluginCallback.
#pragma once

#include "isolation_protocol.hpp"

#include <trainhook/callbacks/callback.hpp>
#include <trainhook/plugin_host/host/host_services.hpp>

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>

namespace trainhook::detail {

class IsolatedCallback final : public InternalCallback {
 public:
  // Throws PluginError naming the file when the helper cannot be started or
  // the plugin's create() fails there.
  IsolatedCallback(std::filesystem::path library, std::string callback, HostServices& host,
                   const std::string& config_json, double timeout_seconds);
  ~IsolatedCallback() override;
  IsolatedCallback(const IsolatedCallback&) = delete;
  IsolatedCallback& operator=(const IsolatedCallback&) = delete;

  std::string name() const override { return name_; }
  uint64_t event_mask() const override { return mask_; }
  bool critical() const override { return critical_; }
  bool isolated() const noexcept override { return true; }
  void on_event(EventId event, const th_event_args& args) override;
  std::optional<nlohmann::json> save_state() override;
  void load_state(const nlohmann::json& state) override;

  pid_t helper_pid() const noexcept { return pid_; }

 private:
  void spawn();
  // Sends out_'s message, then serves the helper's notices and requests until
  // its answer `expected` arrives (left in channel_). Throws on failure.
  void exchange(isolation::Msg expected, const char* what);
  void serve_request();
  [[noreturn]] void fail(const char* what, const std::string& cause);
  // Waits for the helper to end (after EOF) and describes how it ended.
  std::string reap();
  void kill_and_reap() noexcept;
  // Reads the status + message that start a Done; throws the plugin's error.
  void check_done();

  std::filesystem::path library_;
  std::string name_;
  HostServices& host_;
  std::chrono::steady_clock::duration timeout_;
  double timeout_seconds_;
  pid_t pid_ = -1;
  int fd_ = -1;
  isolation::Channel channel_{-1};
  isolation::Writer out_;    // the call being sent
  isolation::Writer reply_;  // answers to the helper's requests
  std::string dead_;         // set once the helper is gone: why
  bool end_now_sent_ = false;
  int stop_signal_sent_ = 0;  // the th_host.stop_signal the runner was last told
  uint64_t mask_ = 0;
  bool critical_ = false;
  bool has_save_state_ = false;
  bool has_load_state_ = false;
};

}  // namespace trainhook::detail
