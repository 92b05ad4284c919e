// Environment variables and a plugin's configuration section, read the way the
// Hugging Face integrations read them.
//
// Settings overlays a callback's config_json (its section of --plugin_config)
// on the environment: a key set in the configuration wins over the variable,
// because it was given explicitly for this run. Every malformed value throws
// trainhook::ConfigError naming where it came from (config key or variable)
// and what was expected.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainhook::support {

// The variable's value; std::nullopt when unset or empty.
std::optional<std::string> get_env(const char* name);

// HF's ENV_VARS_TRUE_VALUES: 1, ON, YES, TRUE in any case (surrounding blanks ignored).
bool is_truthy(std::string_view value);

class Settings {
 public:
  // plugin_name is used in messages ("plugin_config mlflow.max_log_params").
  // Throws ConfigError when config_json is not a JSON object.
  Settings(const std::string& config_json, std::string plugin_name);

  // Config key first, then the environment variable (env may be nullptr).
  // Config values that are numbers or booleans are returned as their JSON text.
  std::optional<std::string> get(const char* key, const char* env) const;
  // HF semantics: truthy -> true, any other text -> false, absent -> fallback.
  // A JSON boolean in the config is taken as is.
  bool flag(const char* key, const char* env, bool fallback) const;
  // Integer setting; throws ConfigError for text that is not an integer.
  int64_t integer(const char* key, const char* env, int64_t fallback) const;
  // Number setting (seconds, ratios); throws ConfigError when not a number.
  double number(const char* key, const char* env, double fallback) const;

  // The raw configuration object.
  const nlohmann::json& config() const noexcept { return config_; }
  // Keys of the configuration that are not in `known` (for a warning).
  std::vector<std::string> unknown_keys(const std::vector<std::string>& known) const;
  // "plugin_config mlflow.tracking_uri" or "environment variable X", for messages.
  std::string source_of(const char* key, const char* env) const;

 private:
  // "'value'" for a message, or "<KEY>" when key or env names a credential.
  std::string shown(const char* key, const char* env, const std::string& v) const;

  nlohmann::json config_;
  std::string plugin_;
};

}  // namespace trainhook::support
