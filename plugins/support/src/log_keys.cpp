#include <trainhook/support/log_keys.hpp>

#include <cctype>

namespace trainhook::support {

std::string rewrite_log_key(std::string_view key) {
  constexpr std::string_view eval = "eval_";
  constexpr std::string_view test = "test_";
  if (key.substr(0, eval.size()) == eval) return "eval/" + std::string(key.substr(eval.size()));
  if (key.substr(0, test.size()) == test) return "test/" + std::string(key.substr(test.size()));
  return "train/" + std::string(key);
}

std::string sanitize_key(std::string_view key, std::string_view allowed_extra) {
  std::string out(key);
  for (char& c : out) {
    bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!alnum && allowed_extra.find(c) == std::string_view::npos) c = '_';
  }
  return out;
}

}  // namespace trainhook::support
