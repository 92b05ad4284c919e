// See checked_json.hpp. One linear pass over the text checks nesting depth and
// duplicate keys (with line numbers, which nlohmann's parser does not report
// for them) before nlohmann builds the value.
#include <trainhook/common/checked_json.hpp>

#include <fstream>
#include <iterator>
#include <set>
#include <vector>

namespace trainhook {
namespace {

struct Frame {
  bool object = false;
  bool expect_key = false;  // inside an object, right after '{' or ','
  std::set<std::string> keys;
};

std::string at(const std::string& where, size_t line) { return where + ":" + std::to_string(line) + ": "; }

// The key as JSON means it ("a\u0062" is "ab"); the raw text when it is not a
// valid string (the parse after this pass reports that).
std::string decoded_key(const std::string& text, size_t open, size_t close) {
  const std::string raw = text.substr(open, close - open + 1);
  if (raw.find('\\') == std::string::npos) return raw.substr(1, raw.size() - 2);
  const nlohmann::json v = nlohmann::json::parse(raw, nullptr, /*allow_exceptions=*/false);
  return v.is_string() ? v.get<std::string>() : raw;
}

void check_structure(const std::string& text, const std::string& where, const JsonLimits& limits) {
  std::vector<Frame> stack;
  size_t line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
    } else if (c == '"') {
      const size_t open = i;
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\')
          ++i;
        else if (text[i] == '\n')
          ++line;  // invalid in JSON; the parse reports it
      }
      if (i >= text.size()) return;  // unterminated: the parse reports it
      if (!stack.empty() && stack.back().object && stack.back().expect_key) {
        stack.back().expect_key = false;
        if (limits.reject_duplicate_keys) {
          std::string key = decoded_key(text, open, i);
          if (!stack.back().keys.insert(key).second)
            throw JsonInputError(at(where, line) + "duplicate key '" + key +
                                 "' (each key may appear once in an object)");
        }
      }
    } else if (c == '{' || c == '[') {
      if (stack.size() >= limits.max_depth)
        throw JsonInputError(at(where, line) + "nested deeper than " + std::to_string(limits.max_depth) +
                             " levels of objects/arrays");
      stack.push_back(Frame{c == '{', c == '{', {}});
    } else if (c == '}' || c == ']') {
      if (!stack.empty()) stack.pop_back();
    } else if (c == ',') {
      if (!stack.empty() && stack.back().object) stack.back().expect_key = true;
    }
  }
}

}  // namespace

nlohmann::json parse_checked_json(const std::string& text, const std::string& where, JsonLimits limits) {
  check_structure(text, where, limits);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // nlohmann's what() starts with "[json.exception.parse_error.101] "; users
    // need only the part after it.
    std::string s = e.what();
    if (!s.empty() && s[0] == '[') {
      const size_t close = s.find("] ");
      if (close != std::string::npos) s = s.substr(close + 2);
    }
    throw JsonInputError(where + ": invalid JSON: " + s);
  }
}

nlohmann::json read_checked_json_file(const std::string& path, JsonLimits limits) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw JsonInputError(path + ": cannot be opened (missing or unreadable)");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_checked_json(text, path, limits);
}

}  // namespace trainhook
