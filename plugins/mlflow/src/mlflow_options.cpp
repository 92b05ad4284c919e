#include <trainhook/mlflow/mlflow_options.hpp>
#include <trainhook/plugin.hpp>
#include <trainhook/support/tls_files.hpp>

#include <nlohmann/json.hpp>

namespace trainhook::mlflow {

const std::vector<std::string>& known_config_keys() {
  static const std::vector<std::string> keys = {
      "disable",           "tracking_uri",      "experiment_name", "run_id",
      "nested_run",        "parent_run_id",     "run_name",        "tags",
      "flatten_params",    "max_log_params",    "log_artifacts",   "tracking_token",
      "tracking_username", "tracking_password", "insecure_tls",    "max_param_value_length",
      "ca_bundle",         "client_cert",
      "flush_timeout",     "request_timeout",   "retry_initial",   "retry_max",
      "memory_records",    "spool_dir"};
  return keys;
}

namespace {
std::chrono::milliseconds seconds(const support::Settings& s, const char* key, double fallback) {
  double v = s.number(key, nullptr, fallback);
  if (v < 0) throw ConfigError(s.source_of(key, nullptr) + " must be >= 0 seconds");
  return std::chrono::milliseconds(static_cast<int64_t>(v * 1000));
}
}  // namespace

MlflowOptions read_options(const std::string& config_json) {
  support::Settings s(config_json, "mlflow");
  MlflowOptions c;
  c.disabled(s.flag("disable", "DISABLE_MLFLOW_INTEGRATION", false));
  if (c.disabled()) return c;

  auto uri = s.get("tracking_uri", "MLFLOW_TRACKING_URI");
  if (!uri)
    throw ConfigError(
        "mlflow: MLFLOW_TRACKING_URI is not set; set the environment variable or "
        "--plugin_config mlflow.tracking_uri=http://host:5000 (or remove mlflow from report_to)");
  c.tracking_uri(*uri);
  while (!c.tracking_uri().empty() && c.tracking_uri().back() == '/') c.tracking_uri().pop_back();
  if (c.tracking_uri().rfind("http://", 0) != 0 && c.tracking_uri().rfind("https://", 0) != 0)
    throw ConfigError(s.source_of("tracking_uri", "MLFLOW_TRACKING_URI") +
                      " must be an http:// or https:// URL "
                      "of an MLflow tracking server, got '" +
                      *uri + "' (file stores and databricks:// are not supported)");

  c.experiment_name(s.get("experiment_name", "MLFLOW_EXPERIMENT_NAME").value_or(""));
  c.run_id(s.get("run_id", "MLFLOW_RUN_ID").value_or(""));
  c.nested_run(s.flag("nested_run", "MLFLOW_NESTED_RUN", false));
  c.parent_run_id(s.get("parent_run_id", "MLFLOW_PARENT_RUN_ID").value_or(""));
  if (c.nested_run() && c.parent_run_id().empty()) {
    // Nested without an explicit parent: the run named by MLFLOW_RUN_ID is the
    // parent (HF nests under the active run; for us that is the run given).
    if (c.run_id().empty())
      throw ConfigError(
          "mlflow: MLFLOW_NESTED_RUN is set but there is no parent run; set MLFLOW_PARENT_RUN_ID "
          "(or MLFLOW_RUN_ID) to the parent's run id");
    c.parent_run_id(c.run_id());
    c.run_id().clear();
  }
  c.run_name(s.get("run_name", nullptr).value_or(""));

  if (auto tags = s.get("tags", "MLFLOW_TAGS")) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(*tags);
    } catch (const std::exception& e) {
      throw ConfigError(s.source_of("tags", "MLFLOW_TAGS") +
                        " must be a JSON object like {\"team\": \"nlp\"}: " + e.what());
    }
    if (!j.is_object())
      throw ConfigError(s.source_of("tags", "MLFLOW_TAGS") +
                        " must be a JSON object like {\"team\": \"nlp\"}, got " + j.dump());
    for (auto it = j.begin(); it != j.end(); ++it)
      c.tags()[it.key()] = it->is_string() ? it->get<std::string>() : it->dump();
  }
  c.flatten_params(s.flag("flatten_params", "MLFLOW_FLATTEN_PARAMS", false));
  c.max_log_params(s.integer("max_log_params", "MLFLOW_MAX_LOG_PARAMS", 0));
  if (c.max_log_params() < 0)
    throw ConfigError(s.source_of("max_log_params", "MLFLOW_MAX_LOG_PARAMS") + " must be >= 0");
  c.log_artifacts(s.flag("log_artifacts", "HF_MLFLOW_LOG_ARTIFACTS", false));
  c.token(s.get("tracking_token", "MLFLOW_TRACKING_TOKEN").value_or(""));
  c.username(s.get("tracking_username", "MLFLOW_TRACKING_USERNAME").value_or(""));
  c.password(s.get("tracking_password", "MLFLOW_TRACKING_PASSWORD").value_or(""));
  c.insecure_tls(s.flag("insecure_tls", "MLFLOW_TRACKING_INSECURE_TLS", false));
  // As MLflow's Python client: a CA bundle and a client certificate (with its key).
  if (auto f = support::find_tls_file(s.get("ca_bundle", nullptr), s.source_of("ca_bundle", nullptr),
                                      {"MLFLOW_TRACKING_SERVER_CERT_PATH"}, "a PEM bundle of certificate authorities"))
    c.ca_bundle(f->path);
  if (auto f = support::find_tls_file(s.get("client_cert", nullptr), s.source_of("client_cert", nullptr),
                                      {"MLFLOW_TRACKING_CLIENT_CERT_PATH"},
                                      "a PEM client certificate followed by its private key"))
    c.client_cert(f->path);
  c.max_param_value_length(s.integer("max_param_value_length", nullptr, 6000));
  if (c.max_param_value_length() < 1)
    throw ConfigError("plugin_config mlflow.max_param_value_length must be >= 1");
  c.flush_timeout(seconds(s, "flush_timeout", 60));
  c.request_timeout(seconds(s, "request_timeout", 30));
  c.retry_initial(seconds(s, "retry_initial", 0.5));
  c.retry_max(seconds(s, "retry_max", 10));
  int64_t mem = s.integer("memory_records", nullptr, static_cast<int64_t>(MlflowOptions{}.memory_records()));
  if (mem < 1) throw ConfigError("plugin_config mlflow.memory_records must be >= 1");
  c.memory_records(static_cast<size_t>(mem));
  c.spool_dir(s.get("spool_dir", nullptr).value_or(""));
  return c;
}

}  // namespace trainhook::mlflow
