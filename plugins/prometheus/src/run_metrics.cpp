#include <trainhook/prometheus/run_metrics.hpp>

namespace trainhook::prometheus {

const std::vector<double>& step_buckets() {
  static const std::vector<double> buckets{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                           0.5,   1,      2.5,   5,    10,    30,   60};
  return buckets;
}

RunMetrics::RunMetrics(std::string run_name, std::string job, support::Logger log)
    : labels_{{"run_name", std::move(run_name)}, {"job", std::move(job)}},
      log_(std::move(log)),
      registry_(std::make_shared<::prometheus::Registry>()) {
  auto counter = [&](const std::string& name, const std::string& help) -> ::prometheus::Counter& {
    names_.reserve(name);
    return ::prometheus::BuildCounter().Name(name).Help(help).Register(*registry_).Add(labels_);
  };
  steps_ = &counter("trainhook_steps_total", "Optimizer steps taken by this process");
  samples_ = &counter("trainhook_samples_total",
                      "Training samples: steps x per-device batch x gradient accumulation x world size");
  tokens_ = &counter("trainhook_tokens_total",
                     "Input tokens seen (num_input_tokens_seen; stays 0 unless the trainer counts them)");
  last_step_ = &gauge("trainhook_last_step_timestamp_seconds", "Unix time of the last optimizer step's end");
  names_.reserve("trainhook_step_duration_seconds");
  step_duration_ = &::prometheus::BuildHistogram()
                        .Name("trainhook_step_duration_seconds")
                        .Help("Seconds from step begin to step end")
                        .Register(*registry_)
                        .Add(labels_, step_buckets());
  up_ = &gauge("trainhook_up", "1 while the run trains, 0 after train end or a failure");
  names_.reserve("trainhook_last_success_timestamp_seconds");
  up_->Set(1);
}

::prometheus::Gauge& RunMetrics::gauge(const std::string& name, const std::string& help) {
  names_.reserve(name);
  return ::prometheus::BuildGauge().Name(name).Help(help).Register(*registry_).Add(labels_);
}

void RunMetrics::set_logged(std::string_view key, double value) {
  if (next_ < record_keys_.size() && record_keys_[next_].first == key) {
    if (::prometheus::Gauge* g = record_keys_[next_++].second) g->Set(value);
    return;
  }
  ::prometheus::Gauge* g = gauge_for(key);
  if (next_ < kMaxLoggedGauges) {
    record_keys_.resize(next_);
    record_keys_.emplace_back(std::string(key), g);
    ++next_;
  }
  if (g != nullptr) g->Set(value);
}

::prometheus::Gauge* RunMetrics::gauge_for(std::string_view key) {
  const MetricNames::Lookup found = names_.lookup(key);
  if (found.name == nullptr) {
    if (found.first_refusal)
      support::log_to(log_, LogLevel::warn,
                      "the logged key '" + std::string(key) + "' maps to the metric " + metric_name_for(key) +
                          ", which " +
                          (found.taken_by.empty() ? std::string("the plugin itself exports")
                                                  : "the key '" + found.taken_by + "' has") +
                          "; its values are not exported");
    return nullptr;
  }
  auto it = logged_.find(*found.name);
  if (it == logged_.end() && logged_.size() >= kMaxLoggedGauges) {
    if (!warned_full_)
      support::log_to(log_, LogLevel::warn,
                      "the run logged more than " + std::to_string(kMaxLoggedGauges) +
                          " different keys; from '" + std::string(key) + "' on, new keys are not exported");
    warned_full_ = true;
    return nullptr;
  }
  if (it == logged_.end()) {
    ::prometheus::Gauge& g = ::prometheus::BuildGauge()
                                 .Name(*found.name)
                                 .Help("Last logged value of '" + std::string(key) + "'")
                                 .Register(*registry_)
                                 .Add(labels_);
    it = logged_.emplace(*found.name, &g).first;
  }
  return it->second;
}

void RunMetrics::step_begin(std::chrono::steady_clock::time_point now) {
  if (in_step_) return;  // the first begin after a step end starts the step
  step_began_ = now;
  in_step_ = true;
}

void RunMetrics::step_end(std::chrono::steady_clock::time_point now, double unix_now, int64_t samples,
                          int64_t tokens_seen) {
  steps_->Increment();
  if (samples > 0) samples_->Increment(static_cast<double>(samples));
  if (tokens_seen > tokens_seen_) {
    tokens_->Increment(static_cast<double>(tokens_seen - tokens_seen_));
    tokens_seen_ = tokens_seen;
  }
  last_step_->Set(unix_now);
  if (in_step_) step_duration_->Observe(std::chrono::duration<double>(now - step_began_).count());
  in_step_ = false;
}

void RunMetrics::set_up(bool up) { up_->Set(up ? 1 : 0); }

void RunMetrics::set_last_success(double unix_now) {
  ::prometheus::BuildGauge()
      .Name("trainhook_last_success_timestamp_seconds")
      .Help("Unix time at which the run finished training (batch-job convention)")
      .Register(*registry_)
      .Add(labels_)
      .Set(unix_now);
}

std::vector<::prometheus::MetricFamily> ScrapeView::Collect() const {
  const bool final = final_.load();
  std::vector<::prometheus::MetricFamily> out = registry_->Collect();
  if (final) {
    std::lock_guard<std::mutex> lock(mu_);
    ++final_scrapes_;
    cv_.notify_all();
  }
  return out;
}

}  // namespace trainhook::prometheus
