// "Did you mean ...?" for unknown flags, keys, plugin and callback names.
#pragma once

#include <string>
#include <vector>

namespace trainhook {

// The candidate closest to `name` by edit distance, or "" when none is close
// enough to be a plausible typo.
std::string closest_name(const std::string& name, const std::vector<std::string>& candidates);

}  // namespace trainhook
