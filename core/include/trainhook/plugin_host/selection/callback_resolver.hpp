// Which callbacks a run enables: the one place that turns report_to,
// `callbacks` and the progress default into the ordered, de-duplicated list,
// with every list rule and its error or warning. The Trainer, the plugin_config
// section check and the Python bridge all call it, so the CLI and Python refuse
// and accept the same lists.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace trainhook {

class PluginRegistry;

struct CallbackRequest {
  std::vector<std::string> report_to;  // "none" (or empty), "all", or integration names
  std::vector<std::string> callbacks;  // callback (or integration) names, run on every rank
  bool disable_tqdm = false;           // the progress default: "printer" rather than "progress"
};

struct CallbackSelection {
  // HF's order after DefaultFlowCallback: the report_to integrations (created
  // on world process zero only), then `callbacks` (every rank), then progress.
  std::vector<std::string> integrations;
  std::vector<std::string> callbacks;
  std::string progress;  // "progress" or "printer"; may be absent from the registry
  // Every name above, in that order.
  std::vector<std::string> enabled() const;
};

// Throws PluginError naming the list and the name at fault (an unknown name
// lists what exists and where the registry looked). A name given twice, or in
// both report_to and callbacks, runs once, with HF's warning through `warn`.
CallbackSelection resolve_callbacks(const PluginRegistry& registry, const CallbackRequest& request,
                                    const std::function<void(const std::string&)>& warn);

}  // namespace trainhook
