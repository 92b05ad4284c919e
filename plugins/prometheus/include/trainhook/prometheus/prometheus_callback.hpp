// The "prometheus" integration (report_to prometheus): the world-zero process
// serves the run's metrics on /metrics (prometheus_run.hpp) from train begin
// to train end, and optionally pushes them to a Pushgateway every
// push_interval seconds and once at the end. trainhook_up drops to 0 at train
// end and at EXCEPTION (ABI 1.3: the integration base ends the run failed, or
// killed for a second signal), whose final push carries it.
//
// The training thread only sets metric values (atomics and a few uncontended
// locks inside prometheus-cpp); scrapes are served on the metrics server's
// threads (metrics_server.hpp) and pushes on the base's worker thread.
#pragma once

#include <trainhook/prometheus/prometheus_options.hpp>
#include <trainhook/prometheus/prometheus_run.hpp>

#include <trainhook/plugin.hpp>
#include <trainhook/support/integration.hpp>

#include <chrono>
#include <cstdint>
#include <memory>

namespace trainhook::prometheus {

class PrometheusCallback final : public support::Integration<PushRequest> {
 public:
  // It only observes its step events too: it times steps with the event's own
  // time (Event::time, ABI 1.7), not with the clock when it is called, so an
  // isolated exporter measures the training thread without a round trip.
  static constexpr uint64_t observed_events = Integration::observed_events | TH_EVENT_BIT(TH_EVENT_STEP_BEGIN) |
                                              TH_EVENT_BIT(TH_EVENT_STEP_END);

  explicit PrometheusCallback(trainhook::Setup& setup);

  void on_step_begin(trainhook::Event& e) override;
  void on_step_end(trainhook::Event& e) override;
  void on_log(trainhook::Event& e) override;
  void on_evaluate(trainhook::Event& e) override;

 private:
  std::unique_ptr<support::Delivery<PushRequest>> open_run(trainhook::Event& e) override;
  // The base's sequence: the first push at train begin; the linger before the
  // run ends (up 0, final push) at train end and at on_exception.
  void run_began(trainhook::Event& e, bool opened) override;
  void run_ending(trainhook::Event& e, const support::RunEnd& end) override;
  void run_failing(trainhook::Event& e, const support::RunEnd& end) override;
  PrometheusRun& run() { return static_cast<PrometheusRun&>(delivery()); }
  void set_values(trainhook::Event& e);

  PrometheusOptions options_;
  int64_t samples_per_step_ = 0;  // per-device batch x accumulation x world size
  std::chrono::steady_clock::time_point next_push_{};
};

}  // namespace trainhook::prometheus
