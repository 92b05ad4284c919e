// Training arguments -> MLflow params, as HF's MLflowCallback.setup does,
// without its crashes: secrets are never sent, over-long values are dropped
// (and named in one warning), MLFLOW_MAX_LOG_PARAMS caps the count.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace trainhook::mlflow {

struct ParamSet {
  std::vector<std::pair<std::string, std::string>> params;  // in argument order
  std::vector<std::string> too_long;                        // keys dropped for exceeding the value limit
  std::vector<std::string> secrets;                         // keys dropped because they look like credentials
  size_t capped = 0;                                        // params left out by max_log_params
};

// args_json: the host's training arguments (a JSON object). flatten: nested
// objects become "a.b" keys (else their JSON text is the value). Values are
// rendered like Python's str(), as HF sends them: True/False/None, floats as
// repr() ("1e-05", "5.0"), strings unquoted, lists/objects as their Python
// repr ("['mlflow']", "{'a': 1, 'b': None}"), credentials inside them as
// "<KEY>" placeholders. Throws std::invalid_argument when args_json is not an object.
ParamSet build_params(const std::string& args_json, bool flatten, int64_t max_value_length,
                      int64_t max_log_params);

// Splits into requests of at most `per_request` params (MLflow: 100).
std::vector<std::vector<std::pair<std::string, std::string>>> chunk_params(
    const std::vector<std::pair<std::string, std::string>>& params, size_t per_request = 100);

}  // namespace trainhook::mlflow
