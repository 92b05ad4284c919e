// to_json for the argument structs (HF key names, from the option table) and
// the *_steps resolution the trainer applies once it knows max_steps.
#include <trainhook/args/training_arguments.hpp>

#include "argument_options.hpp"

#include <cmath>

namespace trainhook {

// TRAINHOOK_DEFAULT_OPTIM_FUSED: set by core/CMakeLists.txt for LibTorch >= 2.8.
OptimizerName default_optimizer() {
#ifdef TRAINHOOK_DEFAULT_OPTIM_FUSED
  return OptimizerName::adamw_torch_fused;
#else
  return OptimizerName::adamw_torch;
#endif
}

namespace {

// The option table (argument_options.cpp) is the one source of the keys and
// their JSON form, so a field added to the parser is written without a second
// list to keep in step.
template <class Part>
nlohmann::json part_json(const Part& a, detail::ArgumentPart part, Part ParsedArguments::*slot) {
  ParsedArguments p;
  p.*slot = a;
  return detail::part_to_json(p, part);
}

}  // namespace

nlohmann::json to_json(const TrainingArguments& a) {
  nlohmann::json j = part_json(a, detail::ArgumentPart::Training, &ParsedArguments::training);
  // transformers 4.x types warmup_steps as int (5.x also takes a ratio): a whole
  // count is written as an integer so HfArgumentParser accepts training_args.json.
  if (a.warmup_steps >= 1 || a.warmup_steps == 0) {
    if (a.warmup_steps == std::floor(a.warmup_steps))
      j["warmup_steps"] = static_cast<int64_t>(a.warmup_steps);
  }
  return j;
}

nlohmann::json to_json(const ModelArguments& a) {
  return part_json(a, detail::ArgumentPart::Model, &ParsedArguments::model);
}

nlohmann::json to_json(const DataArguments& a) {
  return part_json(a, detail::ArgumentPart::Data, &ParsedArguments::data);
}

int64_t resolve_steps(double value, int64_t max_steps) {
  if (!(value > 0)) return 0;
  if (value < 1) {
    // The tiny slack keeps products such as 100 * 0.07 (= 7.000000000000001)
    // from rounding up to the next step.
    const double steps = std::ceil(static_cast<double>(max_steps) * value - 1e-9);
    return steps < 1 ? 1 : static_cast<int64_t>(steps);
  }
  return static_cast<int64_t>(value);
}

int64_t resolve_warmup_steps(const TrainingArguments& a, int64_t max_steps) {
  if (a.warmup_steps > 0) return resolve_steps(a.warmup_steps, max_steps);
  if (a.warmup_ratio > 0) {
    const double steps = std::ceil(static_cast<double>(max_steps) * a.warmup_ratio - 1e-9);
    return steps < 0 ? 0 : static_cast<int64_t>(steps);
  }
  return 0;
}

}  // namespace trainhook
