// The process settings a plugin must leave as it found them (signal
// dispositions, the standard descriptors, the working directory:
// ProcessSettings), watched around every plugin call of the events group, so
// that what one call changes is named by that call and not only seen at the
// end of the run:
//  - taken before and after each call: a change left at return names the
//    call; a change between two calls (a thread of the plugin's) names the
//    call it preceded;
//  - sampled every millisecond by a thread of the watch while a call runs: a
//    change the call makes and undoes before it returns is seen when it lasts
//    a few samples (a plugin that ignores SIGTERM while it flushes, then puts
//    the trainer's handler back).
// The owner of the findings is the events group's footprint check
// (process_footprint_check.cpp), which reports them under signal_handlers,
// std_descriptors and working_directory. The sampler runs from start() to
// stop(), which joins it before threads_left counts threads.
#pragma once

#include "process_snapshot.hpp"

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace trainhook::plugin_check {

class CallWatch {
 public:
  CallWatch() = default;
  CallWatch(const CallWatch&) = delete;
  CallWatch& operator=(const CallWatch&) = delete;
  ~CallWatch() { stop(); }

  // The settings now are the baseline; the sampler starts.
  void start();
  void stop();
  bool running() const noexcept { return sampler_.joinable(); }

  // Around one plugin call ("<callback>.<event> at step <n>"). Nothing
  // happens when the watch is not running.
  void begin(const char* callback, const char* event, int64_t step);
  void end();

  // "<call>: <what>" of each change seen, the first few of each kind, and how
  // many there were.
  struct Kind {
    std::vector<std::string> seen;
    uint64_t count = 0;
  };
  const Kind& signals() const noexcept { return signals_; }
  const Kind& std_fds() const noexcept { return std_fds_; }
  const Kind& cwd() const noexcept { return cwd_; }

 private:
  // What differs between two settings, per kind ("" for nothing).
  struct Changes {
    std::string signals, std_fds, cwd;
    bool any() const { return !signals.empty() || !std_fds.empty() || !cwd.empty(); }
  };
  static Changes compare(const ProcessSettings& before, const ProcessSettings& now);
  static void add(Kind& kind, const std::string& finding);
  void sample();

  std::thread sampler_;
  std::mutex mu_;  // guards what the sampler reads and writes below
  std::condition_variable wake_;
  bool stopping_ = false;
  bool in_call_ = false;
  uint64_t call_ = 0;       // counts calls: a sample spans one call or is dropped
  ProcessSettings before_;  // the settings when the current call began
  Changes during_;          // what the sampler saw in the current call (the first of each kind)

  ProcessSettings last_;  // after the last call (or at start)
  std::string where_;     // the current call
  Kind signals_, std_fds_, cwd_;
};

}  // namespace trainhook::plugin_check
