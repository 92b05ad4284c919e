// The one loop from a log event's values to an integration's records: every
// number, then every text, in the order the host gave them. Each integration
// says only what one value becomes (an MLflow metric, a wandb history entry,
// a TensorBoard scalar or text, a Prometheus gauge).
#pragma once

#include <trainhook/plugin.hpp>

#include <cstdint>
#include <string_view>

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

}  // namespace trainhook::support
