#include <trainhook/support/plugin_config.hpp>

#include <trainhook/plugin.hpp>

#include <cmath>

namespace trainhook::support {
namespace {

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

PluginConfig::PluginConfig(std::string plugin, const std::string& config_json,
                           const std::vector<std::string>& valid_keys)
    : plugin_(std::move(plugin)) {
  try {
    cfg_ = nlohmann::json::parse(config_json.empty() ? "{}" : config_json);
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError("plugin_config " + plugin_ + ": not valid JSON: " + e.what());
  }
  if (!cfg_.is_object())
    throw ConfigError("plugin_config " + plugin_ + ": expected a JSON object, got " + cfg_.dump());
  for (auto it = cfg_.begin(); it != cfg_.end(); ++it) {
    bool known = false;
    for (const auto& k : valid_keys) known = known || k == it.key();
    if (!known) throw ConfigError(where(it.key()) + ": unknown key; valid keys: " + joined(valid_keys));
  }
}

const nlohmann::json* PluginConfig::find(const std::string& key) const {
  auto it = cfg_.find(key);
  return it == cfg_.end() ? nullptr : &*it;
}

std::optional<double> PluginConfig::number(const std::string& key) const {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return std::nullopt;
  if (v->is_number()) return v->get<double>();
  if (v->is_string()) {
    const std::string s = v->get<std::string>();
    size_t used = 0;
    try {
      const double d = std::stod(s, &used);
      if (used == s.size()) return d;
    } catch (const std::exception&) {
    }
  }
  throw ConfigError(where(key) + ": expected a number, got " + v->dump());
}

std::optional<double> PluginConfig::number_in(const std::string& key, double min, double max) const {
  const auto d = number(key);
  if (d && (!std::isfinite(*d) || *d < min || *d > max))
    throw ConfigError(where(key) + ": expected a number in [" + nlohmann::json(min).dump() + ", " +
                      nlohmann::json(max).dump() + "], got " + find(key)->dump());
  return d;
}

std::optional<int64_t> PluginConfig::integer(const std::string& key, int64_t min) const {
  const auto d = number(key);
  if (!d) return std::nullopt;
  if (*d != std::floor(*d) || *d < static_cast<double>(min) || *d > 1e15)
    throw ConfigError(where(key) + ": expected an integer >= " + std::to_string(min) + ", got " +
                      find(key)->dump());
  return static_cast<int64_t>(*d);
}

std::optional<bool> PluginConfig::boolean(const std::string& key) const {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return std::nullopt;
  if (v->is_boolean()) return v->get<bool>();
  if (v->is_string()) {
    const std::string s = v->get<std::string>();
    if (s == "true" || s == "True" || s == "1") return true;
    if (s == "false" || s == "False" || s == "0") return false;
  }
  throw ConfigError(where(key) + ": expected true or false, got " + v->dump());
}

std::optional<std::string> PluginConfig::choice(const std::string& key,
                                                const std::vector<std::string>& choices) const {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return std::nullopt;
  if (v->is_string()) {
    for (const auto& c : choices)
      if (c == v->get<std::string>()) return c;
  }
  throw ConfigError(where(key) + ": expected one of " + joined(choices) + ", got " + v->dump());
}

}  // namespace trainhook::support
