// The mlflow integration's settings: each comes from the plugin configuration
// (--plugin_config mlflow.<key>=...) or else its environment variable, with
// the Hugging Face MLflowCallback names and meanings.
#pragma once

#include <trainhook/support/env.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace trainhook::mlflow {

struct MlflowOptions {
  bool disabled = false;                    // DISABLE_MLFLOW_INTEGRATION
  std::string tracking_uri;                 // MLFLOW_TRACKING_URI, http(s) only, no trailing '/'
  std::string experiment_name;              // MLFLOW_EXPERIMENT_NAME; empty = the default experiment ("0")
  std::string run_id;                       // MLFLOW_RUN_ID: resume that run
  bool nested_run = false;                  // MLFLOW_NESTED_RUN
  std::string parent_run_id;                // MLFLOW_PARENT_RUN_ID, or MLFLOW_RUN_ID when nested
  std::string run_name;                     // run_name key; empty = the trainer's run_name
  std::map<std::string, std::string> tags;  // MLFLOW_TAGS (JSON object)
  bool flatten_params = false;              // MLFLOW_FLATTEN_PARAMS
  int64_t max_log_params = 0;               // MLFLOW_MAX_LOG_PARAMS; 0 = no cap
  bool log_artifacts = false;               // HF_MLFLOW_LOG_ARTIFACTS
  std::string token;                        // MLFLOW_TRACKING_TOKEN (Bearer)
  std::string username;                     // MLFLOW_TRACKING_USERNAME / PASSWORD (Basic)
  std::string password;
  bool insecure_tls = false;              // MLFLOW_TRACKING_INSECURE_TLS
  int64_t max_param_value_length = 6000;  // the server's limit (500 on old 2.x servers)
  std::chrono::milliseconds flush_timeout{std::chrono::seconds(60)};  // at train end
  std::chrono::milliseconds request_timeout{std::chrono::seconds(30)};
  std::chrono::milliseconds retry_initial{500};
  std::chrono::milliseconds retry_max{std::chrono::seconds(10)};
  size_t memory_records = 500;  // records kept in memory before spilling to disk (flat RSS, issue 14)
  std::string spool_dir;        // empty = <output_dir>/mlflow_spool
};

// Reads and validates everything; throws trainhook::ConfigError naming the
// variable or config key at fault (missing MLFLOW_TRACKING_URI, bad MLFLOW_TAGS,
// non-numeric limits, a non-http tracking URI). With DISABLE_MLFLOW_INTEGRATION
// set, returns {disabled = true} without checking the rest.
MlflowOptions read_options(const std::string& config_json);

// Configuration keys this plugin understands (others get a warning).
const std::vector<std::string>& known_config_keys();

}  // namespace trainhook::mlflow
