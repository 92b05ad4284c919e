#include <trainhook/mlflow/rest.hpp>

#include <cmath>

namespace trainhook::mlflow {

using support::HttpRequest;
using support::url_encode;

namespace {
const char* kApi = "/api/2.0/mlflow/";
const char* kArtifacts = "/api/2.0/mlflow-artifacts/artifacts/";

nlohmann::json metric_value(double v) {
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? "NaN" : (v > 0 ? "Infinity" : "-Infinity");
}
}  // namespace

std::string RestResult::error_code() const {
  try {
    auto j = nlohmann::json::parse(http.body);
    if (j.is_object() && j.contains("error_code")) return j["error_code"].get<std::string>();
  } catch (const std::exception&) {
  }
  return {};
}

std::string RestResult::describe() const {
  if (http.status == 0) return http.describe();
  try {
    auto j = nlohmann::json::parse(http.body);
    if (j.is_object() && j.contains("message"))
      return "HTTP " + std::to_string(http.status) + " " + j.value("error_code", std::string()) + ": " +
             j["message"].get<std::string>();
  } catch (const std::exception&) {
  }
  return http.describe();
}

RestResult MlflowRest::call(HttpRequest request) {
  RestResult r;
  r.http = thread_ ? thread_->perform(http_, request, while_waiting_) : http_.perform(request);
  if (r.http.ok() && !r.http.body.empty()) {
    try {
      r.json = nlohmann::json::parse(r.http.body);
    } catch (const std::exception&) {
      r.json = nullptr;
      // A proxy's login page or another service answering 200: say so once
      // (there was no warning at all before).
      if (on_not_json_ && !warned_not_json_) {
        warned_not_json_ = true;
        on_not_json_("mlflow: the server answered " + request.method + " " + request.url + " with HTTP " +
                     std::to_string(r.http.status) + " and a body that is not JSON (" +
                     r.http.body.substr(0, 60) +
                     "...); is the tracking URI an MLflow server and not a proxy or login page?");
      }
    }
  }
  return r;
}

RestResult MlflowRest::get_experiment_by_name(const std::string& name) {
  return call(HttpRequest::get(base_ + kApi + "experiments/get-by-name?experiment_name=" + url_encode(name)));
}

RestResult MlflowRest::create_experiment(const std::string& name) {
  return call(
      HttpRequest::post_json(base_ + kApi + "experiments/create", nlohmann::json{{"name", name}}.dump()));
}

RestResult MlflowRest::create_run(const std::string& experiment_id, const std::string& run_name,
                                  int64_t start_time_ms, const std::map<std::string, std::string>& tags) {
  nlohmann::json body{
      {"experiment_id", experiment_id}, {"start_time", start_time_ms}, {"tags", nlohmann::json::array()}};
  if (!run_name.empty()) body["run_name"] = run_name;
  for (const auto& [k, v] : tags) body["tags"].push_back({{"key", k}, {"value", v}});
  return call(HttpRequest::post_json(base_ + kApi + "runs/create", body.dump()));
}

RestResult MlflowRest::get_run(const std::string& run_id) {
  return call(HttpRequest::get(base_ + kApi + "runs/get?run_id=" + url_encode(run_id)));
}

RestResult MlflowRest::update_run(const std::string& run_id, const std::string& status,
                                  std::optional<int64_t> end_time_ms) {
  nlohmann::json body{{"run_id", run_id}, {"status", status}};
  if (end_time_ms) body["end_time"] = *end_time_ms;
  return call(HttpRequest::post_json(base_ + kApi + "runs/update", body.dump()));
}

RestResult MlflowRest::log_batch(const nlohmann::json& body) {
  return call(HttpRequest::post_json(base_ + kApi + "runs/log-batch", body.dump()));
}

RestResult MlflowRest::metric_history(const std::string& run_id, const std::string& key, int max_results,
                                      const std::string& page_token) {
  std::string target = base_ + kApi + "metrics/get-history?run_id=" + url_encode(run_id) +
                       "&metric_key=" + url_encode(key) + "&max_results=" + std::to_string(max_results);
  if (!page_token.empty()) target += "&page_token=" + url_encode(page_token);
  return call(HttpRequest::get(target));
}

RestResult MlflowRest::upload_artifact(const std::string& artifact_path, const std::filesystem::path& file) {
  return call(HttpRequest::put_file(base_ + kArtifacts + url_encode(artifact_path, true), file));
}

nlohmann::json metrics_batch_body(const std::string& run_id, const std::vector<Record>& metrics) {
  nlohmann::json body{{"run_id", run_id}, {"metrics", nlohmann::json::array()}};
  auto& arr = body["metrics"];
  for (const auto& m : metrics)
    arr.push_back(
        {{"key", m.key}, {"value", metric_value(m.value)}, {"timestamp", m.timestamp}, {"step", m.step}});
  return body;
}

nlohmann::json params_batch_body(const std::string& run_id,
                                 const std::vector<std::pair<std::string, std::string>>& params,
                                 const std::map<std::string, std::string>& tags) {
  nlohmann::json body{
      {"run_id", run_id}, {"params", nlohmann::json::array()}, {"tags", nlohmann::json::array()}};
  for (const auto& [k, v] : params) body["params"].push_back({{"key", k}, {"value", v}});
  for (const auto& [k, v] : tags) body["tags"].push_back({{"key", k}, {"value", v}});
  return body;
}

std::optional<std::string> artifact_proxy_path(const std::string& artifact_uri) {
  const std::string scheme = "mlflow-artifacts:";
  if (artifact_uri.rfind(scheme, 0) != 0) return std::nullopt;
  std::string rest = artifact_uri.substr(scheme.size());
  if (rest.rfind("//", 0) == 0) {  // mlflow-artifacts://host:port/path
    auto slash = rest.find('/', 2);
    rest = slash == std::string::npos ? std::string() : rest.substr(slash);
  }
  while (!rest.empty() && rest.front() == '/') rest.erase(0, 1);
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  return rest;
}

}  // namespace trainhook::mlflow
