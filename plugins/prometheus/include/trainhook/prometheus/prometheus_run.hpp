// One run's exporter and pushes, as the integration base's Delivery: it owns
// the run's metrics (run_metrics.hpp), the /metrics endpoint
// (metrics_server.hpp: its own threads serve every scrape, the training
// thread never does) and, with a Pushgateway, the pushes, which run on the
// base's worker thread. A PushRequest record only asks for a push: the body is the
// registry's state when the push is sent, so requests queued while a push is
// in flight coalesce into one.
//
// Pushes are PUTs of the text format (0.0.4) replacing the group
// job=<job>,run_name=<run_name> (push_url.hpp). prometheus::Gateway is not
// used: its requests have no timeout and cannot be interrupted, so a gateway
// that never answers would hang the end of the run; support::HttpClient has
// both (and the worker's stop flag aborts a request in flight).
#pragma once

#include <trainhook/prometheus/metrics_server.hpp>
#include <trainhook/prometheus/prometheus_options.hpp>
#include <trainhook/prometheus/run_metrics.hpp>

#include <trainhook/plugin.hpp>
#include <trainhook/support/http_client.hpp>
#include <trainhook/support/integration.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace trainhook::prometheus {

struct PushRequest {
  bool final = false;  // the push that closes the run (retried a few times)
};

class PrometheusRun final : public support::Delivery<PushRequest> {
 public:
  // Starts the exporter on options.listen(); throws trainhook::ConfigError
  // naming the address and the key when it cannot listen there.
  PrometheusRun(const PrometheusOptions& options, const std::string& run_name, trainhook::Host host);
  ~PrometheusRun() override;

  RunMetrics& metrics() noexcept { return metrics_; }
  bool pushing() const noexcept { return !push_url_.empty(); }
  // Training thread: true when a periodic push should be queued, i.e. none is
  // queued yet (deliver() takes the claim back), so the queue never holds
  // more than one periodic request and the final one always fits.
  // Training thread: the run ends at train end or EXCEPTION, where `linger`
  // applies; a run closed because the callback is being destroyed (the
  // trainer is tearing down) does not wait.
  void linger_at_end() noexcept { linger_at_end_ = true; }
  bool claim_push() noexcept { return pushing() && !push_queued_.exchange(true); }
  // The port the exporter listens on.
  int port() const noexcept { return server_->port(); }

  // Training thread, at the end of the run (finish() calls end_mark()): sets
  // up = 0 (and the last-success time on a finished run); the final push.
  std::optional<PushRequest> end_mark(support::RunOutcome outcome) override;
  support::BatchResult deliver(std::vector<PushRequest>& batch, support::WorkerContext& ctx) override;
  // Training thread, after the pushes ended: the end line, then, with
  // `linger` (and linger_at_end()), waits until one scrape has read the
  // final values.
  void report(support::DeliveryResult<PushRequest> result) override;
  std::chrono::milliseconds flush_timeout() const override { return std::chrono::seconds(15); }
  support::WorkerOptions worker_options() const override;

 private:
  support::HttpResponse push_once(support::WorkerContext& ctx);

  trainhook::Host host_;
  std::chrono::milliseconds linger_;
  std::string listen_;
  RunMetrics metrics_;
  std::shared_ptr<ScrapeView> view_;
  std::unique_ptr<MetricsServer> server_;
  std::string push_url_;                       // empty: no Pushgateway
  std::string shown_url_;                      // push_url_ without credentials
  std::unique_ptr<support::HttpClient> http_;  // made on the worker thread (one client per thread)
  std::atomic<bool> push_queued_{false};
  bool linger_at_end_ = false;
  // The worker thread's until report() (which runs after the worker ended).
  uint64_t pushes_ok_ = 0;
  uint64_t pushes_failed_ = 0;
  std::string last_error_;
};

}  // namespace trainhook::prometheus
