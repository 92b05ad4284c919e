// How HF's ProgressCallback and PrinterCallback print a logs dict: Python's
// str(dict), e.g. "{'loss': 0.6931, 'grad_norm': 1.5, 'learning_rate': 5e-05, 'epoch': 0.33}".
#pragma once

#include <trainhook/abi.h>
#include <trainhook/support/log_values.hpp>

#include <string>
#include <string_view>

namespace trainhook::progress {

// Python's repr(float): shortest round-trip digits; positional notation for
// exponents -4..15 ("0.0001", "1.0"), else scientific ("1e-05", "1.5e+16").
std::string python_float_repr(double v);
// Python's repr(str) for plain text: single quotes, backslash escapes.
std::string python_str_repr(std::string_view s);

struct LogFormatOptions {
  bool round_epoch = true;   // ProgressCallback rounds "epoch" to 2 decimals; PrinterCallback does not
  size_t max_str_len = 100;  // ProgressCallback replaces longer strings with a notice; 0 = never
};

// A log event's values, copied on the training thread so that the display
// thread formats them (the formatting costs more than the copy).
using LogValues = support::CopiedValues;
inline LogValues copy_logs(const th_values* logs) { return support::copy_values(trainhook::Values(logs)); }

// The logs as Python prints the dict, without "total_flos" (both HF callbacks
// drop it). Numbers first, then strings, each in the order the host gave.
std::string format_logs(const LogValues& logs, const LogFormatOptions& options);

}  // namespace trainhook::progress
