// The choice-valued training arguments as enums (HF's IntervalStrategy,
// SaveStrategy, SchedulerType, OptimizerNames, ...). A name is parsed once,
// when the arguments are read, so the step loop compares enums, never strings.
// Each enum's spellings live once, in its EnumNames table below: the first entry
// of a value is its canonical name (what training_args.json and the plugins
// see); a later entry for the same value is an accepted alias.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace trainhook {

// --ddp_gradient_reduction: how a multi-process run averages gradients
// (distributed/data_parallel.hpp does the work).
enum class GradientReduction {
  // DDP's reducer (GradientReducer): buckets all-reduced while backward runs.
  overlap_with_backward,
  // One bucketed all-reduce after backward (average_gradients): the point of
  // comparison of bench/ddp's overlap ratio. Same values as the default.
  after_backward,
};

enum class IntervalStrategy { no, steps, epoch };    // logging/eval
enum class SaveStrategy { no, steps, epoch, best };  // save
// lr_scheduler_type: HF's SchedulerType (reduce_lr_on_plateau: see lr_schedule.hpp).
enum class SchedulerType {
  linear,
  cosine,
  cosine_with_restarts,
  polynomial,
  constant,
  constant_with_warmup,
  inverse_sqrt,
  cosine_with_min_lr,
  warmup_stable_decay,
  reduce_lr_on_plateau
};
enum class OptimizerName { adamw_torch, adamw_torch_fused, sgd, adagrad, rmsprop };  // optim
enum class PluginErrorPolicy { disable, fail };                                      // plugin_error_policy
enum class DdpBackend { gloo, nccl };                                                // ddp_backend
// --profile (common/profiler.hpp): none; simple (profile.json and a table);
// trace (also trace.json, a Chrome trace); ops (also LibTorch's operator profile).
enum class ProfileMode { none, simple, trace, ops };

template <class E>
struct EnumName {
  E value;
  const char* name;
};

template <class E>
struct EnumNames;

template <>
struct EnumNames<IntervalStrategy> {
  static constexpr std::array<EnumName<IntervalStrategy>, 3> all{
      {{IntervalStrategy::no, "no"}, {IntervalStrategy::steps, "steps"}, {IntervalStrategy::epoch, "epoch"}}};
};
template <>
struct EnumNames<SaveStrategy> {
  static constexpr std::array<EnumName<SaveStrategy>, 4> all{{{SaveStrategy::no, "no"},
                                                              {SaveStrategy::steps, "steps"},
                                                              {SaveStrategy::epoch, "epoch"},
                                                              {SaveStrategy::best, "best"}}};
};
template <>
struct EnumNames<SchedulerType> {
  static constexpr std::array<EnumName<SchedulerType>, 10> all{
      {{SchedulerType::linear, "linear"},
       {SchedulerType::cosine, "cosine"},
       {SchedulerType::cosine_with_restarts, "cosine_with_restarts"},
       {SchedulerType::polynomial, "polynomial"},
       {SchedulerType::constant, "constant"},
       {SchedulerType::constant_with_warmup, "constant_with_warmup"},
       {SchedulerType::inverse_sqrt, "inverse_sqrt"},
       {SchedulerType::cosine_with_min_lr, "cosine_with_min_lr"},
       {SchedulerType::warmup_stable_decay, "warmup_stable_decay"},
       {SchedulerType::reduce_lr_on_plateau, "reduce_lr_on_plateau"}}};
};
template <>
struct EnumNames<OptimizerName> {
  // "adamw" is ours. "adamw_torch_fused" (HF's default on torch >= 2.8) is the
  // same algorithm through ATen's fused kernel (optim/fused_adamw.hpp).
  static constexpr std::array<EnumName<OptimizerName>, 6> all{
      {{OptimizerName::adamw_torch, "adamw_torch"},
       {OptimizerName::adamw_torch_fused, "adamw_torch_fused"},
       {OptimizerName::sgd, "sgd"},
       {OptimizerName::adagrad, "adagrad"},
       {OptimizerName::rmsprop, "rmsprop"},
       {OptimizerName::adamw_torch, "adamw"}}};
};
template <>
struct EnumNames<PluginErrorPolicy> {
  static constexpr std::array<EnumName<PluginErrorPolicy>, 2> all{
      {{PluginErrorPolicy::disable, "disable"}, {PluginErrorPolicy::fail, "fail"}}};
};
template <>
struct EnumNames<DdpBackend> {
  static constexpr std::array<EnumName<DdpBackend>, 2> all{
      {{DdpBackend::gloo, "gloo"}, {DdpBackend::nccl, "nccl"}}};
};

template <>
struct EnumNames<ProfileMode> {
  static constexpr std::array<EnumName<ProfileMode>, 4> all{{{ProfileMode::none, "none"},
                                                             {ProfileMode::simple, "simple"},
                                                             {ProfileMode::trace, "trace"},
                                                             {ProfileMode::ops, "ops"}}};
};

// --ddp_gradient_reduction (the CLI's flag for TrainerOptions::gradient_reduction).
template <>
struct EnumNames<GradientReduction> {
  static constexpr std::array<EnumName<GradientReduction>, 3> all{
      {{GradientReduction::overlap_with_backward, "overlap"},
       {GradientReduction::after_backward, "after_backward"},
       {GradientReduction::overlap_with_backward, "overlap_with_backward"}}};
};

// The canonical name of a value.
template <class E>
constexpr const char* enum_name(E value) {
  for (const auto& n : EnumNames<E>::all)
    if (n.value == value) return n.name;
  return "?";
}

// The value a name (canonical or alias, exact spelling as HF's) stands for.
template <class E>
std::optional<E> parse_enum(std::string_view name) {
  for (const auto& n : EnumNames<E>::all)
    if (name == n.name) return n.value;
  return std::nullopt;
}

// The canonical names, for messages and --help: "no, steps, epoch".
template <class E>
std::string enum_choices() {
  std::string out;
  for (size_t i = 0; i < EnumNames<E>::all.size(); ++i) {
    const auto& n = EnumNames<E>::all[i];
    if (enum_name(n.value) != std::string_view(n.name)) continue;  // an alias
    if (!out.empty()) out += ", ";
    out += n.name;
  }
  return out;
}

}  // namespace trainhook
