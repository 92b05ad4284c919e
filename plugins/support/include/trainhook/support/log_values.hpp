// The one loop from a log event's values to an integration's records: every
// number, then every text, in the order the host gave them. Each integration
// says only what one value becomes (an MLflow metric, a wandb history entry,
// a TensorBoard scalar or text, a Prometheus gauge).
#pragma once

#include <trainhook/plugin.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trainhook::support {

template <class OnNumber, class OnText>
void for_each_value(const trainhook::Values& v, OnNumber&& on_number, OnText&& on_text) {
  for (uint32_t i = 0; i < v.size(); ++i) on_number(v.key(i), v.value(i));
  for (uint32_t i = 0; i < v.string_size(); ++i) on_text(v.string_key(i), v.string_value(i));
}

// Numbers only, for destinations that hold nothing else.
template <class OnNumber>
void for_each_number(const trainhook::Values& v, OnNumber&& on_number) {
  for (uint32_t i = 0; i < v.size(); ++i) on_number(v.key(i), v.value(i));
}

// A log event's values copied out of the event (which is borrowed for one
// call), for a thread that formats them later: copying is cheaper than
// formatting, so the training thread only copies.
struct CopiedValues {
  std::vector<std::pair<std::string, double>> numbers;
  std::vector<std::pair<std::string, std::string>> strings;
};

inline CopiedValues copy_values(const trainhook::Values& v) {
  CopiedValues out;
  out.numbers.reserve(v.size());
  for_each_value(
      v, [&](std::string_view key, double value) { out.numbers.emplace_back(std::string(key), value); },
      [&](std::string_view key, std::string_view text) { out.strings.emplace_back(key, text); });
  return out;
}

}  // namespace trainhook::support
