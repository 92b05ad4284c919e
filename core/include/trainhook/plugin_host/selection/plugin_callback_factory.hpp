// The one place a plugin callback is made: in this process, or in a helper
// process (the isolation policy decides, once, at setup; a plugin_config
// "isolation" key wins under auto and none), in which case its library is
// never loaded here. Either way the plugin receives its plugin_config section
// without the host's keys (isolation, isolation_timeout). The trainer's
// assembly and Trainer::add_callback(name) both call it. No LibTorch here.
#pragma once

#include <trainhook/callbacks/callback.hpp>

#include <nlohmann/json.hpp>

#include <memory>
#include <string>

namespace trainhook {

class PluginRegistry;
class IsolationPolicy;
class HostServices;

class PluginCallbackFactory {
 public:
  // All must outlive the factory; `plugin_config` is the run's sections.
  // `log`: this process says which callbacks run where (world process zero).
  PluginCallbackFactory(PluginRegistry& registry, const IsolationPolicy& isolation, HostServices& host,
                        const nlohmann::json& plugin_config, bool log)
      : registry_(registry), isolation_(isolation), host_(host), plugin_config_(plugin_config), log_(log) {}

  // Throws PluginError naming the callback and its file (with how to trust it
  // when it refuses to run isolated only because nothing vouches for it), or
  // ArgumentError for a bad host key.
  std::unique_ptr<detail::InternalCallback> create(const std::string& name) const;

 private:
  PluginRegistry& registry_;
  const IsolationPolicy& isolation_;
  HostServices& host_;
  const nlohmann::json& plugin_config_;
  bool log_;
};

}  // namespace trainhook
