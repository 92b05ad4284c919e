#include <trainhook/mlflow/mlflow_callback.hpp>

#include <trainhook/mlflow/params.hpp>
#include <trainhook/mlflow/sender.hpp>
#include <trainhook/strings.hpp>
#include <trainhook/support/clock.hpp>
#include <trainhook/support/end_of_run_summary.hpp>
#include <trainhook/support/env.hpp>
#include <trainhook/support/log.hpp>
#include <trainhook/support/log_values.hpp>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace trainhook::mlflow {
namespace {

// Records the sender takes from the worker's queue per poll during a request.
constexpr size_t kTakeQueued = 1000;

using strings::join;

// How the mlflow run is delivered (the Sender, on the worker thread) and
// reported (here, after the worker stopped: what was spooled for later).
class MlflowDelivery final : public support::Delivery<Record> {
 public:
  MlflowDelivery(trainhook::Host host, MlflowOptions options, std::unique_ptr<Sender> sender)
      : host_(host), options_(std::move(options)), sender_(std::move(sender)) {}

  support::BatchResult deliver(std::vector<Record>& batch, support::WorkerContext& ctx) override {
    return sender_->handle(batch, ctx);
  }
  // FAILED with the failure as kFailureTag (on_exception), KILLED after a
  // signal (a second signal's on_exception also tags why), else FINISHED.
  std::optional<Record> end_mark_with(const support::RunEnd& end) override {
    return Record::end_run(support::run_status_name(end.outcome), support::unix_millis(),
                           end.failure_kind.empty() ? std::string() : cut_tag_value(end.reason()));
  }
  std::chrono::milliseconds flush_timeout() const override { return options_.flush_timeout(); }
  // Batched wake-ups: logging every step, a wake-up and a log-batch request
  // per record keep the worker and the server busy beside the training
  // thread. The worker comes by every 200 ms, or at 500 queued records (half
  // of a request's 1000 metrics), and sends what is queued in one request.
  // The end of the run takes what is queued at once.
  support::WorkerOptions worker_options() const override {
    support::WorkerOptions o;
    o.thread_name = "th-mlflow";
    o.wake_at = 500;
    o.wake_interval = std::chrono::milliseconds(200);
    return o;
  }

  void report(support::DeliveryResult<Record> r) override {
    uint64_t spilled = 0;
    std::string spill_error;
    try {
      spilled = sender_->spill_everything(std::move(r.undelivered));
    } catch (const std::exception& ex) {
      spill_error = ex.what();
    }
    // The one end-of-run line (support/end_of_run_summary.hpp): what reached
    // the server, what waits in the spool and how it gets there later.
    support::EndOfRunSummary s;
    s.integration = "MLflow";
    s.status = support::run_status_name(r.end.outcome);
    s.failure = support::describe_run_end(r.end);
    s.delivered = r.stats.delivered;
    s.spooled = sender_->spooled();
    s.spool_path = sender_->spool_path();
    if (sender_->run_ready()) {
      s.run = sender_->run_id();
      s.resend = "a later run with MLFLOW_RUN_ID=" + sender_->run_id() + " and the same " + spool_setting() +
                 " delivers them";
    } else {
      s.no_run_reason =
          !sender_->last_problem().empty()
              ? sender_->last_problem()
              : (r.interrupted
                     ? std::string("the run was ended by a signal before the server answered")
                     : "the server did not answer within flush_timeout " + seconds(options_.flush_timeout()));
      s.resend = "the next run with the same " + spool_setting() + " delivers them";
    }
    if (!r.drained && s.spooled > 0)
      s.resend += r.interrupted
                      ? " (delivery was cut short by a signal)"
                      : " (not delivered within flush_timeout " + seconds(options_.flush_timeout()) + ")";
    s.lost = r.stats.failed + r.stats.dropped + (spill_error.empty() ? 0 : spilled);
    if (r.stats.failed > 0)
      s.lost_reason = std::to_string(r.stats.failed) + " rejected by the server, see errors above";
    if (r.stats.dropped > 0)
      s.lost_reason += (s.lost_reason.empty() ? "" : "; ") +
                       support::queue_full_reason(r.stats.dropped, worker_options().capacity);
    if (!spill_error.empty())
      s.lost_reason +=
          (s.lost_reason.empty() ? "" : "; ") + std::string("could not be spooled: ") + spill_error;
    support::log_end_of_run(support::host_logger(host_), s);
  }

 private:
  static std::string seconds(std::chrono::milliseconds ms) {
    return std::to_string(ms.count() / 1000.0).substr(0, 5) + " s";
  }
  // The setting that names the spool folder, as the user would change it.
  std::string spool_setting() const {
    return options_.spool_dir().empty() ? std::string("output_dir")
                                        : "spool_dir (" + options_.spool_dir() + ")";
  }

  trainhook::Host host_;
  MlflowOptions options_;
  std::unique_ptr<Sender> sender_;
};

}  // namespace

MlflowCallback::MlflowCallback(trainhook::Setup& setup)
    : Integration(setup.host()), options_(MlflowOptions::from_json(setup.config_json())) {
  if (options_.disabled()) host_.info("DISABLE_MLFLOW_INTEGRATION is set: nothing is logged to MLflow");
  // Without artifacts on_save does nothing: observe-only too, so a save does
  // not wait for an isolated MLflow logger. With them it queues the folder's
  // upload and is waited for, so it has the folder before rotation may take it.
  if (options_.disabled() || !options_.log_artifacts())
    setup.host().set_observe_only(TH_EVENT_BIT(TH_EVENT_LOG) | TH_EVENT_BIT(TH_EVENT_SAVE));
}

std::unique_ptr<support::Delivery<Record>> MlflowCallback::open_run(trainhook::Event&) {
  if (options_.disabled()) return nullptr;
  RunPlan plan;
  plan.start_time_ms = support::unix_millis();
  plan.run_name = !options_.run_name().empty() ? options_.run_name() : host_.run_name();
  if (options_.run_id().empty()) {
    if (!plan.run_name.empty()) plan.tags["mlflow.runName"] = plan.run_name;
    plan.tags["mlflow.user"] = support::get_env("USER").value_or("trainhook");
    plan.tags["mlflow.source.name"] = "trainhook";
    plan.tags["mlflow.source.type"] = "LOCAL";
    if (!options_.parent_run_id().empty()) plan.tags["mlflow.parentRunId"] = options_.parent_run_id();
    for (const auto& [k, v] : options_.tags()) plan.tags[k] = v;
  }
  ParamSet ps;
  try {
    ps = build_params(host_.training_args_json(), options_.flatten_params(),
                      options_.max_param_value_length(), options_.max_log_params());
  } catch (const std::exception& ex) {
    host_.warn(std::string("training arguments are not a JSON object; no params logged: ") + ex.what());
  }
  if (!ps.too_long.empty())
    host_.warn("params dropped because their values exceed MLflow's limit of " +
               std::to_string(options_.max_param_value_length()) + " characters: " + join(ps.too_long));
  if (ps.capped > 0)
    host_.warn(std::to_string(ps.capped) + " params not logged because of MLFLOW_MAX_LOG_PARAMS=" +
               std::to_string(options_.max_log_params()));
  if (!ps.secrets.empty()) host_.debug("params withheld because they look like secrets: " + join(ps.secrets));
  plan.params = std::move(ps.params);

  std::string spool_dir = options_.spool_dir();
  if (spool_dir.empty()) spool_dir = (std::filesystem::path(host_.output_dir()) / "mlflow_spool").string();
  auto sender = std::make_unique<Sender>(options_, std::move(plan), spool_dir, support::host_logger(host_));
  // The sender takes in what is queued while a request is in flight (on the
  // worker thread, which finish() joins before the delivery goes away).
  sender->take_queued_from([take = queued_taker()] { return take(kTakeQueued); });
  return std::make_unique<MlflowDelivery>(host_, options_, std::move(sender));
}

void MlflowCallback::on_log(trainhook::Event& e) {
  if (!running()) return;
  // Strictly increasing per log: MLflow keeps one row per (key, timestamp,
  // step, value), so two logs of one value at one step within the same
  // millisecond (epoch in a training log and the eval log after it) would
  // otherwise collapse into one row.
  const int64_t ts = std::max(support::unix_millis(), last_log_ms_ + 1);
  last_log_ms_ = ts;
  const int64_t step = e.state().global_step;
  log_records_.clear();
  support::for_each_value(
      e.values(),
      [&](std::string_view key, double value) {
        log_records_.push_back(Record::metric(metric_name(key), value, ts, step));
      },
      [&](std::string_view key, std::string_view) {
        if (warned_string_keys_.insert(std::string(key)).second)
          host_.warn("'" + std::string(key) +
                     "' has a text value; MLflow metrics are numbers only, so it is not logged");
      });
  enqueue_all(log_records_);
}

std::string MlflowCallback::metric_name(std::string_view key) {
  constexpr size_t kMaxCachedNames = 256;
  for (const auto& [logged, name] : metric_names_)
    if (logged == key) return name;
  std::string name = sanitize_metric_name(std::string(key));
  if (metric_names_.size() < kMaxCachedNames) metric_names_.emplace_back(std::string(key), name);
  return name;
}

void MlflowCallback::on_save(trainhook::Event& e) {
  if (!running() || !options_.log_artifacts() || e.checkpoint_dir().empty()) return;
  enqueue(Record::artifact_dir(std::string(e.checkpoint_dir()), e.state().global_step));
}

}  // namespace trainhook::mlflow
