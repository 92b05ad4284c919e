// Reading a plugin's plugin_config section (a JSON object text) with clear
// errors: an unknown key names the valid keys, a bad value names the key and
// what was expected. Numbers and booleans given as strings ("3", "true": what
// --plugin_config name.key=value flags give) are accepted. Errors are
// trainhook::ConfigError (TH_INVALID_ARGUMENT at the C boundary).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trainhook::support {

class PluginConfig {
 public:
  // `plugin` names the section in messages ("plugin_config ema.decay: ...").
  PluginConfig(std::string plugin, const std::string& config_json,
               const std::vector<std::string>& valid_keys);

  std::optional<double> number(const std::string& key) const;
  // A finite number in [min, max].
  std::optional<double> number_in(const std::string& key, double min, double max) const;
  std::optional<int64_t> integer(const std::string& key, int64_t min) const;
  std::optional<bool> boolean(const std::string& key) const;
  // One of `choices`.
  std::optional<std::string> choice(const std::string& key, const std::vector<std::string>& choices) const;

  // "plugin_config <plugin>.<key>" for messages.
  std::string where(const std::string& key) const { return "plugin_config " + plugin_ + "." + key; }

 private:
  const nlohmann::json* find(const std::string& key) const;
  std::string plugin_;
  nlohmann::json cfg_;
};

}  // namespace trainhook::support
