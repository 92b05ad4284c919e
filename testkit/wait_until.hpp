// testkit::wait_until: the one way a test waits for something another thread
// (or process) does. Polls `condition` until it holds or the deadline passes,
// and returns whether it held, so the test then CHECKs the outcome instead of
// sleeping a fixed time and hoping. The deadline is generous (a slow or loaded
// machine only makes a passing test slower, never a failing one); nothing
// here asserts on time.
#pragma once

#include <chrono>
#include <thread>

namespace testkit {

constexpr std::chrono::milliseconds kDefaultDeadline{60000};

template <class Condition>
bool wait_until(Condition&& condition, std::chrono::milliseconds deadline = kDefaultDeadline,
                std::chrono::milliseconds poll = std::chrono::milliseconds(1)) {
  const auto end = std::chrono::steady_clock::now() + deadline;
  for (;;) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= end) return condition();
    std::this_thread::sleep_for(poll);
  }
}

// For a negative check ("nothing happens while ..."): true when `condition`
// stays false for the whole window. The window is a bound on what the test can
// see, not a synchronisation: a woken thread acts within microseconds.
template <class Condition>
bool stays_false_for(Condition&& condition, std::chrono::milliseconds window,
                     std::chrono::milliseconds poll = std::chrono::milliseconds(1)) {
  return !wait_until(condition, window, poll);
}

}  // namespace testkit
