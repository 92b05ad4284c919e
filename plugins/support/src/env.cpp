#include <trainhook/plugin.hpp>
#include <trainhook/strings.hpp>
#include <trainhook/support/env.hpp>
#include <trainhook/support/secrets.hpp>

#include <trainhook/secret_keys.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string_view>

namespace trainhook::support {

namespace {
constexpr auto trim = strings::trim_view;
using strings::iequals;
}  // namespace

std::optional<std::string> get_env(const char* name) {
  if (name == nullptr) return std::nullopt;
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

bool is_truthy(std::string_view value) {
  value = trim(value);
  return iequals(value, "1") || iequals(value, "on") || iequals(value, "yes") || iequals(value, "true");
}

Settings::Settings(const std::string& config_json, std::string plugin_name)
    : plugin_(std::move(plugin_name)) {
  try {
    config_ = nlohmann::json::parse(config_json.empty() ? std::string("{}") : config_json);
  } catch (const std::exception& e) {
    throw ConfigError("plugin_config for '" + plugin_ + "' is not valid JSON: " + e.what());
  }
  if (!config_.is_object())
    throw ConfigError("plugin_config for '" + plugin_ + "' must be a JSON object, got " + config_.dump());
}

// A value quoted in an error message, unless it belongs to a credential key.
std::string Settings::shown(const char* key, const char* env, const std::string& v) const {
  if ((key != nullptr && looks_secret(key)) || (env != nullptr && looks_secret(env)))
    return secret_placeholder(key != nullptr ? key : env);
  return "'" + v + "'";
}

std::string Settings::source_of(const char* key, const char* env) const {
  if (key != nullptr && config_.contains(key)) return "plugin_config " + plugin_ + "." + key;
  if (env != nullptr) return std::string("environment variable ") + env;
  return "plugin_config " + plugin_ + "." + (key != nullptr ? key : "?");
}

std::optional<std::string> Settings::get(const char* key, const char* env) const {
  if (key != nullptr) {
    auto it = config_.find(key);
    if (it != config_.end() && !it->is_null()) {
      if (it->is_string()) return it->get<std::string>();
      return it->dump();
    }
  }
  return get_env(env);
}

bool Settings::flag(const char* key, const char* env, bool fallback) const {
  if (key != nullptr) {
    auto it = config_.find(key);
    if (it != config_.end() && it->is_boolean()) return it->get<bool>();
  }
  auto v = get(key, env);
  return v ? is_truthy(*v) : fallback;
}

int64_t Settings::integer(const char* key, const char* env, int64_t fallback) const {
  auto v = get(key, env);
  if (!v) return fallback;
  std::string_view t = trim(*v);
  try {
    size_t used = 0;
    long long n = std::stoll(std::string(t), &used);
    if (used == t.size()) return n;
  } catch (const std::exception&) {
  }
  throw ConfigError(source_of(key, env) + " must be an integer, got " + shown(key, env, *v));
}

double Settings::number(const char* key, const char* env, double fallback) const {
  auto v = get(key, env);
  if (!v) return fallback;
  std::string_view t = trim(*v);
  try {
    size_t used = 0;
    double d = std::stod(std::string(t), &used);
    if (used == t.size()) return d;
  } catch (const std::exception&) {
  }
  throw ConfigError(source_of(key, env) + " must be a number, got " + shown(key, env, *v));
}

std::vector<std::string> Settings::unknown_keys(const std::vector<std::string>& known) const {
  std::vector<std::string> out;
  for (auto it = config_.begin(); it != config_.end(); ++it)
    if (std::find(known.begin(), known.end(), it.key()) == known.end()) out.push_back(it.key());
  return out;
}

}  // namespace trainhook::support
