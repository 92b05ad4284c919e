#include <trainhook/early_stopping/early_stopping_options.hpp>

#include <trainhook/plugin.hpp>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

namespace trainhook::early_stopping {
namespace {

constexpr const char* kValidKeys =
    "early_stopping_patience (alias patience), early_stopping_threshold (alias threshold)";

std::string where(const std::string& key) { return "plugin_config early_stopping." + key; }

// A JSON number, or a string holding one (flags arrive as text).
double number_of(const nlohmann::json& v, const std::string& key, const char* expected) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    size_t used = 0;
    try {
      double d = std::stod(s, &used);
      if (used == s.size()) return d;
    } catch (const std::exception&) {
    }
  }
  throw ConfigError(where(key) + ": expected " + expected + ", got " + v.dump());
}

}  // namespace

EarlyStoppingOptions& EarlyStoppingOptions::patience(int64_t p) {
  if (p < 1)
    throw ConfigError(where("early_stopping_patience") + ": expected an integer >= 1, got " +
                      std::to_string(p));
  patience_ = p;
  return *this;
}

EarlyStoppingOptions& EarlyStoppingOptions::threshold(double t) {
  if (!std::isfinite(t) || t < 0)
    throw ConfigError(where("early_stopping_threshold") + ": expected a finite number >= 0, got " +
                      std::to_string(t));
  threshold_ = t;
  return *this;
}

EarlyStoppingOptions EarlyStoppingOptions::from_json(const std::string& config_json) {
  nlohmann::json cfg;
  try {
    cfg = nlohmann::json::parse(config_json.empty() ? "{}" : config_json);
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(std::string("plugin_config early_stopping: not valid JSON: ") + e.what());
  }
  if (!cfg.is_object())
    throw ConfigError("plugin_config early_stopping: expected a JSON object, got " + cfg.dump());

  EarlyStoppingOptions o;
  bool seen_patience = false, seen_threshold = false;
  for (auto it = cfg.begin(); it != cfg.end(); ++it) {
    const std::string& key = it.key();
    if (key == "early_stopping_patience" || key == "patience") {
      if (seen_patience)
        throw ConfigError(where(key) + ": patience given twice (early_stopping_patience and patience)");
      seen_patience = true;
      const double d = number_of(it.value(), key, "an integer >= 1");
      if (d != std::floor(d) || d < 1 || d > 1e15)
        throw ConfigError(where(key) + ": expected an integer >= 1, got " + it.value().dump());
      o.patience(static_cast<int64_t>(d));
    } else if (key == "early_stopping_threshold" || key == "threshold") {
      if (seen_threshold)
        throw ConfigError(where(key) + ": threshold given twice (early_stopping_threshold and threshold)");
      seen_threshold = true;
      const double d = number_of(it.value(), key, "a number >= 0");
      if (!std::isfinite(d) || d < 0)
        throw ConfigError(where(key) + ": expected a number >= 0, got " + it.value().dump());
      o.threshold(d);
    } else {
      throw ConfigError(where(key) + ": unknown key; valid keys: " + kValidKeys);
    }
  }
  return o;
}

}  // namespace trainhook::early_stopping
