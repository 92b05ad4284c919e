#include <trainhook/plugin_host/selection/callback_resolver.hpp>

#include <trainhook/plugin_host/registry/plugin_registry.hpp>
#include <trainhook/strings.hpp>

#include <algorithm>

namespace trainhook {
namespace {

bool contains(const std::vector<std::string>& v, const std::string& name) {
  return std::find(v.begin(), v.end(), name) != v.end();
}

}  // namespace

std::vector<std::string> CallbackSelection::enabled() const {
  std::vector<std::string> all = integrations;
  all.insert(all.end(), callbacks.begin(), callbacks.end());
  all.push_back(progress);
  return all;
}

CallbackSelection resolve_callbacks(const PluginRegistry& registry, const CallbackRequest& request,
                                    const std::function<void(const std::string&)>& warn) {
  CallbackSelection s;
  s.integrations = registry.resolve_report_to(request.report_to);  // the none/all rule, kinds, names
  registry.check_callbacks(request.callbacks);
  for (const auto& name : request.callbacks) {
    // HF's add_callback: a callback already in the list is added again with a
    // warning; here it runs once, so no event reaches it twice.
    if (contains(s.integrations, name)) {
      if (warn)
        warn("callback '" + name + "' is in both report_to and callbacks: it runs once, as the report_to " +
             "integration (world process zero only)");
      continue;
    }
    if (contains(s.callbacks, name)) {
      if (warn) warn("callback '" + name + "' is named twice in callbacks: it runs once");
      continue;
    }
    s.callbacks.push_back(name);
  }
  s.progress = request.disable_tqdm ? "printer" : "progress";
  return s;
}

}  // namespace trainhook
