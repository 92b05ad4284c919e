// The mlflow integration's settings: each comes from the plugin configuration
// (--plugin_config mlflow.<key>=...) or else its environment variable, with
// the Hugging Face MLflowCallback names and meanings; the keys are declared
// once, in options_table().
#pragma once

#include <trainhook/options.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace trainhook::mlflow {

// Built with chained setters (MlflowOptions().tracking_uri(u).flush_timeout(t))
// or read from the plugin_config section by from_json().
class MlflowOptions {
 public:
  using Tags = std::map<std::string, std::string>;

  TRAINHOOK_OPTION(bool, disabled, false);             // DISABLE_MLFLOW_INTEGRATION
  TRAINHOOK_OPTION(std::string, tracking_uri, {});     // MLFLOW_TRACKING_URI, http(s) only, no trailing '/'
  TRAINHOOK_OPTION(std::string, experiment_name, {});  // MLFLOW_EXPERIMENT_NAME; empty = the default ("0")
  TRAINHOOK_OPTION(std::string, run_id, {});           // MLFLOW_RUN_ID: resume that run
  TRAINHOOK_OPTION(bool, nested_run, false);           // MLFLOW_NESTED_RUN
  TRAINHOOK_OPTION(std::string, parent_run_id, {});    // MLFLOW_PARENT_RUN_ID, or MLFLOW_RUN_ID when nested
  TRAINHOOK_OPTION(std::string, run_name, {});         // run_name key; empty = the trainer's run_name
  TRAINHOOK_OPTION(Tags, tags, {});                    // MLFLOW_TAGS (JSON object)
  TRAINHOOK_OPTION(bool, flatten_params, false);       // MLFLOW_FLATTEN_PARAMS
  TRAINHOOK_OPTION(int64_t, max_log_params, 0);        // MLFLOW_MAX_LOG_PARAMS; 0 = no cap
  TRAINHOOK_OPTION(bool, log_artifacts, false);        // HF_MLFLOW_LOG_ARTIFACTS
  TRAINHOOK_OPTION(std::string, token, {});            // MLFLOW_TRACKING_TOKEN (Bearer)
  TRAINHOOK_OPTION(std::string, username, {});         // MLFLOW_TRACKING_USERNAME / PASSWORD (Basic)
  TRAINHOOK_OPTION(std::string, password, {});
  TRAINHOOK_OPTION(bool, insecure_tls, false);              // MLFLOW_TRACKING_INSECURE_TLS
  TRAINHOOK_OPTION(std::string, ca_bundle, "");             // MLFLOW_TRACKING_SERVER_CERT_PATH
  TRAINHOOK_OPTION(std::string, client_cert, "");           // MLFLOW_TRACKING_CLIENT_CERT_PATH
  TRAINHOOK_OPTION(int64_t, max_param_value_length, 6000);  // the server's limit (500 on old 2.x servers)
  TRAINHOOK_OPTION(std::chrono::milliseconds, flush_timeout, std::chrono::seconds(60));  // at train end
  TRAINHOOK_OPTION(std::chrono::milliseconds, request_timeout, std::chrono::seconds(30));
  TRAINHOOK_OPTION(std::chrono::milliseconds, retry_initial, std::chrono::milliseconds(500));
  TRAINHOOK_OPTION(std::chrono::milliseconds, retry_max, std::chrono::seconds(10));
  // Records kept in memory before spilling to disk (flat RSS).
  TRAINHOOK_OPTION(size_t, memory_records, 500);
  TRAINHOOK_OPTION(std::string, spool_dir, {});  // empty = <output_dir>/mlflow_spool

 public:
  // Reads and validates everything; throws trainhook::ConfigError naming the
  // variable or config key at fault (an unknown key, missing MLFLOW_TRACKING_URI,
  // bad MLFLOW_TAGS, non-numeric limits, a non-http tracking URI). With
  // DISABLE_MLFLOW_INTEGRATION set, returns {disabled = true} without requiring
  // the rest.
  static MlflowOptions from_json(const std::string& config_json);
};

// The plugin_config keys, their variables, defaults and ranges.
const OptionTable<MlflowOptions>& options_table();

}  // namespace trainhook::mlflow
