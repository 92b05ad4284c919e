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

#include <trainhook/args/plugin_config_sections.hpp>

#include <trainhook/callbacks/default_flow_callback.hpp>
#include <trainhook/strings.hpp>

#include <spdlog/spdlog.h>

#include <stdexcept>

namespace fs = std::filesystem;

namespace trainhook {
namespace {

std::string plugin_config_of(const TrainingArguments& args, const std::string& name) {
  if (args.plugin_config.is_object() && args.plugin_config.contains(name))
    return args.plugin_config[name].dump();
  return "{}";
}

bool requests_plugins(const TrainingArguments& a) {
  for (const auto& r : a.report_to) {
    if (r != "none") return true;
  }
  return !a.callbacks.empty();
}

}  // namespace

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
  registry.emplace(search);
  check_plugin_config_sections(args, *registry);  // no plugin_config section goes unread
  // Integrations report from world process zero only, as HF's do (the names
  // are still checked on every rank, so a typo fails everywhere).
  const auto integrations = registry->resolve_report_to(args.report_to);
  if (world_zero()) {
    for (const auto& name : integrations)
      handler.add(registry->create(name, *services, plugin_config_of(args, name)));
  }
  registry->check_callbacks(args.callbacks);
  for (const auto& name : args.callbacks)
    handler.add(registry->create(name, *services, plugin_config_of(args, name)));
}

void Trainer::Impl::add_progress_callback() {
  const std::string progress = args.disable_tqdm ? "printer" : "progress";
  if (registry->has(progress)) {
    handler.add(registry->create(progress, *services, plugin_config_of(args, progress)));
  } else if (world_zero()) {  // said once, not by every rank
    const std::string dirs = strings::join(registry->searched_dirs());
    spdlog::warn("the '{}' plugin was not found, so no progress is shown (searched: {})", progress,
                 dirs.empty() ? std::string("no folders") : dirs);
  }
}

}  // namespace trainhook
