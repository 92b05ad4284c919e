// Text of a tqdm-like progress bar, as pure functions of a snapshot (no I/O,
// no clock), so the layout is unit-tested on its own.
//
// TTY:   " 45%|████▌     | 45/100 [00:12<00:15,  3.61it/s, loss=0.1234, lr=4.5e-05]"
// plain: " 45% 45/100 [00:12<00:15,  3.61it/s, loss=0.1234, lr=4.5e-05]"
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace trainhook::progress {

struct BarSnapshot {
  std::string label;    // shown before the bar ("" for training, "eval", "predict")
  int64_t n = 0;        // done
  int64_t total = 0;    // <= 0: unknown (no percentage, bar or ETA)
  double elapsed = 0;   // seconds since the bar started
  double rate = 0;      // items per second; <= 0: unknown
  std::string postfix;  // "loss=..., lr=..." or empty
};

// tqdm's times: "MM:SS", or "H:MM:SS" from one hour on.
std::string format_duration(double seconds);
// tqdm's rate: " 3.61it/s", or " 2.50s/it" below one item per second; "?it/s" unknown.
std::string format_rate(double rate);
// "loss=0.1234, lr=4.5e-05" from what is known (either may be missing).
std::string format_postfix(std::optional<double> loss, std::optional<double> learning_rate);
// One line of exactly at most columns-1 display columns (never wraps), no
// control characters; unicode selects block characters over '#'.
std::string format_tty_line(const BarSnapshot& s, int columns, bool unicode);
// One plain line for logs and pipes: no bar graphic, no control characters.
std::string format_plain_line(const BarSnapshot& s);

}  // namespace trainhook::progress
