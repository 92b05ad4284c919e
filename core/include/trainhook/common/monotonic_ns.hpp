// CLOCK_MONOTONIC in nanoseconds, as th_event_args.time_ns carries it: the
// clock std::chrono::steady_clock reads on Linux, one for every process of the
// machine, so a time taken in the trainer means the same in a helper process.
#pragma once

#include <chrono>
#include <cstdint>

namespace trainhook {

inline int64_t monotonic_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace trainhook
