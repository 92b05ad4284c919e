// The Trainer's callback list, in HF's order: DefaultFlowCallback, the
// report_to integrations, the `callbacks` plugins, the C++ callbacks of
// TrainerOptions, then the progress (or printer) plugin.
//
// The rank rule (docs/plugins.md, "Data-parallel rules"): integrations
// (report_to) are created on world process zero only and never check the rank;
// every other callback, progress and printer included, is created on every
// rank, as HF adds its ProgressCallback everywhere, and checks
// is_world_process_zero itself where it should act once.
#include "trainer_impl.hpp"

#include <trainhook/plugin_host/selection/callback_resolver.hpp>
#include <trainhook/plugin_host/selection/section_check.hpp>
#include <trainhook/plugin_host/selection/site_config.hpp>

#include <trainhook/callbacks/default_flow_callback.hpp>
#include <trainhook/common/errors.hpp>
#include <trainhook/plugin_host/isolation/isolation.hpp>
#include <trainhook/strings.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <stdexcept>

namespace fs = std::filesystem;

namespace trainhook {
namespace {

// Every --plugin_isolation name is a callback this run enables (a typo would
// otherwise leave the untrusted plugin in process without a word).
void check_isolation_names(const TrainingArguments& args, const std::vector<std::string>& enabled) {
  for (const auto& name : args.plugin_isolation)
    if (name != "auto" && name != "none" && std::find(enabled.begin(), enabled.end(), name) == enabled.end())
      throw ArgumentError("--plugin_isolation: '" + name + "' is not a callback of this run (callbacks of " +
                          "this run: " + strings::join(enabled) + ")");
}

bool requests_plugins(const TrainingArguments& a) {
  for (const auto& r : a.report_to) {
    if (r != "none") return true;
  }
  return !a.callbacks.empty();
}

}  // namespace

// One plugin callback: in this process, or in a helper process (the isolation
// policy, decided once here at setup; a plugin_config "isolation" key wins
// under auto and none), in which case its library is never loaded here. Either
// way the plugin receives its plugin_config section without the host's keys.
std::unique_ptr<detail::InternalCallback> Trainer::Impl::create_plugin_callback(const std::string& name) {
  const fs::path library = registry->library_of(name);
  // Judged on the bytes the registry checked and will load (or pass on).
  const IsolationDecision decision = isolation->decide(name, library, registry->library_sha256(name));
  const PluginIsolation chosen =
      plugin_isolation_of(IsolationDefault{decision.isolated, !decision.named}, args.plugin_config, name);
  // Isolated only because nothing vouches for it (not by a name or a key).
  const bool untrusted = chosen.isolated && decision.by_trust && !chosen.by_section;
  if (world_zero())
    spdlog::debug("'{}' ({}): {} ({}; plugin_isolation {})", name, library.string(),
                  chosen.isolated ? "isolated" : "in process", decision.why, isolation->describe_mode());
  if (untrusted && world_zero())
    spdlog::info("'{}' runs in its own process ({}, {}): the model's tensors are not shared with it; {}",
                 name, library.string(), decision.why, isolation->how_to_trust(name, library));
  if (!chosen.isolated) return registry->create(name, *services, chosen.plugin_config);
  try {
    // The runner loads the descriptor checked here, not what the path names by the time it starts.
    const PluginRegistry::PassedLibrary passed = registry->pass_library(name);
    return detail::make_isolated_callback(library, name, *services, chosen.plugin_config,
                                          chosen.timeout_seconds);
  } catch (const PluginError& e) {
    // A plugin that refuses to run isolated (it needs the model's tensors)
    // was isolated only because nothing vouches for it: say how to trust it.
    if (!untrusted) throw;
    throw PluginError(std::string(e.what()) + "\n'" + name + "' runs isolated under plugin_isolation " +
                      isolation->describe_mode() + " (" + decision.why + "); " +
                      isolation->how_to_trust(name, library));
  }
}

void Trainer::Impl::assemble_callbacks(TrainerOptions& options) {
  handler.add(std::make_unique<DefaultFlowCallback>(args));
  // The ABI 1.1 learning-rate factor in checkpoints: the trainer's own, not listed.
  handler.add(access.state_callback(), CallbackHandler::Listing::internal);
  if (options.use_plugins) {
    add_plugin_callbacks(options.plugin_search);
  } else if (requests_plugins(args)) {
    throw std::invalid_argument(
        "report_to/callbacks name plugins, but this Trainer was built with use_plugins = false");
  }
  for (auto& cb : options.callbacks) {
    if (cb.callback) handler.add(std::move(cb));
  }
  if (options.use_plugins) add_progress_callback();
}

void Trainer::Impl::add_plugin_callbacks(const PluginSearchOptions& given) {
  PluginSearchOptions search = given;
  std::vector<fs::path> dirs(args.plugin_dir.begin(), args.plugin_dir.end());
  dirs.insert(dirs.end(), search.plugin_dirs.begin(), search.plugin_dirs.end());
  search.plugin_dirs = dirs;
  search.allow_unsafe_plugin_paths = search.allow_unsafe_plugin_paths || args.allow_unsafe_plugin_paths;
  search.allow_duplicate_plugins = search.allow_duplicate_plugins || args.allow_duplicate_plugins;
  // The site file (site_config.hpp): its trusted folders, pinned libraries and default mode.
  const SiteConfig site = load_site_config();
  registry.emplace(search);
  isolation.emplace(args.plugin_isolation, site,
                    search.default_dir.empty() ? default_plugin_dir() : search.default_dir,
                    registry->lock_file());
  // The names are resolved and checked on every rank, so a typo fails
  // everywhere, and every rank warns alike.
  selection = resolve_callbacks(*registry, CallbackRequest{args.report_to, args.callbacks, args.disable_tqdm},
                                [this](const std::string& w) {
                                  if (world_zero()) spdlog::warn("{}", w);
                                });
  check_plugin_config_sections(args, *registry, selection.enabled());  // no section goes unread
  check_isolation_names(args, selection.enabled());
  // Integrations report from world process zero only, as HF's do.
  if (world_zero()) {
    for (const auto& name : selection.integrations) handler.add(create_plugin_callback(name));
  }
  for (const auto& name : selection.callbacks) handler.add(create_plugin_callback(name));
}

void Trainer::Impl::add_progress_callback() {
  const std::string progress =
      selection.progress.empty() ? (args.disable_tqdm ? "printer" : "progress") : selection.progress;
  if (registry->has(progress)) {
    handler.add(create_plugin_callback(progress));
  } else if (world_zero()) {  // said once, not by every rank
    const std::string dirs = strings::join(registry->searched_dirs());
    spdlog::warn("the '{}' plugin was not found, so no progress is shown (searched: {})", progress,
                 dirs.empty() ? std::string("no folders") : dirs);
  }
}

}  // namespace trainhook
