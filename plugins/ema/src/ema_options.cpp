#include <trainhook/ema/ema_options.hpp>

namespace trainhook::ema {

const OptionTable<EmaOptions>& EmaOptions::table() {
  static const auto t =
      OptionTable<EmaOptions>("ema")
          .key(TRAINHOOK_KEY(decay), "EMA decay, in [0, 1): ema = decay * ema + (1 - decay) * weights")
          .min(0)
          .below(1)
          .key(TRAINHOOK_KEY(warmup), "use min(decay, (1 + n) / (10 + n)) for update n")
          .key(TRAINHOOK_KEY(evaluate_with_ema), "evaluate with the EMA weights (swapped in and back)")
          .key(TRAINHOOK_KEY(update_every), "update every N optimizer steps")
          .min(1)
          .key(TRAINHOOK_KEY(log_checksum),
               "at train end, log a checksum of the EMA weights as a warning (printed by every rank, to "
               "compare them)")
          .key(TRAINHOOK_KEY(final_weights),
               "at train end, write the EMA weights into the model, so the final save (`model.pt`, "
               "`model.safetensors` in `output_dir`) holds them; with `--load_best_model_at_end`, the EMA "
               "weights saved with the best checkpoint (the ones its evaluation used)");
  return t;
}

}  // namespace trainhook::ema
