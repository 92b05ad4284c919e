#include <trainhook/wandb/history_line.hpp>

#include <trainhook/support/log_keys.hpp>

#include <nlohmann/json.hpp>

#include <array>
#include <cmath>

namespace trainhook::wandb {

std::string json_number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  if (std::trunc(v) == v && std::fabs(v) < 9007199254740992.0) return std::to_string(static_cast<int64_t>(v));
  return nlohmann::json(v).dump();  // shortest text that reads back to the same double
}

std::string json_string(std::string_view s) {
  return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool is_summary_only_key(std::string_view key) {
  static constexpr std::array<std::string_view, 5> keys = {
      "train_runtime", "train_samples_per_second", "train_steps_per_second", "train_loss", "total_flos"};
  for (auto k : keys)
    if (k == key) return true;
  return false;
}

LogRecord make_log_record(const std::vector<std::pair<std::string, double>>& numbers,
                          const std::vector<std::pair<std::string, std::string>>& strings,
                          std::optional<int64_t> global_step, double timestamp) {
  LogRecord r;
  r.timestamp = timestamp;
  r.history.reserve(numbers.size() + strings.size() + 1);
  auto add = [&](const std::string& key, std::string text) {
    if (is_summary_only_key(key))
      r.summary.emplace_back(key, std::move(text));
    else
      r.history.emplace_back(support::rewrite_log_key(key), std::move(text));
  };
  for (const auto& [k, v] : numbers) add(k, json_number(v));
  for (const auto& [k, v] : strings) add(k, json_string(v));
  if (global_step) r.history.emplace_back("train/global_step", std::to_string(*global_step));
  return r;
}

std::string history_line(const LogRecord& record, int64_t step, double runtime) {
  // Keep the first position of a key, the last value (W&B merges a dict).
  std::vector<std::pair<std::string, std::string>> fields;
  fields.reserve(record.history.size());
  for (const auto& f : record.history) {
    bool replaced = false;
    for (auto& g : fields)
      if (g.first == f.first) {
        g.second = f.second;
        replaced = true;
        break;
      }
    if (!replaced && f.first != "_step" && f.first != "_runtime" && f.first != "_timestamp")
      fields.push_back(f);
  }
  std::string out = "{";
  for (const auto& [k, v] : fields) {
    out += json_string(k);
    out += ':';
    out += v;
    out += ',';
  }
  out += "\"_step\":" + std::to_string(step);
  out += ",\"_runtime\":" + json_number(runtime);
  out += ",\"_timestamp\":" + json_number(record.timestamp);
  out += '}';
  return out;
}

void Summary::update(const LogRecord& record, int64_t step, double runtime) {
  for (const auto& [k, v] : record.history) values_[k] = v;
  for (const auto& [k, v] : record.summary) values_[k] = v;
  values_["_step"] = std::to_string(step);
  values_["_runtime"] = json_number(runtime);
  values_["_timestamp"] = json_number(record.timestamp);
  runtime_ = runtime;
}

void Summary::load(const std::string& summary_json) {
  const auto j = nlohmann::json::parse(summary_json, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "_wandb") continue;
    values_[it.key()] = it->dump();
  }
  if (auto it = j.find("_runtime"); it != j.end() && it->is_number()) runtime_ = it->get<double>();
}

std::string Summary::line() const {
  std::string out = "{";
  for (const auto& [k, v] : values_) {
    out += json_string(k);
    out += ':';
    out += v;
    out += ',';
  }
  out += "\"_wandb\":{\"runtime\":" + std::to_string(static_cast<int64_t>(runtime_)) + "}}";
  return out;
}

}  // namespace trainhook::wandb
