// PluginCallbackFactory (see plugin_callback_factory.hpp).
#include <trainhook/plugin_host/selection/plugin_callback_factory.hpp>

#include <trainhook/common/errors.hpp>
#include <trainhook/plugin_host/isolation/isolation.hpp>
#include <trainhook/plugin_host/registry/plugin_registry.hpp>
#include <trainhook/plugin_host/selection/isolation_policy.hpp>

#include <spdlog/spdlog.h>

namespace trainhook {

std::unique_ptr<detail::InternalCallback> PluginCallbackFactory::create(const std::string& name) const {
  const std::filesystem::path library = registry_.library_of(name);
  // Judged on the bytes the registry checked and will load (or pass on).
  const IsolationDecision decision = isolation_.decide(name, library, registry_.library_sha256(name));
  const PluginIsolation chosen =
      plugin_isolation_of(IsolationDefault{decision.isolated, !decision.named}, plugin_config_, name);
  // Isolated only because nothing vouches for it (not by a name or a key).
  const bool untrusted = chosen.isolated && decision.by_trust && !chosen.by_section;
  if (log_)
    spdlog::debug("'{}' ({}): {} ({}; plugin_isolation {})", name, library.string(),
                  chosen.isolated ? "isolated" : "in process", decision.why, isolation_.describe_mode());
  if (untrusted && log_)
    spdlog::info("'{}' runs in its own process ({}, {}): the model's tensors are not shared with it; {}",
                 name, library.string(), decision.why, isolation_.how_to_trust(name, library));
  if (!chosen.isolated) return registry_.create(name, host_, chosen.plugin_config);
  try {
    // The runner loads the descriptor checked here, not what the path names by the time it starts.
    const PluginRegistry::PassedLibrary passed = registry_.pass_library(name);
    return detail::make_isolated_callback(library, name, host_, chosen.plugin_config, chosen.timeout_seconds);
  } catch (const PluginError& e) {
    // A plugin that refuses to run isolated (it needs the model's tensors)
    // was isolated only because nothing vouches for it: say how to trust it.
    if (!untrusted) throw;
    throw PluginError(std::string(e.what()) + "\n'" + name + "' runs isolated under plugin_isolation " +
                      isolation_.describe_mode() + " (" + decision.why + "); " +
                      isolation_.how_to_trust(name, library));
  }
}

}  // namespace trainhook
