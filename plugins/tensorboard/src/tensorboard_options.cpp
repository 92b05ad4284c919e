#include <trainhook/tensorboard/tensorboard_options.hpp>

namespace trainhook::tensorboard {
namespace {

// "weights,gradients" (or a JSON list of those names): at least one, nothing else.
bool histogram_names(const std::vector<std::string>& names) {
  if (names.empty()) return false;
  for (const auto& n : names)
    if (n != "weights" && n != "gradients") return false;
  return true;
}

}  // namespace

const OptionTable<TensorBoardOptions>& TensorBoardOptions::table() {
  static const auto t =
      OptionTable<TensorBoardOptions>("tensorboard")
          .key(TRAINHOOK_KEY(logging_dir), "folder of the event files")
          .env("TENSORBOARD_LOGGING_DIR")
          .check("a non-empty folder path", [](const std::string& d) { return !d.empty(); })
          .shown_default("`<output_dir>/runs/<date>_<host>`")
          .key(TRAINHOOK_KEY(queue_size),
               "log records queued for the writer thread before `on_log` drops (and counts) them")
          .min(1)
          .key(TRAINHOOK_KEY(flush_secs),
               "how often the writer appends to the file (0.01 to 2 s; the most a crash loses)")
          .min(0.01)
          .max(2)
          .key(TRAINHOOK_KEY(histograms),
               "`weights` and/or `gradients` (comma-separated or a JSON list): histograms of the parameters "
               "and/or their gradients (ABI 1.1)")
          .check("weights and/or gradients (e.g. weights,gradients)", histogram_names)
          .shown_default("none")
          .key(TRAINHOOK_KEY(histogram_steps), "optimizer steps between histograms")
          .min(1)
          .shown_default("`logging_steps`");
  return t;
}

}  // namespace trainhook::tensorboard
