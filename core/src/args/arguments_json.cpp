// to_json for the argument structs: HF key names, from the option table.
#include <trainhook/args/arguments_json.hpp>

#include "argument_options.hpp"

#include <cmath>
#include <cstdint>

namespace trainhook {

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

}  // namespace trainhook
