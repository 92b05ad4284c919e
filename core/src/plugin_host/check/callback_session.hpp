// Every callback a library exports, created and called as the trainer's
// callback handler calls them, with each call watched: the progress marker
// names it while it runs (check_output.hpp), a call watch given with
// set_watch sees what it changes in the process (call_watch.hpp), its time
// (the call alone, not the watch's) is added to its event's
// figures, a non-OK status is kept with its message, and a C++ exception that
// crosses the C ABI is reported at once ("exceptions") and ends the run
// (StopRun): the plugin's state is unknown after it.
#pragma once

#include "call_watch.hpp"
#include "check_host.hpp"
#include "check_output.hpp"

#include <trainhook/abi.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace trainhook::plugin_check {

// The name of event `id` as the C++ layer spells it ("on_log"); "event <id>" for others.
std::string event_name(int32_t id);
// The events of `mask` by name ("on_log,on_step_end"), "all" or "none".
std::string events_of(uint64_t mask);

// "<type>: <what>" of the exception being handled (inside a catch block).
std::string describe_current_exception();

// Thrown out of a run that cannot go on. `exception`: a C++ exception crossed,
// already reported under "exceptions" (the run's own check is then a SKIP).
struct StopRun {
  std::string why;
  bool exception = false;
};

struct EventTimes {
  uint64_t calls = 0;
  int64_t total_ns = 0;
  int64_t max_ns = 0;
  int64_t max_step = 0;  // the step of the slowest call
};

class CallbackSession {
 public:
  // `configs`: plugin_config sections by callback name ("{}" when none).
  // `only_kind`: -1 for every callback, or TH_KIND_* to create only those.
  CallbackSession(const th_plugin_info& info, CheckHost& host, Progress& progress,
                  const std::map<std::string, std::string>& configs, int32_t only_kind = -1);
  ~CallbackSession();  // destroys what is still alive (no exception escapes)
  CallbackSession(const CallbackSession&) = delete;
  CallbackSession& operator=(const CallbackSession&) = delete;

  // Every call of this session from now on, watched by `watch` (null: none).
  void set_watch(CallWatch* watch) noexcept { watch_ = watch; }

  // Creates every callback; throws StopRun when one cannot be created.
  void create();
  // The event to every callback whose mask asks for it.
  void fire(th_event_args& args);
  // {"<callback>": "<its saved state>"} of the stateful ones (HF's stateful_callbacks).
  std::map<std::string, std::string> save_states();
  void load_states(const std::map<std::string, std::string>& states);
  void destroy();

  size_t size() const noexcept { return instances_.size(); }
  // "<callback>.<event> at step <n>: status <s>: <message>", the first few.
  const std::vector<std::string>& errors() const noexcept { return errors_; }
  uint64_t error_count() const noexcept { return error_count_; }
  // Per "<callback>.<event>".
  const std::map<std::string, EventTimes>& times() const noexcept { return times_; }
  void clear_errors() {
    errors_.clear();
    error_count_ = 0;
  }

  // What each callback declared observe-only (th_host.set_observe_only in
  // create) or side by side (set_side_by_side), and the calls in those events
  // that steered the run anyway (set a control flag, or called a host function
  // that steers): when isolated, what they set there is not taken.
  struct ObserveOnly {
    std::string callback;
    bool declared = false;
    uint64_t events = 0;
    uint64_t event_mask = 0;    // the callback's own
    uint64_t side_by_side = 0;  // as declared
  };
  std::vector<ObserveOnly> observe_only() const;
  const std::vector<std::string>& steered_observed() const noexcept { return steered_; }
  uint64_t steered_count() const noexcept { return steered_count_; }

 private:
  struct Instance {
    const th_callback_info* info;
    void* self = nullptr;
    uint64_t observe_only = 0;
    bool declared = false;
    uint64_t side_by_side = 0;
  };
  void check_observed(const Instance& in, const th_event_args& args, const th_control& before,
                      uint64_t steers_before, const char* declared_as);
  // Around each call into the plugin: the progress marker and the watch.
  void enter(const th_callback_info& cb, const char* what, int64_t step);
  void leave();
  void record_error(const Instance& in, const char* what, int64_t step, th_status st, const char* err);
  [[noreturn]] void crossed(const Instance& in, const char* what, int64_t step, const std::string& exception);

  const th_plugin_info& info_;
  CheckHost& host_;
  Progress& progress_;
  CallWatch* watch_ = nullptr;
  std::map<std::string, std::string> configs_;
  int32_t only_kind_;
  std::vector<Instance> instances_;
  std::vector<std::string> errors_;
  uint64_t error_count_ = 0;
  std::map<std::string, EventTimes> times_;
  std::vector<std::string> steered_;
  uint64_t steered_count_ = 0;
};

}  // namespace trainhook::plugin_check
