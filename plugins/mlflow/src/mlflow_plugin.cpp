// The "mlflow" callback (kind integration): HF MLflowCallback semantics over
// MLflow's REST API. The training thread only validates settings, builds the
// run plan and enqueues records; a support::Worker thread delivers them, its
// HTTP requests on a support::RequestThread (see sender.hpp for delivery, the
// memory bound, spooling and duplicate avoidance).
#include <trainhook/mlflow/config.hpp>
#include <trainhook/mlflow/params.hpp>
#include <trainhook/mlflow/record.hpp>
#include <trainhook/mlflow/sender.hpp>
#include <trainhook/plugin.hpp>
#include <trainhook/strings.hpp>
#include <trainhook/support/env.hpp>
#include <trainhook/support/log.hpp>
#include <trainhook/support/worker.hpp>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>
#include <string>

namespace trainhook::mlflow {
namespace {

// Records the sender takes from the worker's queue per poll during a request.
constexpr size_t kTakeQueued = 1000;

using strings::join;

class MlflowCallback final : public Callback {
 public:
  explicit MlflowCallback(Setup& setup) : host_(setup.host()), config_(read_config(setup.config_json())) {
    support::Settings s(setup.config_json(), "mlflow");
    if (auto unknown = s.unknown_keys(known_config_keys()); !unknown.empty())
      host_.warn("unknown plugin_config keys for mlflow: " + join(unknown) +
                 " (known: " + join(known_config_keys()) + ")");
    if (config_.disabled) host_.info("DISABLE_MLFLOW_INTEGRATION is set: nothing is logged to MLflow");
  }

  ~MlflowCallback() override {
    // No on_train_end: training failed (or was aborted); close the run as FAILED.
    if (worker_) {
      try {
        finish("FAILED");
      } catch (...) {
      }
    }
  }

  void on_train_begin(Event& e) override {
    if (config_.disabled || worker_ || !e.is_world_process_zero()) return;
    RunPlan plan;
    plan.start_time_ms = now_ms();
    plan.run_name = !config_.run_name.empty() ? config_.run_name : host_.run_name();
    if (config_.run_id.empty()) {
      if (!plan.run_name.empty()) plan.tags["mlflow.runName"] = plan.run_name;
      plan.tags["mlflow.user"] = support::get_env("USER").value_or("trainhook");
      plan.tags["mlflow.source.name"] = "trainhook";
      plan.tags["mlflow.source.type"] = "LOCAL";
      if (!config_.parent_run_id.empty()) plan.tags["mlflow.parentRunId"] = config_.parent_run_id;
      for (const auto& [k, v] : config_.tags) plan.tags[k] = v;
    }
    ParamSet ps;
    try {
      ps = build_params(host_.training_args_json(), config_.flatten_params, config_.max_param_value_length,
                        config_.max_log_params);
    } catch (const std::exception& ex) {
      host_.warn(std::string("training arguments are not a JSON object; no params logged: ") + ex.what());
    }
    if (!ps.too_long.empty())
      host_.warn("params dropped because their values exceed MLflow's limit of " +
                 std::to_string(config_.max_param_value_length) + " characters: " + join(ps.too_long));
    if (ps.capped > 0)
      host_.warn(std::to_string(ps.capped) + " params not logged because of MLFLOW_MAX_LOG_PARAMS=" +
                 std::to_string(config_.max_log_params));
    if (!ps.secrets.empty())
      host_.debug("params withheld because they look like secrets: " + join(ps.secrets));
    plan.params = std::move(ps.params);

    std::string spool_dir = config_.spool_dir;
    if (spool_dir.empty()) spool_dir = (std::filesystem::path(host_.output_dir()) / "mlflow_spool").string();
    sender_ = std::make_unique<Sender>(config_, std::move(plan), spool_dir, support::host_logger(host_));
    Sender* sender = sender_.get();
    worker_ = std::make_unique<support::Worker<Record>>(
        [sender](std::vector<Record>& batch, support::WorkerContext& ctx) {
          return sender->handle(batch, ctx);
        });
    // The sender takes in what is queued while a request is in flight (on the
    // worker thread, which stop() joins before worker_ goes away).
    support::Worker<Record>* worker = worker_.get();
    sender_->take_queued_from([worker] { return worker->take_queued(kTakeQueued); });
  }

  void on_log(Event& e) override {
    if (!worker_) return;
    // Strictly increasing per log: MLflow keeps one row per (key, timestamp,
    // step, value), so two logs of one value at one step within the same
    // millisecond (epoch in a training log and the eval log after it) would
    // otherwise collapse into one row.
    const int64_t ts = std::max(now_ms(), last_log_ms_ + 1);
    last_log_ms_ = ts;
    const int64_t step = e.state().global_step;
    Values v = e.values();
    for (uint32_t i = 0; i < v.size(); ++i)
      worker_->enqueue(Record::metric(sanitize_metric_name(std::string(v.key(i))), v.value(i), ts, step));
    for (uint32_t i = 0; i < v.string_size(); ++i) {
      std::string key(v.string_key(i));
      if (warned_string_keys_.insert(key).second)
        host_.warn("'" + key + "' has a text value; MLflow metrics are numbers only, so it is not logged");
    }
  }

  void on_save(Event& e) override {
    if (!worker_ || !config_.log_artifacts || e.checkpoint_dir().empty()) return;
    worker_->enqueue(Record::artifact_dir(std::string(e.checkpoint_dir()), e.state().global_step));
  }

  void on_train_end(Event&) override {
    if (worker_) finish("FINISHED");
  }

 private:
  void finish(const std::string& status) {
    worker_->enqueue(Record::end_run(status, now_ms()));
    const bool drained = worker_->flush(config_.flush_timeout);
    std::vector<Record> rest = worker_->stop();
    support::WorkerStats st = worker_->stats();
    uint64_t spilled = 0;
    std::string spill_error;
    try {
      spilled = sender_->spill_everything(std::move(rest));
    } catch (const std::exception& ex) {
      spill_error = ex.what();
    }
    const std::string run = sender_->run_ready() ? sender_->run_id() : std::string("(not created)");
    if (drained) {
      host_.info("MLflow run " + run + " " + status + ": " + std::to_string(st.delivered) +
                 " records delivered");
    } else {
      std::string msg = "MLflow: " + std::to_string(sender_->spooled()) + " records not delivered within " +
                        std::to_string(config_.flush_timeout.count() / 1000.0).substr(0, 5) + " s (" +
                        std::to_string(st.delivered) + " delivered); ";
      if (!spill_error.empty()) {
        msg += std::to_string(spilled) + " could not be spooled either: " + spill_error;
      } else {
        msg += "spooled in " + sender_->spool_path() + "; ";
        msg += sender_->run_ready() ? "a later run with MLFLOW_RUN_ID=" + sender_->run_id() + " delivers them"
                                    : "the next run with this output_dir delivers them";
      }
      host_.warn(msg);
    }
    if (st.failed > 0)
      host_.warn("MLflow: " + std::to_string(st.failed) +
                 " records were rejected by the server (see errors above)");
    if (st.dropped > 0)
      host_.warn("MLflow: " + std::to_string(st.dropped) +
                 " records dropped because the in-memory queue was full");
    worker_.reset();
    sender_.reset();
  }

  Host host_;
  MlflowConfig config_;
  std::unique_ptr<Sender> sender_;
  std::unique_ptr<support::Worker<Record>> worker_;  // destroyed before sender_ (declared after)
  std::set<std::string> warned_string_keys_;
  int64_t last_log_ms_ = 0;  // timestamp of the previous on_log's metrics
};

}  // namespace
}  // namespace trainhook::mlflow

TRAINHOOK_PLUGIN("mlflow", "1.0.0",
                 trainhook::callback<trainhook::mlflow::MlflowCallback>(
                     "mlflow", "1.0.0", trainhook::Kind::integration,
                     "MLflow tracking over REST (async, retries, disk spool; MLFLOW_TRACKING_URI)"))
