// One field of an options struct with its chained setter, as LibTorch's
// TORCH_ARG (without its header): `TRAINHOOK_ARG(double, learning_rate) = 5e-5;`
// declares `learning_rate_` and `learning_rate(double)`, which sets it and
// returns the options, so `OptimizerOptions().learning_rate(1e-3).weight_decay(0.01)`.
// (Not the SDK's TRAINHOOK_OPTION, which declares a plugin_config key.)
#pragma once

#include <utility>

#define TRAINHOOK_ARG(T, name)          \
  auto name(T value)->decltype(*this) { \
    name##_ = std::move(value);         \
    return *this;                       \
  }                                     \
  T name##_
