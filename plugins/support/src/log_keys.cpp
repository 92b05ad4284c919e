#include <trainhook/support/log_keys.hpp>

#include <cctype>

namespace trainhook::support {

LogKeyParts split_log_key(std::string_view key) noexcept {
  constexpr std::string_view eval = "eval_";
  constexpr std::string_view test = "test_";
  if (key.substr(0, eval.size()) == eval) return {"eval/", key.substr(eval.size())};
  if (key.substr(0, test.size()) == test) return {"test/", key.substr(test.size())};
  return {"train/", key};
}

std::string rewrite_log_key(std::string_view key) {
  const LogKeyParts parts = split_log_key(key);
  return std::string(parts.prefix).append(parts.name);
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
