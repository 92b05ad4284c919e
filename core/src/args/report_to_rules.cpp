#include <trainhook/args/report_to_rules.hpp>
#include <trainhook/strings.hpp>

#include <algorithm>

namespace trainhook {

std::string report_to_list_problem(const std::vector<std::string>& names) {
  if (names.size() < 2) return "";
  for (const char* special : {"none", "all"}) {
    if (std::find(names.begin(), names.end(), special) != names.end())
      return std::string("'") + special + "' cannot be combined with other names, got '" +
             strings::join(names) + "'";
  }
  return "";
}

}  // namespace trainhook
