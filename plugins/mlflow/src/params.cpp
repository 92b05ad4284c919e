#include <trainhook/mlflow/params.hpp>
#include <trainhook/support/secrets.hpp>

#include <nlohmann/json.hpp>

#include <stdexcept>

namespace trainhook::mlflow {

namespace {
// Python's str() of a JSON-decoded value, which is what HF sends.
std::string py_str(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_null()) return "None";
  return v.dump();
}

void collect(const std::string& prefix, const nlohmann::json& obj, bool flatten,
             std::vector<std::pair<std::string, std::string>>& out, std::vector<std::string>& secrets) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (support::looks_secret(it.key()) || support::looks_secret(key)) {
      secrets.push_back(key);
      continue;
    }
    if (flatten && it->is_object() && !it->empty()) {
      collect(key, *it, flatten, out, secrets);
    } else {
      out.emplace_back(key, py_str(*it));
    }
  }
}
}  // namespace

ParamSet build_params(const std::string& args_json, bool flatten, int64_t max_value_length,
                      int64_t max_log_params) {
  nlohmann::json args = nlohmann::json::parse(args_json.empty() ? std::string("{}") : args_json);
  if (!args.is_object()) throw std::invalid_argument("training arguments JSON is not an object");
  ParamSet set;
  std::vector<std::pair<std::string, std::string>> all;
  collect("", args, flatten, all, set.secrets);
  for (auto& kv : all) {
    if (static_cast<int64_t>(kv.second.size()) > max_value_length) {
      set.too_long.push_back(kv.first);
    } else {
      set.params.push_back(std::move(kv));
    }
  }
  if (max_log_params > 0 && static_cast<int64_t>(set.params.size()) > max_log_params) {
    set.capped = set.params.size() - static_cast<size_t>(max_log_params);
    set.params.resize(static_cast<size_t>(max_log_params));
  }
  return set;
}

std::vector<std::vector<std::pair<std::string, std::string>>> chunk_params(
    const std::vector<std::pair<std::string, std::string>>& params, size_t per_request) {
  std::vector<std::vector<std::pair<std::string, std::string>>> out;
  for (size_t i = 0; i < params.size(); i += per_request)
    out.emplace_back(params.begin() + static_cast<std::ptrdiff_t>(i),
                     params.begin() + static_cast<std::ptrdiff_t>(std::min(params.size(), i + per_request)));
  return out;
}

}  // namespace trainhook::mlflow
