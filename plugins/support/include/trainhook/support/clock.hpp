// The wall clock as the integrations stamp their records: seconds since the
// Unix epoch as a double (TensorBoard events, wandb history, Prometheus
// gauges) and whole milliseconds (MLflow). One place, so that every plugin
// reads the same clock the same way.
#pragma once

#include <chrono>
#include <cstdint>

namespace trainhook::support {

inline double unix_seconds() noexcept {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The wall clock at an earlier steady_clock instant (an event's time(): an
// observe-only event reaches an isolated plugin later than it happened).
inline double unix_seconds_at(std::chrono::steady_clock::time_point then) noexcept {
  return unix_seconds() - std::chrono::duration<double>(std::chrono::steady_clock::now() - then).count();
}

inline int64_t unix_millis() noexcept {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace trainhook::support
