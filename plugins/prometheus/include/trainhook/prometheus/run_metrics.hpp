// One run's series in a prometheus-cpp Registry, every one labelled with
// run_name and job (the only label values: never another training argument,
// so no secret reaches a label):
//   trainhook_<key>                      gauge per logged number (metric_names.hpp)
//   trainhook_steps_total                counter of optimizer steps
//   trainhook_samples_total              counter: steps x per-device batch x accumulation x world size
//   trainhook_tokens_total               counter of th_state.num_input_tokens_seen's increase
//   trainhook_last_step_timestamp_seconds gauge: unix time of the last step end
//   trainhook_step_duration_seconds      histogram of step begin -> step end (kStepBuckets)
//   trainhook_up                         gauge: 1 while training, 0 after train end or a failure
//   trainhook_last_success_timestamp_seconds gauge, only once the run finished
//
// Threads: the setters run on the training thread and only touch atomics and
// prometheus-cpp's metric objects (Gauge::Set, Counter::Increment,
// Histogram::Observe); a family is created the first time a key is logged.
// Collect() runs on the metrics server's threads (ScrapeView) and the push
// worker; prometheus-cpp's Registry and Family lock their own state.
#pragma once

#include <trainhook/prometheus/metric_names.hpp>

#include <trainhook/support/log.hpp>

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace trainhook::prometheus {

// Step-duration buckets in seconds: 1 ms to 60 s, about 2.5x apart (small
// MLPs take ms per step, large models seconds).
const std::vector<double>& step_buckets();

class RunMetrics {
 public:
  // Gauges for logged keys at most: a run that logs ever new keys (a name per
  // step, per sample) would otherwise grow the registry and every scrape
  // without bound. Keys beyond are not exported (one warning).
  static constexpr size_t kMaxLoggedGauges = 2000;

  // `log` receives the one-time warning for two keys with one name.
  RunMetrics(std::string run_name, std::string job, support::Logger log);

  // Training thread. Sets one gauge per number (strings are not metrics).
  // begin_record() starts a record's keys: a run logs the same keys in the
  // same order step after step, so each finds its gauge by position with one
  // comparison instead of two hash lookups of a copied name.
  void begin_record() noexcept { next_ = 0; }
  void set_logged(std::string_view key, double value);
  void step_begin(std::chrono::steady_clock::time_point now);
  // `samples`: this step's nominal samples; `tokens_seen`: th_state.num_input_tokens_seen.
  void step_end(std::chrono::steady_clock::time_point now, double unix_now, int64_t samples,
                int64_t tokens_seen);
  // num_input_tokens_seen at train begin (a resumed run counts from there).
  void tokens_baseline(int64_t tokens_seen) noexcept { tokens_seen_ = tokens_seen; }
  void set_up(bool up);
  // Registers and sets trainhook_last_success_timestamp_seconds (a finished run only).
  void set_last_success(double unix_now);

  const std::shared_ptr<::prometheus::Registry>& registry() const noexcept { return registry_; }
  const ::prometheus::Labels& labels() const noexcept { return labels_; }

 private:
  ::prometheus::Gauge& gauge(const std::string& name, const std::string& help);
  // The gauge of a logged key, registered at its first value; null when the
  // key is not exported (its name is taken, or the registry is full).
  ::prometheus::Gauge* gauge_for(std::string_view key);

  ::prometheus::Labels labels_;
  support::Logger log_;
  std::shared_ptr<::prometheus::Registry> registry_;
  MetricNames names_;
  std::unordered_map<std::string, ::prometheus::Gauge*> logged_;  // metric name -> gauge
  // The last record's keys in order and their gauges (null: not exported).
  std::vector<std::pair<std::string, ::prometheus::Gauge*>> record_keys_;
  size_t next_ = 0;
  ::prometheus::Counter* steps_;
  ::prometheus::Counter* samples_;
  ::prometheus::Counter* tokens_;
  ::prometheus::Gauge* last_step_;
  ::prometheus::Histogram* step_duration_;
  ::prometheus::Gauge* up_;
  std::chrono::steady_clock::time_point step_began_{};
  bool in_step_ = false;
  bool warned_full_ = false;
  int64_t tokens_seen_ = 0;
};

// What the exporter serves: the registry, plus a count of the scrapes that
// read it after mark_final() (for the `linger` wait at the end). Pushes
// collect the registry itself, so they do not count as scrapes.
class ScrapeView final : public ::prometheus::Collectable {
 public:
  explicit ScrapeView(std::shared_ptr<::prometheus::Registry> registry) : registry_(std::move(registry)) {}
  std::vector<::prometheus::MetricFamily> Collect() const override;

  // Training thread: the values set so far are the final ones.
  void mark_final() noexcept { final_ = true; }
  // Waits until a scrape has read the final values, `timeout` passed or
  // `give_up()` (checked every 100 ms) says to stop. True when read.
  template <class GiveUp>
  bool wait_final_scrape(std::chrono::milliseconds timeout, GiveUp give_up) const {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::unique_lock<std::mutex> lock(mu_);
    while (final_scrapes_ == 0) {
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline || give_up()) return false;
      cv_.wait_for(lock, std::min<std::chrono::steady_clock::duration>(deadline - now,
                                                                       std::chrono::milliseconds(100)));
    }
    return true;
  }

 private:
  std::shared_ptr<::prometheus::Registry> registry_;
  std::atomic<bool> final_{false};
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  mutable uint64_t final_scrapes_ = 0;
};

}  // namespace trainhook::prometheus
