// HostTable (see host_table.hpp): each th_host entry calls HostServices.
#include "host_table.hpp"

#include <trainhook/callbacks/callback_handler.hpp>
#include <trainhook/common/profiler.hpp>
#include <trainhook/plugin_host/host/end_request.hpp>

#include <cstring>
#include <utility>
#include <exception>

namespace trainhook::detail {
namespace {
HostTable* self_of(void* ctx) { return static_cast<HostTable*>(ctx); }

// The declared event the calling thread runs, and whose table it is for.
struct DeclaredEvent {
  const HostTable* table = nullptr;
  int32_t event = -1;
  const char* kind = "";
};
thread_local DeclaredEvent t_declared;
}  // namespace

void HostTable::enter_declared(int32_t event, const char* kind) noexcept {
  t_declared = DeclaredEvent{this, event, kind};
}

void HostTable::leave_declared() noexcept { t_declared = DeclaredEvent{}; }

std::string HostTable::refuse_steering(const char* call) {
  if (t_declared.table != this) return "";
  std::string why = std::string(call) + " in " + event_name(t_declared.event) + ", which it declared " +
                    t_declared.kind +
                    ": a declared event may not steer the run (refused in process as in its own process, so "
                    "one seed trains one model wherever it runs); declare only the events in which it does "
                    "not steer";
  if (breach_.empty()) breach_ = why;
  return why;
}

std::string HostTable::take_breach() { return std::exchange(breach_, std::string()); }

HostTable::HostTable(HostServices& host, std::string who) : host_(host), who_(std::move(who)), table_{} {
  table_.struct_size = TH_HOST_STRUCT_SIZE;
  table_.abi_major = TRAINHOOK_ABI_VERSION_MAJOR;
  table_.abi_minor = TRAINHOOK_ABI_VERSION_MINOR;
  table_.ctx = this;
  table_.log = &HostTable::log;
  table_.output_dir = &HostTable::output_dir;
  table_.training_args_json = &HostTable::training_args_json;
  table_.request_stop = &HostTable::request_stop;
  table_.trainer_state_json = &HostTable::trainer_state_json;
  table_.model_description = &HostTable::model_description;
  table_.set_resume_checkpoint = &HostTable::set_resume_checkpoint;
  table_.run_name = &HostTable::run_name;
  add_model_services(table_);                        // ABI 1.1 (host_table_model.cpp)
  table_.end_requested = &HostTable::end_requested;  // ABI 1.2
  table_.stop_signal = &HostTable::stop_signal;      // ABI 1.3
  table_.isolated = &HostTable::isolated;            // ABI 1.4
  table_.profiling = &HostTable::profiling;          // ABI 1.5
  table_.profile_span = &HostTable::profile_span;
  table_.set_observe_only = &HostTable::set_observe_only;  // ABI 1.6
  table_.set_side_by_side = &HostTable::set_side_by_side;  // ABI 1.8
}

const char* HostTable::keep(std::string value) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& s : strings_)
    if (s == value) return s.c_str();  // the same value keeps its address: no growth per call
  strings_.push_back(std::move(value));
  return strings_.back().c_str();
}

// No exception may cross into plugin code (it may be C without unwind tables):
// every function below catches everything.

void HostTable::log(void* ctx, int32_t level, const char* message) noexcept {
  try {
    self_of(ctx)->host_.log(level, self_of(ctx)->who_, message != nullptr ? message : "");
  } catch (...) {
  }
}

const char* HostTable::output_dir(void* ctx) noexcept {
  try {
    return self_of(ctx)->keep(self_of(ctx)->host_.output_dir());
  } catch (...) {
    return "";
  }
}

const char* HostTable::training_args_json(void* ctx) noexcept {
  try {
    return self_of(ctx)->keep(self_of(ctx)->host_.training_args_json());
  } catch (...) {
    return "{}";
  }
}

void HostTable::request_stop(void* ctx, const char* reason) noexcept {
  try {
    if (!self_of(ctx)->refuse_steering("request_stop").empty()) return;
    self_of(ctx)->host_.request_stop(self_of(ctx)->who_, reason != nullptr ? reason : "");
  } catch (...) {
  }
}

const char* HostTable::trainer_state_json(void* ctx) noexcept {
  try {
    HostTable* self = self_of(ctx);
    std::string text = self->host_.trainer_state_json();
    std::lock_guard<std::mutex> lock(self->mu_);
    self->trainer_state_ = std::move(text);
    return self->trainer_state_.c_str();
  } catch (...) {
    return "{}";
  }
}

const char* HostTable::model_description(void* ctx) noexcept {
  try {
    return self_of(ctx)->keep(self_of(ctx)->host_.model_description());
  } catch (...) {
    return "";
  }
}

th_status HostTable::set_resume_checkpoint(void* ctx, const char* path, char* err, size_t err_size) noexcept {
  std::string refusal;
  try {
    refusal = self_of(ctx)->refuse_steering("set_resume_checkpoint");
    if (refusal.empty()) refusal = self_of(ctx)->host_.set_resume_checkpoint(path != nullptr ? path : "");
  } catch (const std::exception& e) {
    refusal = e.what();
  } catch (...) {
    refusal = "unknown error";
  }
  if (refusal.empty()) return TH_OK;
  if (err != nullptr && err_size > 0) {
    const size_t n = std::min(refusal.size(), err_size - 1);
    std::memcpy(err, refusal.data(), n);
    err[n] = '\0';
  }
  return TH_INVALID_ARGUMENT;
}

const char* HostTable::run_name(void* ctx) noexcept {
  try {
    return self_of(ctx)->keep(self_of(ctx)->host_.run_name());
  } catch (...) {
    return "";
  }
}

int32_t HostTable::end_requested(void*) noexcept { return end_now_requested() ? 1 : 0; }
int32_t HostTable::stop_signal(void*) noexcept { return stop_signal_received(); }
int32_t HostTable::isolated(void* ctx) noexcept {
  try {
    return self_of(ctx)->host_.isolated() ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

int32_t HostTable::profiling(void* ctx) noexcept {
  try {
    return self_of(ctx)->host_.profiler() != nullptr ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

void HostTable::profile_span(void* ctx, const char* what, int64_t start_ns, int64_t end_ns) noexcept {
  try {
    HostTable* self = self_of(ctx);
    Profiler* p = self->host_.profiler();
    if (p == nullptr || end_ns < start_ns) return;
    const std::string name = "[Worker]" + self->who_ + "." + (what != nullptr && *what ? what : "work");
    // The plugin read the same clock (steady_clock is CLOCK_MONOTONIC on Linux).
    using Tp = Profiler::Clock::time_point;
    p->record(p->action(name), Tp(std::chrono::nanoseconds(start_ns)), Tp(std::chrono::nanoseconds(end_ns)));
  } catch (...) {
    // Nothing crosses the C boundary; a span lost is only a profile's gap.
  }
}

void HostTable::set_observe_only(void* ctx, uint64_t events) noexcept {
  self_of(ctx)->observe_only_.store(events & TH_EVENT_MASK_ALL);
}

void HostTable::set_side_by_side(void* ctx, uint64_t events) noexcept {
  self_of(ctx)->side_by_side_.store(events & TH_EVENT_MASK_ALL);
}

}  // namespace trainhook::detail
