// How a logged key becomes a Prometheus metric name, and what a label value
// may hold. The rule (README "Metric names"): "trainhook_" + the key with every
// character outside [A-Za-z0-9_] (each byte of a multi-byte UTF-8 character,
// '/', '.', '-', ':', spaces, ...) replaced by '_'. So `eval/acc` and
// `eval_acc` are both `trainhook_eval_acc`; which of two such keys wins is
// MetricNames' business. The prefix keeps a leading digit valid.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace trainhook::prometheus {

inline constexpr std::string_view kPrefix = "trainhook_";

// "trainhook_" + key with [^A-Za-z0-9_] -> '_'.
std::string metric_name_for(std::string_view key);

// True when `name` matches [a-zA-Z_:][a-zA-Z0-9_:]* (the exposition format's rule).
bool is_valid_metric_name(std::string_view name);

// The first-wins table from logged keys to gauge names. Not thread-safe: the
// training thread alone uses it.
class MetricNames {
 public:
  // Names the plugin registers itself (trainhook_up, ...): a key mapping to
  // one of them is refused like a second key mapping to a taken name.
  void reserve(std::string name) { owner_.emplace(std::move(name), std::string()); }

  struct Lookup {
    const std::string* name = nullptr;  // the metric for this key; null: refused
    bool first_refusal = false;         // true once per refused key: warn then
    std::string taken_by;               // when refused: the key that has the name ("" = the plugin's own)
  };
  // The metric name for `key`: its own name when the key has it or the name is
  // free; refused when another key (or the plugin) has it.
  Lookup lookup(std::string_view key);

 private:
  std::unordered_map<std::string, std::string> by_key_;  // key -> its metric name
  std::unordered_map<std::string, std::string> owner_;   // metric name -> key that has it
  std::unordered_set<std::string> refused_;              // keys already warned about
};

}  // namespace trainhook::prometheus
