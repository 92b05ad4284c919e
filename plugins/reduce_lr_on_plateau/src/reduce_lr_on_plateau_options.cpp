#include <trainhook/reduce_lr_on_plateau/reduce_lr_on_plateau_options.hpp>

namespace trainhook::reduce_lr_on_plateau {

const OptionTable<ReduceLrOnPlateauOptions>& ReduceLrOnPlateauOptions::table() {
  using O = ReduceLrOnPlateauOptions;
  static const auto t =
      OptionTable<O>("reduce_lr_on_plateau")
          .key(TRAINHOOK_KEY(factor), "multiplier of the learning rate, in (0, 1)")
          .above(0)
          .below(1)
          .key(TRAINHOOK_KEY(patience), "evaluations without improvement before a reduction")
          .min(1)
          .key(TRAINHOOK_KEY(threshold), "how much better than the best a value must be to improve")
          .min(0)
          .choice(
              "threshold_mode", [](O& o) -> bool& { return o.relative_threshold(); },
              {{"rel", true}, {"abs", false}}, "`rel`: threshold relative to the best; `abs`: absolute")
          .key(TRAINHOOK_KEY(cooldown), "evaluations ignored after a reduction")
          .min(0)
          .key(TRAINHOOK_KEY(min_lr), "the learning rate is never reduced below it")
          .min(0)
          .key(TRAINHOOK_KEY(metric), "the metric watched (`eval_` added if missing)")
          .check("a metric name", [](const std::string& m) { return !m.empty(); })
          .shown_default("`metric_for_best_model`, else `eval_loss`")
          .key(TRAINHOOK_KEY(greater_is_better), "direction")
          .shown_default("the training argument, else by name (`...loss`: lower is better)");
  return t;
}

}  // namespace trainhook::reduce_lr_on_plateau
