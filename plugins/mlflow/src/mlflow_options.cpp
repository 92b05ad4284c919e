#include <trainhook/mlflow/mlflow_options.hpp>
#include <trainhook/plugin.hpp>
#include <trainhook/support/tls_files.hpp>

namespace trainhook::mlflow {
namespace {

bool is_http_url(const std::string& u) { return u.rfind("http://", 0) == 0 || u.rfind("https://", 0) == 0; }

}  // namespace

const OptionTable<MlflowOptions>& options_table() {
  using O = MlflowOptions;
  static const auto t =
      OptionTable<O>("mlflow")
          .key(
              "disable", [](O& o) -> bool& { return o.disabled(); }, "log nothing")
          .env("DISABLE_MLFLOW_INTEGRATION")
          .key(TRAINHOOK_KEY(tracking_uri), "the server, http(s)")
          .env("MLFLOW_TRACKING_URI")
          .check(
              "an http:// or https:// URL of an MLflow tracking server (file stores and databricks:// are "
              "not supported)",
              is_http_url)
          .shown_default("(required)")
          .key(TRAINHOOK_KEY(experiment_name), "created when missing")
          .env("MLFLOW_EXPERIMENT_NAME")
          .shown_default("the default experiment")
          .key(TRAINHOOK_KEY(run_id), "resume this run")
          .env("MLFLOW_RUN_ID")
          .shown_default("a new run")
          .key(TRAINHOOK_KEY(nested_run), "nest under `MLFLOW_RUN_ID`")
          .env("MLFLOW_NESTED_RUN")
          .key(TRAINHOOK_KEY(parent_run_id), "tag the run as a child")
          .env("MLFLOW_PARENT_RUN_ID")
          .shown_default("none")
          .key(TRAINHOOK_KEY(run_name), "the run's name")
          .shown_default("the trainer's `run_name`")
          .key(TRAINHOOK_KEY(tags), "JSON object of extra tags")
          .env("MLFLOW_TAGS")
          .shown_default("none")
          .key(TRAINHOOK_KEY(flatten_params), "nested arguments as `a.b` params")
          .env("MLFLOW_FLATTEN_PARAMS")
          .key(TRAINHOOK_KEY(max_log_params), "params logged at most (0: no cap)")
          .env("MLFLOW_MAX_LOG_PARAMS")
          .min(0)
          .key(TRAINHOOK_KEY(log_artifacts), "upload each saved checkpoint")
          .env("HF_MLFLOW_LOG_ARTIFACTS")
          .key(
              "tracking_token", [](O& o) -> std::string& { return o.token(); }, "Bearer authentication")
          .env("MLFLOW_TRACKING_TOKEN")
          .shown_default("none")
          .key(
              "tracking_username", [](O& o) -> std::string& { return o.username(); }, "Basic authentication")
          .env("MLFLOW_TRACKING_USERNAME")
          .shown_default("none")
          .key(
              "tracking_password", [](O& o) -> std::string& { return o.password(); }, "Basic authentication")
          .env("MLFLOW_TRACKING_PASSWORD")
          .shown_default("none")
          .key(TRAINHOOK_KEY(insecure_tls), "skip TLS verification")
          .env("MLFLOW_TRACKING_INSECURE_TLS")
          .key(TRAINHOOK_KEY(ca_bundle),
               "PEM bundle of the certificate authorities to trust (a site's own CA)")
          .env("MLFLOW_TRACKING_SERVER_CERT_PATH")
          .shown_default("the system's")
          .key(
              "client_cert", [](O& o) -> std::string& { return o.client_cert(); },
              "PEM client certificate followed by its key (mutual TLS)")
          .env("MLFLOW_TRACKING_CLIENT_CERT_PATH")
          .shown_default("none")
          .key(TRAINHOOK_KEY(max_param_value_length), "the server's limit (500 on old 2.x servers)")
          .min(1)
          .key(TRAINHOOK_KEY(flush_timeout), "seconds train end waits for delivery before spooling the rest")
          .key(TRAINHOOK_KEY(request_timeout), "seconds per HTTP request")
          .key(TRAINHOOK_KEY(retry_initial), "seconds of backoff before the first retry")
          .key(TRAINHOOK_KEY(retry_max), "seconds of backoff between retries at most")
          .key(TRAINHOOK_KEY(memory_records), "records kept in memory before spilling to the spool file")
          .min(1)
          .key(TRAINHOOK_KEY(spool_dir), "where undelivered records wait")
          .shown_default("`<output_dir>/mlflow_spool`");
  return t;
}

MlflowOptions MlflowOptions::from_json(const std::string& config_json) {
  std::map<std::string, std::string> from;
  MlflowOptions c = options_table().parse(config_json, &from);
  if (c.disabled()) return c;

  if (c.tracking_uri().empty())
    throw ConfigError(
        "mlflow: MLFLOW_TRACKING_URI is not set; set the environment variable or "
        "--plugin_config mlflow.tracking_uri=http://host:5000 (or remove mlflow from report_to)");
  while (!c.tracking_uri().empty() && c.tracking_uri().back() == '/') c.tracking_uri().pop_back();

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
  // As MLflow's Python client: a CA bundle and a client certificate (with its
  // key), which must be readable files; the message names where each came from.
  auto file = [&](std::string& path, const char* key, const char* what) {
    if (path.empty()) return;
    if (auto f = support::find_tls_file(path, from[key], {}, what)) path = f->path;
  };
  file(c.ca_bundle(), "ca_bundle", "a PEM bundle of certificate authorities");
  file(c.client_cert(), "client_cert", "a PEM client certificate followed by its private key");
  return c;
}

}  // namespace trainhook::mlflow
