// This machine's name (gethostname), for run folders, event file names and
// run metadata (TensorBoard, wandb).
#pragma once

#include <string>
#include <string_view>

namespace trainhook::support {

// The host name, or `fallback` when the system gives none.
std::string host_name(std::string_view fallback = {});

}  // namespace trainhook::support
