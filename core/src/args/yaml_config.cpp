// A small, strict YAML-subset reader for --config files (see yaml_config.hpp).
// Line-based: block structure by indentation, flow values by recursive descent.
#include "yaml_config.hpp"

#include <trainhook/args/argument_parser.hpp>

#include <cctype>
#include <cstring>
#include <regex>
#include <vector>

namespace trainhook::detail {
namespace {

struct Line {
  int number;        // 1-based
  size_t indent;     // leading spaces
  std::string text;  // without indentation, comment and trailing spaces
};

class YamlReader {
 public:
  YamlReader(const std::string& text, std::string file) : file_(std::move(file)) { split_lines(text); }

  YamlDocument read() {
    YamlDocument doc;
    if (lines_.empty()) {
      doc.root = nlohmann::json::object();
      return doc;
    }
    if (lines_[0].indent != 0) fail(lines_[0].number, "the first key must not be indented");
    size_t i = 0;
    doc.root = block(i, 0, "");
    if (i != lines_.size()) fail(lines_[i].number, "unexpected indentation");
    if (!doc.root.is_object())
      fail(lines_[0].number, "the top level must be a mapping of `name: value` lines, not a list");
    doc.key_lines = std::move(key_lines_);
    return doc;
  }

 private:
  [[noreturn]] void fail(int line, const std::string& what) const {
    throw ArgumentError(file_ + ":" + std::to_string(line) + ": " + what);
  }

  // ---- lines ----------------------------------------------------------------

  void split_lines(const std::string& text) {
    size_t pos = 0;
    int number = 0;
    bool started = false;
    while (pos <= text.size()) {
      const size_t nl = text.find('\n', pos);
      std::string raw = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
      pos = nl == std::string::npos ? text.size() + 1 : nl + 1;
      ++number;
      if (!raw.empty() && raw.back() == '\r') raw.pop_back();
      size_t indent = 0;
      while (indent < raw.size() && (raw[indent] == ' ' || raw[indent] == '\t')) {
        if (raw[indent] == '\t') {
          // Only a tab in an otherwise blank or comment line is harmless.
          const std::string rest = strip_comment(raw.substr(indent), number);
          if (rest.find_first_not_of(" \t") == std::string::npos) break;
          fail(number, "a tab in the indentation (YAML indents with spaces)");
        }
        ++indent;
      }
      std::string body = strip_comment(raw.substr(indent), number);
      while (!body.empty() && (body.back() == ' ' || body.back() == '\t')) body.pop_back();
      if (body.find_first_not_of(" \t") == std::string::npos) continue;
      if (indent == 0 && body == "---") {
        if (started) fail(number, "more than one YAML document (---) in a config file");
        started = true;
        continue;
      }
      if (indent == 0 && body == "...") break;
      if (indent == 0 && body[0] == '%') fail(number, "YAML directives (%) are not supported");
      started = true;
      lines_.push_back({number, indent, body});
    }
  }

  // Cuts a comment: '#' at the start or after a space, outside quotes.
  std::string strip_comment(const std::string& s, int number) const {
    char quote = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      const char c = s[i];
      if (quote != 0) {
        if (c == '\\' && quote == '"') {
          ++i;
        } else if (c == quote) {
          if (quote == '\'' && i + 1 < s.size() && s[i + 1] == '\'') {
            ++i;
          } else {
            quote = 0;
          }
        }
        continue;
      }
      const bool token_start = i == 0 || std::strchr(" \t[{,:", s[i - 1]) != nullptr;
      if ((c == '"' || c == '\'') && token_start) {
        quote = c;
      } else if (c == '#' && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t')) {
        return s.substr(0, i);
      }
    }
    if (quote != 0)
      fail(number, std::string("unterminated ") + (quote == '"' ? "double" : "single") + " quote");
    return s;
  }

  // ---- block structure ---------------------------------------------------------

  static bool is_list_item(const std::string& t) {
    return t == "-" || (t.size() > 1 && t[0] == '-' && t[1] == ' ');
  }

  nlohmann::json block(size_t& i, size_t indent, const std::string& path) {
    if (is_list_item(lines_[i].text)) return list_block(i, indent, path);
    return map_block(i, indent, path);
  }

  nlohmann::json list_block(size_t& i, size_t indent, const std::string& path) {
    nlohmann::json list = nlohmann::json::array();
    while (i < lines_.size() && lines_[i].indent == indent && is_list_item(lines_[i].text)) {
      const Line& line = lines_[i];
      const std::string item = trim(line.text.substr(1));
      ++i;
      if (item.empty()) {
        if (i < lines_.size() && lines_[i].indent > indent) {
          list.push_back(block(i, lines_[i].indent, path));
        } else {
          list.push_back(nullptr);
        }
        continue;
      }
      if (is_list_item(item)) fail(line.number, "nested `- - item` lists are not supported; use [a, b]");
      if (find_key_colon(item) != std::string::npos && item[0] != '[' && item[0] != '{' && item[0] != '"' &&
          item[0] != '\'')
        fail(line.number, "lists of mappings (`- key: value`) are not supported in a config file");
      list.push_back(value_text(item, line.number));
    }
    if (i < lines_.size() && lines_[i].indent > indent) fail(lines_[i].number, "unexpected indentation");
    return list;
  }

  nlohmann::json map_block(size_t& i, size_t indent, const std::string& path) {
    nlohmann::json map = nlohmann::json::object();
    while (i < lines_.size() && lines_[i].indent == indent) {
      const Line& line = lines_[i];
      if (is_list_item(line.text)) fail(line.number, "a list item where a `key: value` line was expected");
      const size_t colon = find_key_colon(line.text);
      if (colon == std::string::npos) fail(line.number, "expected `key: value`, got \"" + line.text + "\"");
      const std::string key = key_text(trim(line.text.substr(0, colon)), line.number);
      const std::string full = path.empty() ? key : path + "." + key;
      if (map.contains(key)) fail(line.number, "duplicate key '" + full + "'");
      key_lines_[full] = line.number;
      const std::string rest = trim(line.text.substr(colon + 1));
      ++i;
      if (!rest.empty()) {
        map[key] = value_text(rest, line.number);
        if (i < lines_.size() && lines_[i].indent > indent)
          fail(lines_[i].number, "unexpected indentation (the key '" + full + "' already has a value)");
        continue;
      }
      if (i < lines_.size() && lines_[i].indent > indent) {
        map[key] = block(i, lines_[i].indent, full);
      } else if (i < lines_.size() && lines_[i].indent == indent && is_list_item(lines_[i].text)) {
        map[key] = list_block(i, indent, full);  // "key:\n- a" is a list too
      } else {
        map[key] = nullptr;
      }
    }
    if (i < lines_.size() && lines_[i].indent > indent) fail(lines_[i].number, "unexpected indentation");
    return map;
  }

  // The ':' ending a mapping key (followed by a space or the end), outside quotes
  // and brackets; npos when none.
  static size_t find_key_colon(const std::string& s) {
    char quote = 0;
    int depth = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      const char c = s[i];
      if (quote != 0) {
        if (c == '\\' && quote == '"')
          ++i;
        else if (c == quote)
          quote = 0;
        continue;
      }
      if ((c == '"' || c == '\'') && (i == 0 || s[i - 1] == ' '))
        quote = c;
      else if (c == '[' || c == '{')
        ++depth;
      else if (c == ']' || c == '}')
        --depth;
      else if (c == ':' && depth == 0 && (i + 1 == s.size() || s[i + 1] == ' '))
        return i;
    }
    return std::string::npos;
  }

  std::string key_text(const std::string& k, int number) {
    if (k.empty()) fail(number, "an empty key");
    if (k[0] == '"' || k[0] == '\'') {
      size_t pos = 0;
      std::string out = quoted(k, pos, number);
      if (pos != k.size()) fail(number, "unexpected text after the quoted key " + k);
      return out;
    }
    if (k[0] == '?' || k[0] == '&' || k[0] == '*' || k[0] == '!')
      fail(number, "complex keys, anchors, aliases and tags are not supported");
    return k;
  }

  // ---- values --------------------------------------------------------------------

  nlohmann::json value_text(const std::string& s, int number) {
    const char c = s[0];
    if (c == '|' || c == '>') fail(number, "block scalars (| or >) are not supported; quote the string");
    if (c == '&' || c == '*') fail(number, "anchors and aliases (& *) are not supported");
    if (c == '!') fail(number, "tags (!) are not supported");
    size_t pos = 0;
    nlohmann::json v = flow_value(s, pos, number, /*in_flow=*/false);
    skip_spaces(s, pos);
    if (pos != s.size()) fail(number, "unexpected text \"" + s.substr(pos) + "\" after the value");
    return v;
  }

  static void skip_spaces(const std::string& s, size_t& pos) {
    while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t')) ++pos;
  }

  nlohmann::json flow_value(const std::string& s, size_t& pos, int number, bool in_flow) {
    skip_spaces(s, pos);
    if (pos >= s.size()) fail(number, "a value is missing");
    const char c = s[pos];
    if (c == '[') return flow_list(s, pos, number);
    if (c == '{') return flow_map(s, pos, number);
    if (c == '"' || c == '\'') return quoted(s, pos, number);
    // A plain scalar runs to the end of the line, or in a flow to , ] }.
    const size_t start = pos;
    while (pos < s.size()) {
      const char d = s[pos];
      if (in_flow && (d == ',' || d == ']' || d == '}')) break;
      if (in_flow && d == ':' && (pos + 1 == s.size() || s[pos + 1] == ' ')) break;
      ++pos;
    }
    return plain_scalar(trim(s.substr(start, pos - start)), number);
  }

  nlohmann::json flow_list(const std::string& s, size_t& pos, int number) {
    nlohmann::json list = nlohmann::json::array();
    ++pos;  // [
    skip_spaces(s, pos);
    if (pos < s.size() && s[pos] == ']') {
      ++pos;
      return list;
    }
    while (true) {
      list.push_back(flow_value(s, pos, number, true));
      skip_spaces(s, pos);
      if (pos >= s.size()) fail(number, "unterminated list: ']' is missing");
      if (s[pos] == ']') {
        ++pos;
        return list;
      }
      if (s[pos] != ',') fail(number, std::string("expected ',' or ']' in a list, got '") + s[pos] + "'");
      ++pos;
    }
  }

  nlohmann::json flow_map(const std::string& s, size_t& pos, int number) {
    nlohmann::json map = nlohmann::json::object();
    ++pos;  // {
    skip_spaces(s, pos);
    if (pos < s.size() && s[pos] == '}') {
      ++pos;
      return map;
    }
    while (true) {
      skip_spaces(s, pos);
      nlohmann::json key = flow_value(s, pos, number, true);
      const std::string k = key.is_string() ? key.get<std::string>() : key.dump();
      skip_spaces(s, pos);
      if (pos >= s.size() || s[pos] != ':') fail(number, "expected ':' after the key '" + k + "' in {...}");
      ++pos;
      if (map.contains(k)) fail(number, "duplicate key '" + k + "' in {...}");
      map[k] = flow_value(s, pos, number, true);
      skip_spaces(s, pos);
      if (pos >= s.size()) fail(number, "unterminated mapping: '}' is missing");
      if (s[pos] == '}') {
        ++pos;
        return map;
      }
      if (s[pos] != ',') fail(number, std::string("expected ',' or '}' in a mapping, got '") + s[pos] + "'");
      ++pos;
    }
  }

  std::string quoted(const std::string& s, size_t& pos, int number) {
    const char q = s[pos++];
    std::string out;
    while (pos < s.size()) {
      const char c = s[pos++];
      if (q == '\'') {
        if (c == '\'') {
          if (pos < s.size() && s[pos] == '\'') {
            out += '\'';
            ++pos;
            continue;
          }
          return out;
        }
        out += c;
        continue;
      }
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos >= s.size()) break;
      const char e = s[pos++];
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case '0':
          out += '\0';
          break;
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case ' ':
          out += ' ';
          break;
        case 'u': {
          if (pos + 4 > s.size()) fail(number, "a \\u escape needs 4 hex digits");
          unsigned cp = 0;
          for (int k = 0; k < 4; ++k) {
            const char h = s[pos++];
            if (!std::isxdigit(static_cast<unsigned char>(h)))
              fail(number, "a \\u escape needs 4 hex digits");
            cp = cp * 16 + static_cast<unsigned>(std::isdigit(static_cast<unsigned char>(h))
                                                     ? h - '0'
                                                     : std::tolower(h) - 'a' + 10);
          }
          append_utf8(out, cp);
          break;
        }
        default:
          fail(number, std::string("unknown escape \\") + e + " in a double-quoted string");
      }
    }
    fail(number, std::string("unterminated ") + (q == '"' ? "double" : "single") + " quote");
  }

  static void append_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  nlohmann::json plain_scalar(const std::string& t, int number) {
    if (t.empty() || t == "~" || t == "null" || t == "Null" || t == "NULL") return nullptr;
    if (t == "true" || t == "True" || t == "TRUE") return true;
    if (t == "false" || t == "False" || t == "FALSE") return false;
    static const std::regex integer(R"([-+]?[0-9]+)");
    static const std::regex floating(R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
    static const std::regex infinity(R"([-+]?\.(inf|Inf|INF))");
    static const std::regex nan(R"(\.(nan|NaN|NAN))");
    if (std::regex_match(t, integer)) {
      try {
        return static_cast<int64_t>(std::stoll(t));
      } catch (const std::out_of_range&) {
        fail(number, "the integer " + t + " is out of range");
      }
    }
    if (std::regex_match(t, floating)) return std::stod(t);
    // JSON cannot hold inf/nan; keep them as text so the option reports
    // "expected a finite number".
    if (std::regex_match(t, infinity) || std::regex_match(t, nan)) {
      std::string text = t;
      text.erase(text.find('.'), 1);  // ".inf" -> "inf", which number options parse
      return text;
    }
    if (t[0] == '&' || t[0] == '*' || t[0] == '!')
      fail(number, "anchors, aliases and tags are not supported");
    return t;
  }

  static std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string::npos) return {};
    const auto e = s.find_last_not_of(" \t");
    return s.substr(b, e - b + 1);
  }

  std::string file_;
  std::vector<Line> lines_;
  std::map<std::string, int> key_lines_;
};

}  // namespace

YamlDocument parse_yaml_subset(const std::string& text, const std::string& file) {
  return YamlReader(text, file).read();
}

}  // namespace trainhook::detail
