#include <trainhook/progress/progress_options.hpp>

#include <trainhook/plugin.hpp>

#include <cmath>
#include <nlohmann/json.hpp>

namespace trainhook::progress {
namespace {

nlohmann::json parse_object(const std::string& callback, const std::string& text) {
  nlohmann::json cfg;
  try {
    cfg = nlohmann::json::parse(text.empty() ? "{}" : text);
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError("plugin_config " + callback + ": not valid JSON: " + e.what());
  }
  if (!cfg.is_object())
    throw ConfigError("plugin_config " + callback + ": expected a JSON object, got " + cfg.dump());
  return cfg;
}

// A positive number, or a string holding one (flags arrive as text).
double positive_number(const std::string& key, const nlohmann::json& v) {
  double d = NAN;
  if (v.is_number()) {
    d = v.get<double>();
  } else if (v.is_string()) {
    const std::string s = v.get<std::string>();
    size_t used = 0;
    try {
      d = std::stod(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != s.size()) d = NAN;
  }
  if (!std::isfinite(d) || d <= 0)
    throw ConfigError("plugin_config progress." + key + ": expected a number > 0, got " + v.dump());
  return d;
}

}  // namespace

DisplayOptions ProgressOptions::display_options() const {
  DisplayOptions d;
  d.min_interval = min_interval_;
  d.plain_interval = plain_interval_;
  d.plain_percent = plain_percent_;
  return d;
}

ProgressOptions ProgressOptions::from_json(const std::string& config_json) {
  const nlohmann::json cfg = parse_object("progress", config_json);
  ProgressOptions o;
  for (auto it = cfg.begin(); it != cfg.end(); ++it) {
    const std::string& key = it.key();
    if (key == "min_interval")
      o.min_interval(positive_number(key, it.value()));
    else if (key == "plain_interval")
      o.plain_interval(positive_number(key, it.value()));
    else if (key == "plain_percent")
      o.plain_percent(positive_number(key, it.value()));
    else
      throw ConfigError("plugin_config progress." + key +
                        ": unknown key; valid keys: min_interval, plain_interval, plain_percent");
  }
  return o;
}

void check_printer_options(const std::string& config_json) {
  const nlohmann::json cfg = parse_object("printer", config_json);
  if (!cfg.empty())
    throw ConfigError("plugin_config printer." + cfg.begin().key() +
                      ": unknown key; the printer takes no options");
}

}  // namespace trainhook::progress
