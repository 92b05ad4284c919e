#include <trainhook/prometheus/prometheus_callback.hpp>

#include <trainhook/prometheus/push_url.hpp>
#include <trainhook/support/clock.hpp>
#include <trainhook/support/log_values.hpp>

#include <nlohmann/json.hpp>

#include <cmath>

namespace trainhook::prometheus {

PrometheusCallback::PrometheusCallback(trainhook::Setup& setup)
    : Integration(setup.host()), options_(PrometheusOptions::from_json(setup.config_json())) {}

std::unique_ptr<support::Delivery<PushRequest>> PrometheusCallback::open_run(trainhook::Event& e) {
  // The run_name (args.run_name, else output_dir, as in HF) and the job are
  // the only label values: no other argument reaches a label.
  std::string run_name = host_.run_name();
  if (run_name.empty()) run_name = host_.output_dir();
  auto run = std::make_unique<PrometheusRun>(options_, run_name, host_);
  samples_per_step_ = host_.total_train_batch_size(e.state());
  run->metrics().tokens_baseline(e.state().num_input_tokens_seen);
  // on_train_end runs the final push (up to 15 s) and the linger within the
  // trainer's callback_end_timeout; past it the trainer names this plugin
  // as overrunning and ends the run.
  const double end_timeout = host_.training_arg<double>("callback_end_timeout", 0);
  if (options_.linger() > 0 && end_timeout > 0 && options_.linger() + 15 > end_timeout)
    host_.warn("plugin_config prometheus.linger (" + nlohmann::json(options_.linger()).dump() +
               " s) plus up to 15 s for the final push exceeds --callback_end_timeout (" +
               (end_timeout == std::floor(end_timeout) ? std::to_string(static_cast<int64_t>(end_timeout))
                                                       : nlohmann::json(end_timeout).dump()) +
               " s): the trainer may end the run before the exporter has lingered; raise "
               "--callback_end_timeout");
  host_.info("serving /metrics on port " + std::to_string(run->port()) + " (" + options_.listen() + ")" +
             (options_.pushgateway_url().empty()
                  ? std::string()
                  : ", pushing every " + nlohmann::json(options_.push_interval()).dump() + " s to " +
                        redact_url(options_.pushgateway_url())));
  return run;
}

void PrometheusCallback::run_began(trainhook::Event&, bool) {
  if (run().claim_push()) {
    enqueue(PushRequest{});
    next_push_ = std::chrono::steady_clock::now() +
                 std::chrono::milliseconds(static_cast<int64_t>(options_.push_interval() * 1000));
  }
}

void PrometheusCallback::on_step_begin(trainhook::Event& e) {
  if (running()) run().metrics().step_begin(e.time());
}

void PrometheusCallback::on_step_end(trainhook::Event& e) {
  if (!running()) return;
  const auto now = e.time();
  run().metrics().step_end(now, support::unix_seconds_at(now), samples_per_step_, e.state().num_input_tokens_seen);
  if (now >= next_push_ && run().pushing()) {
    if (run().claim_push()) enqueue(PushRequest{});  // else one is queued already
    next_push_ = now + std::chrono::milliseconds(static_cast<int64_t>(options_.push_interval() * 1000));
  }
}

void PrometheusCallback::set_values(trainhook::Event& e) {
  if (!running()) return;  // after train end (the final evaluate()): the exporter is gone
  RunMetrics& metrics = run().metrics();
  metrics.begin_record();
  support::for_each_number(e.values(),
                           [&](std::string_view key, double value) { metrics.set_logged(key, value); });
}

void PrometheusCallback::on_log(trainhook::Event& e) { set_values(e); }
void PrometheusCallback::on_evaluate(trainhook::Event& e) { set_values(e); }

// The base then ends the run: finished (killed after a first signal) at
// train end, failed (killed for a second signal) at on_exception: up 0, final push.
void PrometheusCallback::run_ending(trainhook::Event&, const support::RunEnd&) { run().linger_at_end(); }
void PrometheusCallback::run_failing(trainhook::Event&, const support::RunEnd&) { run().linger_at_end(); }

}  // namespace trainhook::prometheus
