// The small string helpers every part of trainhook needs (trim, lower, split,
// join, prefix and suffix tests), once. Header-only and plain C++17 so the
// core, the plugins and their support library share them without linking
// anything; ASCII only, as every key, flag and setting name is.
#pragma once

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace trainhook::strings {

inline constexpr std::string_view kWhitespace = " \t\r\n\f\v";

inline std::string_view trim_view(std::string_view s) {
  const size_t b = s.find_first_not_of(kWhitespace);
  if (b == std::string_view::npos) return {};
  const size_t e = s.find_last_not_of(kWhitespace);
  return s.substr(b, e - b + 1);
}

inline std::string trim(std::string_view s) { return std::string(trim_view(s)); }

inline std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

inline bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

inline bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Every piece between separators, empty ones included ("a,,b" -> a, "", b;
// "" -> one empty piece); trimmed when asked.
inline std::vector<std::string> split(std::string_view s, char sep, bool trim_pieces = false) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    const std::string_view piece =
        s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start);
    out.emplace_back(trim_pieces ? trim_view(piece) : piece);
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

template <class Range>
std::string join(const Range& items, std::string_view sep = ", ") {
  std::string out;
  bool first = true;
  for (const auto& item : items) {
    if (!first) out += sep;
    out += item;
    first = false;
  }
  return out;
}

}  // namespace trainhook::strings
