// The progress display: a training bar, an evaluation/prediction bar and log
// lines, drawn by one background thread so the training thread never waits on
// the terminal.
//
// Threading: the training thread calls the methods below. train_step() and
// prediction_step() only store atomics (a few ns); the others take a mutex for
// a moment to queue work. The display thread wakes every min_interval, reads
// the atomics, and writes the queued log lines and the bar with write(2). A log
// line does not wake it (logging every step, a wake-up per line cost the
// training thread a futex call and often a preemption, as the scheduler runs
// the woken thread on the waker's core): lines wait at most min_interval, or
// until kWakeLines are queued.
// end_training() and flush() wait (bounded) for the display thread: they run
// at the end of a run, never per step.
//
// TTY (isatty on the bar's fd): one line rewritten in place with '\r', sized to
// the terminal's width each time it is drawn; log lines clear it, print, and
// the bar is redrawn below them. Not a TTY: plain lines every plain_percent
// percent or plain_interval seconds, and no control characters at all.
#pragma once

#include <trainhook/progress/bar_format.hpp>
#include <trainhook/progress/log_format.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace trainhook::progress {

struct DisplayOptions {
  int bar_fd = 2;              // bars go to stderr, like tqdm
  int log_fd = 1;              // log lines go to stdout, like tqdm.write / print
  double min_interval = 0.1;   // seconds between redraws (tqdm's mininterval)
  double plain_interval = 30;  // not a TTY: at most this long between progress lines
  double plain_percent = 10;   // not a TTY: a progress line each time this many % are done
  bool bars = true;            // false: log lines only (the printer)
  // Overrides isatty(bar_fd) when set (tests); -1 = ask the fd.
  int force_tty = -1;
};

class Display {
 public:
  // Queued log lines that wake the display thread before its interval.
  static constexpr size_t kWakeLines = 256;

  explicit Display(const DisplayOptions& options);
  ~Display();  // draws what is pending, then joins the display thread
  Display(const Display&) = delete;
  Display& operator=(const Display&) = delete;

  // -- hot path: atomics only
  void train_step(int64_t global_step) noexcept { train_n_.store(global_step, std::memory_order_relaxed); }
  void prediction_step(int64_t batch_index, int64_t batch_count, bool predict);

  // -- cheap: a mutex held for a moment, no I/O
  void begin_training(int64_t initial_step, int64_t total);
  // The bar's "loss=..., lr=..." (formatted by the display thread).
  void set_postfix(std::optional<double> loss, std::optional<double> learning_rate);
  // One logs dict, formatted as a line by the display thread.
  void print_logs(LogValues logs, const LogFormatOptions& options);
  void end_prediction();

  // -- end of a run: wait (at most a few seconds) until drawn
  void end_training(int64_t final_step);
  void flush();

  bool tty() const noexcept { return tty_; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Snapshot;
  // A queued log line: a logs dict the display thread formats.
  struct Line {
    LogValues logs;
    LogFormatOptions options;
    std::string render() const { return format_logs(logs, options); }
  };
  bool queue_line(Line line);  // true: the display thread should be woken
  void ensure_started();
  void run();
  void draw(std::unique_lock<std::mutex>& lock);
  void write_bar_line(const BarSnapshot& bar);
  void clear_bar_line();
  BarSnapshot train_snapshot(Clock::time_point now) const;
  BarSnapshot prediction_snapshot(Clock::time_point now) const;
  double seconds_since(Clock::time_point t, Clock::time_point now) const;

  const DisplayOptions options_;
  const bool tty_;
  const bool unicode_;

  // Written by the training thread, read by the display thread.
  std::atomic<int64_t> train_n_{0};
  std::atomic<int64_t> pred_n_{0};
  std::atomic<int64_t> pred_total_{-1};
  std::atomic<bool> pred_active_{false};
  std::atomic<bool> started_{false};

  // Guarded by mu_.
  std::mutex mu_;
  std::condition_variable wake_;  // display thread waits here
  std::condition_variable done_;  // end_training()/flush() wait here
  std::deque<Line> lines_;
  std::optional<double> postfix_loss_;
  std::optional<double> postfix_learning_rate_;
  bool training_ = false;
  uint64_t train_generation_ = 0;  // +1 per begin_training()
  int64_t train_start_n_ = 0;
  int64_t train_total_ = 0;
  Clock::time_point train_start_{};
  bool pred_predict_ = false;
  Clock::time_point pred_start_{};
  bool pred_finished_ = false;  // end_prediction() not yet drawn
  BarSnapshot pred_final_;      // its last state
  bool train_end_requested_ = false;
  BarSnapshot train_final_;  // the training bar's last state
  uint64_t requests_ = 0;    // end/flush requests made
  uint64_t served_ = 0;      // ... and drawn
  bool stop_ = false;
  std::thread thread_;

  // Display thread only.
  bool bar_visible_ = false;  // TTY: a bar is on the current line
  std::string last_drawn_;
  uint64_t seen_generation_ = 0;
  double next_plain_percent_ = 0;
  int64_t last_plain_n_ = -1;
  Clock::time_point last_plain_{};
  Clock::time_point last_pred_plain_{};
};

}  // namespace trainhook::progress
