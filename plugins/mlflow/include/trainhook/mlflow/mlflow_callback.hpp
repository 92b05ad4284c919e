// The "mlflow" callback (kind integration): HF MLflowCallback semantics over
// MLflow's REST API. The training thread only validates settings, builds the
// run plan and enqueues records; the support::Integration base owns the
// worker and the run's begin and end (FINISHED at train end, KILLED there after a
// stop signal, FAILED at on_exception with the tag trainhook.failure =
// "<kind>: <message>", FAILED when destroyed without either); the Sender delivers on the worker thread, its
// HTTP requests on a support::RequestThread (see sender.hpp for delivery, the memory bound, spooling and
// duplicate avoidance).
#pragma once

#include <trainhook/mlflow/mlflow_options.hpp>
#include <trainhook/mlflow/record.hpp>

#include <trainhook/plugin.hpp>
#include <trainhook/support/integration.hpp>

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trainhook::mlflow {

class MlflowCallback final : public support::Integration<Record> {
 public:
  explicit MlflowCallback(trainhook::Setup& setup);

  void on_log(trainhook::Event& e) override;
  void on_save(trainhook::Event& e) override;

 private:
  std::unique_ptr<support::Delivery<Record>> open_run(trainhook::Event& e) override;
  // The MLflow name of a logged key, sanitised once per key: a run logs the
  // same few keys every step (up to kMaxCachedNames of them are kept).
  std::string metric_name(std::string_view key);

  MlflowOptions options_;
  std::vector<std::pair<std::string, std::string>> metric_names_;  // logged key -> MLflow name
  std::vector<Record> log_records_;  // one log's metrics, queued together (reused)
  std::set<std::string> warned_string_keys_;
  int64_t last_log_ms_ = 0;  // timestamp of the previous on_log's metrics
};

}  // namespace trainhook::mlflow
