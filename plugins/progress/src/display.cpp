#include <trainhook/progress/display.hpp>

#include <trainhook/progress/terminal.hpp>
#include <trainhook/support/thread_name.hpp>

#include <cmath>
#include <utility>
#include <vector>

namespace trainhook::progress {
namespace {

// How long the end of a run waits for the display thread before giving up
// (a terminal that does not drain must not hang the trainer forever).
constexpr std::chrono::seconds kEndWait{5};
constexpr const char* kClearToEnd = "\x1b[K";

}  // namespace

// What the display thread takes from the shared state in one wake-up.
struct Display::Snapshot {
  std::deque<Line> lines;
  bool have_bar = false;
  BarSnapshot bar;  // the bar to show now (prediction over training)
  bool is_training_bar = false;
  bool training = false;
  uint64_t train_generation = 0;
  bool pred_active = false;
  Clock::time_point pred_start{};
  bool pred_finished = false;
  BarSnapshot pred_final;
  bool train_end = false;
  BarSnapshot train_final;
  uint64_t requests = 0;
  bool stop = false;
};

Display::Display(const DisplayOptions& options)
    : options_(options),
      tty_(options.force_tty >= 0 ? options.force_tty == 1 : is_terminal(options.bar_fd)),
      unicode_(locale_is_utf8()) {}

Display::~Display() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Display::ensure_started() {
  if (started_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (!thread_.joinable()) thread_ = std::thread(&Display::run, this);
  started_.store(true, std::memory_order_release);
}

double Display::seconds_since(Clock::time_point t, Clock::time_point now) const {
  return std::chrono::duration<double>(now - t).count();
}

BarSnapshot Display::train_snapshot(Clock::time_point now) const {
  BarSnapshot s;
  s.n = train_n_.load(std::memory_order_relaxed);
  s.total = train_total_;
  s.elapsed = seconds_since(train_start_, now);
  if (s.n > train_start_n_ && s.elapsed > 0) s.rate = static_cast<double>(s.n - train_start_n_) / s.elapsed;
  if (postfix_loss_ || postfix_learning_rate_)
    s.postfix = format_postfix(postfix_loss_, postfix_learning_rate_);
  return s;
}

BarSnapshot Display::prediction_snapshot(Clock::time_point now) const {
  BarSnapshot s;
  s.label = pred_predict_ ? "predict" : "eval";
  s.n = pred_n_.load(std::memory_order_relaxed);
  s.total = pred_total_.load(std::memory_order_relaxed);
  s.elapsed = seconds_since(pred_start_, now);
  if (s.n > 0 && s.elapsed > 0) s.rate = static_cast<double>(s.n) / s.elapsed;
  return s;
}

void Display::prediction_step(int64_t batch_index, int64_t batch_count, bool predict) {
  if (!options_.bars) return;
  if (!pred_active_.load(std::memory_order_relaxed)) {  // first batch of a pass: once per evaluation
    ensure_started();
    std::lock_guard<std::mutex> lock(mu_);
    pred_start_ = Clock::now();
    pred_predict_ = predict;
    pred_n_.store(batch_index + 1, std::memory_order_relaxed);
    pred_total_.store(batch_count, std::memory_order_relaxed);
    pred_active_.store(true, std::memory_order_relaxed);
    return;
  }
  pred_n_.store(batch_index + 1, std::memory_order_relaxed);
  pred_total_.store(batch_count, std::memory_order_relaxed);
}

void Display::begin_training(int64_t initial_step, int64_t total) {
  if (!options_.bars) return;
  ensure_started();
  std::lock_guard<std::mutex> lock(mu_);
  training_ = true;
  ++train_generation_;
  train_start_n_ = initial_step;
  train_total_ = total;
  train_start_ = Clock::now();
  train_n_.store(initial_step, std::memory_order_relaxed);
  postfix_loss_.reset();
  postfix_learning_rate_.reset();
}

void Display::set_postfix(std::optional<double> loss, std::optional<double> learning_rate) {
  std::lock_guard<std::mutex> lock(mu_);
  postfix_loss_ = loss;
  postfix_learning_rate_ = learning_rate;
}

void Display::print_logs(LogValues logs, const LogFormatOptions& options) {
  if (queue_line(Line{std::move(logs), options})) wake_.notify_one();
}

bool Display::queue_line(Line line) {
  ensure_started();
  std::lock_guard<std::mutex> lock(mu_);
  lines_.push_back(std::move(line));
  return lines_.size() == kWakeLines;  // else drawn at the thread's next interval
}

void Display::end_prediction() {
  if (!options_.bars) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!pred_active_.load(std::memory_order_relaxed)) return;
    pred_final_ = prediction_snapshot(Clock::now());
    pred_finished_ = true;
    pred_active_.store(false, std::memory_order_relaxed);
  }
  wake_.notify_one();
}

void Display::end_training(int64_t final_step) {
  if (!options_.bars) return flush();
  std::unique_lock<std::mutex> lock(mu_);
  if (!training_ || !thread_.joinable()) return;
  train_n_.store(final_step, std::memory_order_relaxed);
  train_final_ = train_snapshot(Clock::now());
  training_ = false;
  train_end_requested_ = true;
  const uint64_t target = ++requests_;
  wake_.notify_one();
  done_.wait_for(lock, kEndWait, [&] { return served_ >= target; });
}

void Display::flush() {
  std::unique_lock<std::mutex> lock(mu_);
  if (!thread_.joinable()) return;
  const uint64_t target = ++requests_;
  wake_.notify_one();
  done_.wait_for(lock, kEndWait, [&] { return served_ >= target; });
}

void Display::run() {
  support::name_this_thread(options_.bars ? "th-progress" : "th-printer");
  const auto interval = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(options_.min_interval > 0 ? options_.min_interval : 0.1));
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait_for(lock, interval, [&] {
      return stop_ || lines_.size() >= kWakeLines || pred_finished_ || train_end_requested_ ||
             requests_ != served_;
    });
    const bool stopping = stop_;
    draw(lock);  // unlocks around the I/O, returns locked
    if (stopping) break;
  }
}

void Display::draw(std::unique_lock<std::mutex>& lock) {
  // Take everything under the lock, write without it.
  const Clock::time_point now = Clock::now();
  Snapshot w;
  w.lines.swap(lines_);
  w.training = training_;
  w.train_generation = train_generation_;
  w.pred_active = pred_active_.load(std::memory_order_relaxed);
  w.pred_start = pred_start_;
  if (options_.bars) {
    if (w.pred_active) {
      w.bar = prediction_snapshot(now);
      w.have_bar = true;
    } else if (training_) {
      w.bar = train_snapshot(now);
      w.have_bar = w.is_training_bar = true;
    }
  }
  w.pred_finished = std::exchange(pred_finished_, false);
  w.pred_final = pred_final_;
  w.train_end = std::exchange(train_end_requested_, false);
  w.train_final = train_final_;
  w.requests = requests_;
  w.stop = stop_;
  lock.unlock();

  if (w.train_generation != seen_generation_) {  // a new training bar: restart the plain-line schedule
    seen_generation_ = w.train_generation;
    next_plain_percent_ = 0;
    last_plain_n_ = -1;
    last_plain_ = now;
  }

  if (tty_) {
    if (!w.lines.empty()) {
      clear_bar_line();
      std::string text;
      for (const auto& l : w.lines) text += l.render() + "\n";
      write_all(options_.log_fd, text);
    }
    if (w.pred_finished && !w.training && !w.train_end) {  // evaluation outside training: leave its bar
      write_bar_line(w.pred_final);
      write_all(options_.bar_fd, "\n");
      bar_visible_ = false;
    }
    if (w.train_end) {  // the training bar stays, complete, on its own line
      write_bar_line(w.train_final);
      write_all(options_.bar_fd, "\n");
      bar_visible_ = false;
    }
    if (w.have_bar) {
      const std::string text = format_tty_line(w.bar, terminal_columns(options_.bar_fd), unicode_);
      if (!bar_visible_ || text != last_drawn_) write_bar_line(w.bar);
    } else if (bar_visible_) {
      clear_bar_line();
    }
    if (w.stop && bar_visible_) {  // destroyed mid-run: do not leave the cursor on the bar
      write_all(options_.bar_fd, "\n");
      bar_visible_ = false;
    }
  } else {
    std::string text;
    for (const auto& l : w.lines) text += l.render() + "\n";
    if (!text.empty()) write_all(options_.log_fd, text);
    if (w.have_bar && w.is_training_bar) {
      const BarSnapshot& b = w.bar;
      const double pct = b.total > 0 ? 100.0 * static_cast<double>(b.n) / static_cast<double>(b.total) : -1;
      const bool percent_due = pct >= 0 && pct >= next_plain_percent_;
      const bool time_due = seconds_since(last_plain_, now) >= options_.plain_interval;
      if (b.n != last_plain_n_ && (percent_due || time_due)) {
        write_all(options_.bar_fd, format_plain_line(b) + "\n");
        last_plain_n_ = b.n;
        last_plain_ = now;
        if (pct >= 0 && options_.plain_percent > 0)
          next_plain_percent_ = (std::floor(pct / options_.plain_percent) + 1) * options_.plain_percent;
      }
    } else if (w.have_bar) {  // evaluation/prediction: a line only when it runs long
      if (seconds_since(w.pred_start, now) >= options_.plain_interval &&
          seconds_since(last_pred_plain_, now) >= options_.plain_interval) {
        write_all(options_.bar_fd, format_plain_line(w.bar) + "\n");
        last_pred_plain_ = now;
      }
    }
    if (w.pred_finished && !w.training && !w.train_end)
      write_all(options_.bar_fd, format_plain_line(w.pred_final) + "\n");
    if (w.train_end && w.train_final.n != last_plain_n_) {
      write_all(options_.bar_fd, format_plain_line(w.train_final) + "\n");
      last_plain_n_ = w.train_final.n;
    }
  }

  lock.lock();
  if (w.requests > served_) served_ = w.requests;
  done_.notify_all();
}

void Display::write_bar_line(const BarSnapshot& bar) {
  last_drawn_ = format_tty_line(bar, terminal_columns(options_.bar_fd), unicode_);
  write_all(options_.bar_fd, "\r" + last_drawn_ + kClearToEnd);
  bar_visible_ = true;
}

void Display::clear_bar_line() {
  if (!bar_visible_) return;
  write_all(options_.bar_fd, std::string("\r") + kClearToEnd);
  bar_visible_ = false;
  last_drawn_.clear();
}

}  // namespace trainhook::progress
