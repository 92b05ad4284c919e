#include <trainhook/nan_guard/nan_guard_options.hpp>

#include <trainhook/plugin.hpp>
#include <trainhook/support/plugin_config.hpp>

namespace trainhook::nan_guard {

NanGuardOptions& NanGuardOptions::patience(int64_t p) {
  if (p < 1)
    throw ConfigError("plugin_config nan_guard.patience: expected an integer >= 1, got " + std::to_string(p));
  patience_ = p;
  return *this;
}

NanGuardOptions NanGuardOptions::from_json(const std::string& config_json) {
  const support::PluginConfig cfg("nan_guard", config_json, {"action", "patience"});
  NanGuardOptions o;
  if (auto a = cfg.choice("action", {"stop", "skip"})) o.action(*a == "skip" ? Action::skip : Action::stop);
  if (auto p = cfg.integer("patience", 1)) o.patience(*p);
  return o;
}

}  // namespace trainhook::nan_guard
