// The rule of report_to's special names, as HF's TrainingArguments has it:
// "none" and "all" each stand alone. The CLI's validation and the callback
// resolver (plugin_host/selection/callback_resolver.hpp) both ask here, so the flag and
// the Python bridge refuse the same lists.
#pragma once

#include <string>
#include <vector>

namespace trainhook {

// "" when `names` keeps the rule, else what is wrong ("'all' cannot be combined
// with other names, got 'all,wandb'"); the caller prefixes its flag or key.
std::string report_to_list_problem(const std::vector<std::string>& names);

}  // namespace trainhook
