#include <trainhook/progress/progress_options.hpp>

namespace trainhook::progress {
namespace {

// The printer has no keys: its table is empty, so any key is unknown.
struct PrinterOptions {};

}  // namespace

const OptionTable<ProgressOptions>& ProgressOptions::table() {
  static const auto t =
      OptionTable<ProgressOptions>("progress")
          .key(TRAINHOOK_KEY(min_interval),
               "seconds between redraws on a terminal; log lines are written at the next redraw")
          .above(0)
          .key(TRAINHOOK_KEY(plain_interval),
               "not a terminal: at most this many seconds between plain progress lines")
          .above(0)
          .key(TRAINHOOK_KEY(plain_percent),
               "not a terminal: a plain progress line each time this many percent are done")
          .above(0);
  return t;
}

DisplayOptions ProgressOptions::display_options() const {
  DisplayOptions d;
  d.min_interval = min_interval();
  d.plain_interval = plain_interval();
  d.plain_percent = plain_percent();
  return d;
}

void check_printer_options(const std::string& config_json) {
  static const OptionTable<PrinterOptions> printer("printer");
  printer.parse(config_json);
}

}  // namespace trainhook::progress
