// HF's rewrite_logs ("eval_x" -> "eval/x", "test_x" -> "test/x", anything else
// -> "train/x"), the same mapping as trainhook::support::rewrite_log_key (a unit
// test holds them equal), returned in two pieces so the writer emits a tag
// without building a string per value.
#pragma once

#include <string>
#include <string_view>

namespace trainhook::tensorboard {

struct RewrittenKey {
  std::string_view prefix;  // "eval/", "test/" or "train/" (static storage)
  std::string_view name;    // a view into the original key
  std::string str() const { return std::string(prefix).append(name); }
};

inline RewrittenKey rewrite_log_key(std::string_view key) noexcept {
  if (key.substr(0, 5) == "eval_") return {"eval/", key.substr(5)};
  if (key.substr(0, 5) == "test_") return {"test/", key.substr(5)};
  return {"train/", key};
}

}  // namespace trainhook::tensorboard
