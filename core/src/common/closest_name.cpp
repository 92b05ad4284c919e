// Levenshtein distance with a threshold that scales with the name's length, so
// "tensorbord" suggests "tensorboard" but "x" suggests nothing.
#include <trainhook/common/closest_name.hpp>

#include <algorithm>
#include <cctype>

namespace trainhook {
namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::string closest_name(const std::string& name, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = 0;
  for (const auto& c : candidates) {
    const size_t d = edit_distance(name, c);
    if (best.empty() || d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  if (best.empty()) return {};
  // A plausible typo: at most a third of the longer name, and at least 1 edit allowed.
  const size_t limit = std::max<size_t>(1, std::max(name.size(), best.size()) / 3);
  return best_distance <= limit ? best : std::string();
}

}  // namespace trainhook
