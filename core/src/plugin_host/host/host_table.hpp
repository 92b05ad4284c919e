// HostTable: one C th_host table (abi.h) over HostServices, for one callback
// instance or one plugin CLI command; it catches every exception at the C boundary. The table points back at
// this object (ctx), so it must not move; strings it hands out stay valid until it is destroyed.
#pragma once

#include <trainhook/abi.h>
#include <trainhook/plugin_host/host/host_services.hpp>

#include <atomic>
#include <list>
#include <mutex>
#include <string>

namespace trainhook::detail {

// Sets the ABI 1.1 model functions of `table` (host_table_model.cpp).
void add_model_services(th_host& table);

class HostTable {
 public:
  // `who` prefixes log lines and stop requests (the callback or command name).
  HostTable(HostServices& host, std::string who);
  HostTable(const HostTable&) = delete;
  HostTable& operator=(const HostTable&) = delete;

  const th_host* table() const noexcept { return &table_; }
  // For the ABI 1.1 functions of host_table_model.cpp.
  HostServices& services() const noexcept { return host_; }
  const std::string& who() const noexcept { return who_; }
  // Set by the plugin through th_host.set_critical (ABI 1.1).
  bool critical() const noexcept { return critical_.load(); }
  void make_critical() noexcept { critical_.store(true); }
  // Set by the plugin through th_host.set_observe_only (ABI 1.6): the events it
  // only observes. In process nothing reads it; the isolation runner tells the
  // trainer, which then sends those events through the event ring.
  uint64_t observe_only() const noexcept { return observe_only_.load(); }
  // Set through th_host.set_side_by_side (ABI 1.8): the waited events whose
  // call may overlap the next callbacks' calls (isolated only, as above).
  uint64_t side_by_side() const noexcept { return side_by_side_.load(); }

  // A declared event (observe-only or side by side) does not steer the run,
  // in process as isolated: while the calling thread runs one (between
  // enter_declared and leave_declared), a steering call (request_stop,
  // set_resume_checkpoint, set_lr_factor, add_metric, skip_optimizer_step,
  // writable tensors) is refused, and the first refusal is kept as the
  // call's breach. Other threads (a plugin's worker) are not affected.
  void enter_declared(int32_t event, const char* kind) noexcept;
  void leave_declared() noexcept;
  // "" when `call` may steer here; else the refusal (kept as the breach).
  std::string refuse_steering(const char* call);
  // The breach of the declared event just run ("" when none), cleared.
  std::string take_breach();

 private:
  static void log(void* ctx, int32_t level, const char* message) noexcept;
  static const char* output_dir(void* ctx) noexcept;
  static const char* training_args_json(void* ctx) noexcept;
  static void request_stop(void* ctx, const char* reason) noexcept;
  static const char* trainer_state_json(void* ctx) noexcept;
  static const char* model_description(void* ctx) noexcept;
  static th_status set_resume_checkpoint(void* ctx, const char* path, char* err, size_t err_size) noexcept;
  static const char* run_name(void* ctx) noexcept;
  static int32_t end_requested(void* ctx) noexcept;  // ABI 1.2
  static int32_t stop_signal(void* ctx) noexcept;    // ABI 1.3
  static int32_t isolated(void* ctx) noexcept;       // ABI 1.4
  static int32_t profiling(void* ctx) noexcept;      // ABI 1.5
  static void profile_span(void* ctx, const char* what, int64_t start_ns, int64_t end_ns) noexcept;
  static void set_observe_only(void* ctx, uint64_t events) noexcept;  // ABI 1.6
  static void set_side_by_side(void* ctx, uint64_t events) noexcept;  // ABI 1.8
  const char* keep(std::string value);

  HostServices& host_;
  std::string who_;
  th_host table_;
  std::mutex mu_;
  std::list<std::string> strings_;  // every string handed out (stable addresses)
  std::string trainer_state_;       // valid until the next trainer_state_json call
  std::atomic<bool> critical_{false};
  std::atomic<uint64_t> observe_only_{0};
  std::atomic<uint64_t> side_by_side_{0};
  std::string breach_;  // written and read by the thread in the declared event only
};

}  // namespace trainhook::detail
