// Thin typed calls of the MLflow REST API 2.0 (/api/2.0/mlflow/...), one
// attempt each: retries and ordering are the sender's job. Each call returns
// the raw HttpResponse plus the parsed JSON when the answer was 2xx.
#pragma once

#include <trainhook/mlflow/record.hpp>
#include <trainhook/support/http_client.hpp>
#include <trainhook/support/request_thread.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace trainhook::mlflow {

struct RestResult {
  support::HttpResponse http;
  nlohmann::json json;  // parsed body of a 2xx answer (null otherwise)
  bool ok() const noexcept { return http.ok(); }
  // MLflow's error_code ("RESOURCE_DOES_NOT_EXIST", ...) or "".
  std::string error_code() const;
  // "HTTP 400 INVALID_PARAMETER_VALUE: <message>" for reports.
  std::string describe() const;
};

class MlflowRest {
 public:
  // base: the tracking URI without a trailing '/'.
  MlflowRest(support::HttpClient& http, std::string base) : http_(http), base_(std::move(base)) {}

  RestResult get_experiment_by_name(const std::string& name);
  RestResult create_experiment(const std::string& name);
  RestResult create_run(const std::string& experiment_id, const std::string& run_name, int64_t start_time_ms,
                        const std::map<std::string, std::string>& tags);
  RestResult get_run(const std::string& run_id);
  RestResult update_run(const std::string& run_id, const std::string& status,
                        std::optional<int64_t> end_time_ms);
  RestResult log_batch(const nlohmann::json& body);
  // One page of a metric's history (max_results <= 25000, MLflow's limit);
  // the answer's "next_page_token" is empty or absent on the last page.
  RestResult metric_history(const std::string& run_id, const std::string& key, int max_results,
                            const std::string& page_token);
  // PUT through the server's artifact proxy. artifact_path: the run's
  // artifact_uri path part (see artifact_proxy_path) + "/" + relative path.
  RestResult upload_artifact(const std::string& artifact_path, const std::filesystem::path& file);

  const std::string& base() const noexcept { return base_; }

  // Called (once) when a 2xx answer's body is not JSON, with a warning text.
  void on_not_json(std::function<void(const std::string&)> warn) { on_not_json_ = std::move(warn); }

  // From now on every call runs on `thread`, and while_waiting is called on
  // the caller's thread until its answer comes (the sender takes in and spills
  // what is queued meanwhile). Both must outlive this object.
  void run_on(support::RequestThread& thread, std::function<void()> while_waiting) {
    thread_ = &thread;
    while_waiting_ = std::move(while_waiting);
  }

 private:
  RestResult call(support::HttpRequest request);
  support::HttpClient& http_;
  std::string base_;
  support::RequestThread* thread_ = nullptr;  // null: calls run on the caller's thread
  std::function<void()> while_waiting_;
  std::function<void(const std::string&)> on_not_json_;
  bool warned_not_json_ = false;
};

// log-batch bodies: metrics ([{key, value, timestamp, step}], non-finite
// values as "NaN"/"Infinity"/"-Infinity"), params and tags.
nlohmann::json metrics_batch_body(const std::string& run_id, const std::vector<Record>& metrics);
nlohmann::json params_batch_body(const std::string& run_id,
                                 const std::vector<std::pair<std::string, std::string>>& params,
                                 const std::map<std::string, std::string>& tags);

// "mlflow-artifacts:/1/abc/artifacts" or "mlflow-artifacts://host:5000/1/abc/artifacts"
// -> "1/abc/artifacts"; nullopt when the run's artifacts are not served by the
// tracking server (then artifacts cannot be uploaded over REST).
std::optional<std::string> artifact_proxy_path(const std::string& artifact_uri);

}  // namespace trainhook::mlflow
