#include <trainhook/progress/printer_callback.hpp>

#include <trainhook/progress/log_format.hpp>
#include <trainhook/progress/progress_options.hpp>

namespace trainhook::progress {
namespace {

DisplayOptions printer_display(const std::string& config_json) {
  check_printer_options(config_json);
  DisplayOptions o;
  o.bars = false;
  return o;
}

}  // namespace

PrinterCallback::PrinterCallback(trainhook::Setup& setup) : display_(printer_display(setup.config_json())) {}

void PrinterCallback::on_log(trainhook::Event& e) {
  if (!e.is_world_process_zero()) return;
  // HF's PrinterCallback prints the dict as is (no rounding, no truncation), minus total_flos.
  LogFormatOptions raw;
  raw.round_epoch = false;
  raw.max_str_len = 0;
  display_.print_logs(copy_logs(e.raw()->values), raw);
}

void PrinterCallback::on_train_end(trainhook::Event&) { display_.flush(); }

}  // namespace trainhook::progress
