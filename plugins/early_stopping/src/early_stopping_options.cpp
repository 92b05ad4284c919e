#include <trainhook/early_stopping/early_stopping_options.hpp>

namespace trainhook::early_stopping {

const OptionTable<EarlyStoppingOptions>& EarlyStoppingOptions::table() {
  static const auto t =
      OptionTable<EarlyStoppingOptions>("early_stopping")
          .key(
              "early_stopping_patience", [](EarlyStoppingOptions& o) -> int64_t& { return o.patience(); },
              "evaluations without improvement before training stops (integer >= 1)")
          .alias("patience")
          .min(1)
          .key(
              "early_stopping_threshold", [](EarlyStoppingOptions& o) -> double& { return o.threshold(); },
              "how much better than the best a value must be to count (absolute, >= 0)")
          .alias("threshold")
          .min(0);
  return t;
}

}  // namespace trainhook::early_stopping
