// Plugin isolation: a callback named in --plugin_isolation, or whose
// plugin_config section says "isolation": "process", runs in a helper process
// (trainhook-plugin-runner) instead of the trainer's. Its library is loaded
// only there; a crash, hang or exit of it fails that callback's call (named,
// with the cause) and plugin_error_policy decides, as for any failing callback.
// Which callbacks the trainer isolates when neither says (--plugin_isolation
// auto, the default: by the site's trust) is decided by
// plugin_host/selection/isolation_policy.hpp; plugin_isolation_of applies the
// section's keys to what that policy decided.
#pragma once

#include <trainhook/callbacks/callback.hpp>
#include <trainhook/plugin_host/host/host_services.hpp>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace trainhook {

// The environment variable that sets the default bound of one isolated call.
inline constexpr const char* kIsolationTimeoutEnv = "TRAINHOOK_ISOLATION_TIMEOUT";
inline constexpr double kDefaultIsolationTimeoutSeconds = 30.0;
// The environment variable that sizes (in KiB, default 1024) the ring through
// which events a plugin only observes (th_host.set_observe_only) reach its
// helper without a round trip; when the helper falls behind and it is full,
// such events are dropped and counted.
inline constexpr const char* kIsolationRingEnv = "TRAINHOOK_ISOLATION_RING_KIB";

// What the trainer decided before a callback's plugin_config section is read
// (isolation_policy.hpp): isolated or not, and whether the section's
// `isolation` key may change that (not for a callback named in
// --plugin_isolation: the name on the command line wins).
struct IsolationDefault {
  bool isolated = false;
  bool section_may_change = true;
};

struct PluginIsolation {
  bool isolated = false;
  bool by_section = false;  // the section's `isolation` key decided it
  // How long one call (an event, save_state, load_state) may take in the
  // helper before it is killed and the call fails.
  double timeout_seconds = kDefaultIsolationTimeoutSeconds;
  // The callback's plugin_config section without the host's keys (isolation,
  // isolation_timeout), as JSON text: what the plugin itself receives.
  std::string plugin_config = "{}";
};

// `name`'s isolation: `given`, changed by its plugin_config section's key
// `isolation` ("process" | "in_process") where it may be, with the bound of
// one call from `isolation_timeout` (seconds > 0; else
// $TRAINHOOK_ISOLATION_TIMEOUT, else 30). Throws ArgumentError for a bad value.
PluginIsolation plugin_isolation_of(IsolationDefault given, const nlohmann::json& plugin_config,
                                    const std::string& name);

namespace detail {

// Starts the helper for callback `callback` of `library` (never loaded in this
// process) and creates the callback there. Throws PluginError naming the file
// when the helper cannot start or the plugin's create() fails.
std::unique_ptr<InternalCallback> make_isolated_callback(const std::filesystem::path& library,
                                                         const std::string& callback, HostServices& host,
                                                         const std::string& config_json,
                                                         double timeout_seconds);

}  // namespace detail
}  // namespace trainhook
