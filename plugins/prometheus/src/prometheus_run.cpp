#include <trainhook/prometheus/prometheus_run.hpp>

#include <trainhook/prometheus/push_url.hpp>
#include <trainhook/support/clock.hpp>
#include <trainhook/support/end_of_run_summary.hpp>

#include <prometheus/text_serializer.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <exception>

namespace trainhook::prometheus {
namespace {

std::unique_ptr<MetricsServer> start_server(const std::string& listen, std::shared_ptr<ScrapeView> view) {
  try {
    return std::make_unique<MetricsServer>(
        listen, [view] { return ::prometheus::TextSerializer().Serialize(view->Collect()); });
  } catch (const std::exception& e) {
    throw ConfigError("cannot serve /metrics on " + listen +
                      " (plugin_config prometheus.listen): " + e.what() +
                      "; is the port taken by another process? Choose a free one with "
                      "--plugin_config prometheus.listen=HOST:PORT");
  }
}

}  // namespace

PrometheusRun::PrometheusRun(const PrometheusOptions& options, const std::string& run_name,
                             trainhook::Host host)
    : host_(host),
      linger_(static_cast<int64_t>(options.linger() * 1000)),
      listen_(options.listen()),
      metrics_(run_name, options.job(), support::host_logger(host)),
      view_(std::make_shared<ScrapeView>(metrics_.registry())),
      server_(start_server(options.listen(), view_)) {
  if (!options.pushgateway_url().empty()) {
    push_url_ = push_url(options.pushgateway_url(), options.job(), run_name);
    shown_url_ = redact_url(push_url_);
  }
}

PrometheusRun::~PrometheusRun() = default;

support::WorkerOptions PrometheusRun::worker_options() const {
  support::WorkerOptions o;
  o.thread_name = "th-prometheus";
  o.capacity = 64;  // requests only; a full queue means a push is pending anyway
  o.max_batch = 64;
  return o;
}

std::optional<PushRequest> PrometheusRun::end_mark(support::RunOutcome outcome) {
  metrics_.set_up(false);
  if (outcome == support::RunOutcome::finished) metrics_.set_last_success(support::unix_seconds());
  view_->mark_final();
  if (!pushing()) return std::nullopt;
  return PushRequest{true};
}

support::HttpResponse PrometheusRun::push_once(support::WorkerContext& ctx) {
  if (!http_)
    http_ = std::make_unique<support::HttpClient>(support::HttpClientOptions()
                                                      .timeout(std::chrono::seconds(10))
                                                      .connect_timeout(std::chrono::seconds(5))
                                                      .abort_flag(ctx.abort_flag()));
  support::HttpRequest request;
  request.method = "PUT";
  request.url = push_url_;
  request.body = ::prometheus::TextSerializer().Serialize(metrics_.registry()->Collect());
  request.header("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
  return http_->perform(request);
}

support::BatchResult PrometheusRun::deliver(std::vector<PushRequest>& batch, support::WorkerContext& ctx) {
  push_queued_ = false;  // what is asked from now on is the next push
  bool final = false;
  for (const PushRequest& r : batch) final = final || r.final;
  // The final push is the one a batch job's alerts read: a few tries. A
  // periodic one is not retried: the next interval pushes newer values.
  const int attempts = final ? 3 : 1;
  std::string error;
  for (int attempt = 0; attempt < attempts; ++attempt) {
    if (attempt > 0 && !ctx.sleep_for(std::chrono::seconds(1))) break;
    const support::HttpResponse r = push_once(ctx);
    if (r.ok()) {
      ++pushes_ok_;
      return support::BatchResult{batch.size(), 0, std::chrono::milliseconds(-1)};
    }
    error = r.describe();
    if (r.aborted) break;
  }
  ++pushes_failed_;
  if (error != last_error_)  // one warning per distinct failure, every one counted
    host_.warn("push to the Pushgateway " + shown_url_ + " failed: " + error);
  last_error_ = error;
  return support::BatchResult{0, batch.size(), std::chrono::milliseconds(-1)};
}

void PrometheusRun::report(support::DeliveryResult<PushRequest> result) {
  http_.reset();  // its abort flag was the ended worker's
  const char* how = support::run_outcome_name(result.end.outcome);
  const std::string reason = result.end.reason();
  std::string line = std::string("run ") + how + (reason.empty() ? "" : " (" + reason + ")") +
                     ", trainhook_up 0; served /metrics on port " + std::to_string(port()) + " (" + listen_ +
                     ")";
  if (pushing()) {
    line += "; " + std::to_string(pushes_ok_) + " of " + std::to_string(pushes_ok_ + pushes_failed_) +
            " pushes to " + shown_url_ + " succeeded";
    if (!result.undelivered.empty() || !result.drained)
      line +=
          " (the final push did not finish within " + std::to_string(flush_timeout().count() / 1000) + " s)";
    if (pushes_failed_ > 0) line += "; last error: " + last_error_;
  }
  if (pushes_failed_ > 0 || !result.drained)
    host_.warn(line);
  else
    host_.info(line);
  if (linger_.count() > 0 && linger_at_end_) {
    const bool read = view_->wait_final_scrape(linger_, [this] { return host_.end_requested(); });
    if (!read)
      host_.info("no scrape read the final values within plugin_config prometheus.linger (" +
                 nlohmann::json(linger_.count() / 1000.0).dump() + " s)");
  }
}

}  // namespace trainhook::prometheus
