// A YAML --config file -> JSON (see yaml_config.hpp). yaml-cpp does the parsing;
// this file adds what yaml-cpp leaves to its users: the YAML 1.2 typing of
// plain scalars, merge keys, rejecting duplicate keys, and errors as file:line.
#include "yaml_config.hpp"

#include <trainhook/common/errors.hpp>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <sstream>
#include <vector>

namespace trainhook::detail {
namespace {

constexpr const char* kTagPrefix = "tag:yaml.org,2002:";
// Aliases can make a small file expand to a huge tree ("billion laughs"); no
// config needs this many values.
constexpr size_t kMaxValues = 1000000;
// Nesting is bounded too: each level is a C++ call, and an anchor merged into
// itself (`a: &d {<<: *d}`) is a cycle yaml-cpp builds without complaint.
constexpr int kMaxDepth = 64;

// The YAML 1.2 core schema's number forms, matched by hand: std::regex
// recurses once per character and a 50,000-digit scalar exhausts the stack.
bool all_of(const std::string& t, size_t from, bool (*ok)(char)) {
  if (from >= t.size()) return false;
  for (size_t i = from; i < t.size(); ++i)
    if (!ok(t[i])) return false;
  return true;
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_octal(char c) { return c >= '0' && c <= '7'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
size_t sign_length(const std::string& t) { return !t.empty() && (t[0] == '-' || t[0] == '+') ? 1 : 0; }

bool is_decimal(const std::string& t) { return all_of(t, sign_length(t), is_digit); }
bool is_octal_int(const std::string& t) { return t.rfind("0o", 0) == 0 && all_of(t, 2, is_octal); }
bool is_hex_int(const std::string& t) { return t.rfind("0x", 0) == 0 && all_of(t, 2, is_hex); }

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool is_floating(const std::string& t) {
  size_t i = sign_length(t);
  const auto digits = [&] {
    const size_t start = i;
    while (i < t.size() && is_digit(t[i])) ++i;
    return i - start;
  };
  if (i < t.size() && t[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  } else {
    if (digits() == 0) return false;
    if (i < t.size() && t[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '-' || t[i] == '+')) ++i;
    if (digits() == 0) return false;
  }
  return i == t.size();
}

// [-+]?\.(inf|Inf|INF) or \.(nan|NaN|NAN)
bool is_inf_or_nan(const std::string& t) {
  const size_t s = sign_length(t);
  const std::string rest = t.substr(s);
  if (rest == ".inf" || rest == ".Inf" || rest == ".INF") return true;
  return s == 0 && (t == ".nan" || t == ".NaN" || t == ".NAN");
}

// No configuration value needs more digits than this; a longer number is a
// mistake (or an attack on the number parser), reported as such.
constexpr size_t kMaxNumberLength = 400;

// Where each document of a YAML text starts, read as parser events without
// building nodes. yaml-cpp 0.7's LoadAll never returns on a ',' outside [ ] or
// { } at the start of a document (the token is never consumed: empty documents
// without end, growing memory; fuzz/findings), so documents are counted here,
// stopping at the second, before a node is built.
class DocumentStarts final : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> marks;
  void OnDocumentStart(const YAML::Mark& mark) override { marks.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
  }
  void OnMapEnd() override {}
};

class YamlConverter {
 public:
  YamlConverter(const std::string& text, std::string file) : text_(text), file_(std::move(file)) {}

  YamlDocument read() {
    YAML::Node root;
    try {
      DocumentStarts starts;
      std::istringstream in(text_);
      YAML::Parser parser(in);
      while (starts.marks.size() < 2 && parser.HandleNextDocument(starts)) {
      }
      if (starts.marks.size() > 1) {
        const YAML::Mark& second = starts.marks[1];
        if (second.pos >= 0 && static_cast<size_t>(second.pos) < text_.size() && text_[second.pos] == ',')
          fail(line_of(second), "a ',' outside [ ] or { } (column " + std::to_string(second.column + 1) +
                                    "): separate list items with `- ` lines or write them as [a, b]");
        fail(line_of(second), "more than one YAML document (---) in a config file");
      }
      if (!starts.marks.empty()) root = YAML::Load(text_);
    } catch (const YAML::Exception& e) {
      std::string what = "invalid YAML: " + e.msg;
      if (e.mark.column >= 0) what += " (column " + std::to_string(e.mark.column + 1) + ")";
      fail(line_of(e.mark), what);
    }
    YamlDocument doc;
    if (!root.IsDefined() || root.IsNull()) {
      doc.root = nlohmann::json::object();
      return doc;
    }
    if (!root.IsMap())
      fail(line_of(root.Mark()), "the top level must be a mapping of `name: value` lines, not a " +
                                     std::string(root.IsSequence() ? "list" : "single value"));
    doc.root = mapping(root, "", doc.key_lines);
    return doc;
  }

 private:
  // line <= 0: not known.
  [[noreturn]] void fail(int line, const std::string& what) const {
    throw ArgumentError(file_ + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + what);
  }

  static int line_of(const YAML::Mark& mark) { return mark.line >= 0 ? mark.line + 1 : 0; }

  nlohmann::json value(const YAML::Node& node, const std::string& path, std::map<std::string, int>& lines) {
    if (++values_ > kMaxValues)
      fail(line_of(node.Mark()),
           "more than " + std::to_string(kMaxValues) + " values (aliases nested too deep?)");
    switch (node.Type()) {
      case YAML::NodeType::Map:
        check_collection_tag(node);
        return mapping(node, path, lines);
      case YAML::NodeType::Sequence: {
        check_collection_tag(node);
        const Deeper deeper(*this, node);
        nlohmann::json list = nlohmann::json::array();
        for (const auto& item : node) list.push_back(value(item, path, lines));
        return list;
      }
      case YAML::NodeType::Scalar:
        return scalar(node);
      default:  // Null (also `key:` with nothing after it)
        if (node.Tag() == std::string(kTagPrefix) + "str") return "";
        return nullptr;
    }
  }

  void check_collection_tag(const YAML::Node& node) const {
    const std::string& tag = node.Tag();
    if (tag == "?" || tag == "!" || tag == std::string(kTagPrefix) + "map" ||
        tag == std::string(kTagPrefix) + "seq")
      return;
    fail(line_of(node.Mark()), "the tag '" + tag + "' is not supported");
  }

  // Keys written in this mapping win over merged ones; among merged mappings
  // (<<: [*a, *b]) the earlier one wins, as the YAML merge-key spec says.
  nlohmann::json mapping(const YAML::Node& node, const std::string& path, std::map<std::string, int>& lines) {
    const Deeper deeper(*this, node);
    nlohmann::json map = nlohmann::json::object();
    std::map<std::string, int> written;  // key -> line, for duplicates
    YAML::Node merge;
    int merge_line = 0;
    // By value: yaml-cpp's iterator hands out its pairs as temporaries.
    for (const auto& pair : node) {
      const YAML::Node& k = pair.first;
      const int line = line_of(k.Mark());
      if (!k.IsScalar())
        fail(line, k.IsNull() ? "an empty key" : "a key must be a plain name, not a list or mapping");
      check_quote_closed(k);
      const std::string& key = k.Scalar();
      const std::string full = path.empty() ? key : path + "." + key;
      if (key == "<<" && k.Tag() == "?") {
        if (merge_line != 0)
          fail(line, "duplicate merge key '<<' (first at line " + std::to_string(merge_line) + ")");
        merge = pair.second;
        merge_line = line;
        continue;
      }
      const auto [first, inserted] = written.emplace(key, line);
      if (!inserted)
        fail(line, "duplicate key '" + full + "' (first at line " + std::to_string(first->second) + ")");
      lines[full] = line;
      map[key] = value(pair.second, full, lines);
    }
    if (merge_line != 0) merge_into(map, merge, merge_line, path, lines);
    return map;
  }

  void merge_into(nlohmann::json& map, const YAML::Node& merge, int line, const std::string& path,
                  std::map<std::string, int>& lines) {
    std::vector<YAML::Node> sources;
    if (merge.IsMap()) {
      sources.push_back(merge);
    } else if (merge.IsSequence()) {
      for (const auto& m : merge) sources.push_back(m);
    } else {
      fail(line, "a merge key (<<) takes a mapping or a list of mappings, e.g. `<<: *defaults`");
    }
    for (const auto& source : sources) {
      if (!source.IsMap()) fail(line, "a merge key (<<) takes a mapping or a list of mappings");
      std::map<std::string, int> source_lines;
      nlohmann::json merged = mapping(source, path, source_lines);
      for (auto& [key, v] : merged.items()) {
        if (map.contains(key)) continue;
        map[key] = std::move(v);
        // The lines of the merged key and of everything under it.
        const std::string full = path.empty() ? key : path + "." + key;
        for (auto l = source_lines.lower_bound(full); l != source_lines.end(); ++l) {
          if (l->first != full && l->first.compare(0, full.size() + 1, full + ".") != 0) break;
          lines.insert(*l);
        }
      }
    }
  }

  nlohmann::json scalar(const YAML::Node& node) const {
    const std::string& tag = node.Tag();
    const std::string& text = node.Scalar();
    const int line = line_of(node.Mark());
    check_quote_closed(node);
    if (tag == "!") return text;  // quoted or block scalar
    if (tag == "?") return plain(text, line);
    if (tag.compare(0, std::char_traits<char>::length(kTagPrefix), kTagPrefix) != 0)
      fail(line, "the tag '" + tag + "' is not supported");
    const std::string type = tag.substr(std::char_traits<char>::length(kTagPrefix));
    if (type == "str") return text;
    nlohmann::json v = plain(text, line);
    const bool ok = (type == "int" && v.is_number_integer()) ||
                    (type == "float" && (v.is_number() || is_inf_or_nan(text))) ||
                    (type == "bool" && v.is_boolean()) || (type == "null" && v.is_null());
    if (!ok) fail(line, "'" + text + "' is not a valid !!" + type);
    if (type == "float" && v.is_number_integer()) return static_cast<double>(v.get<int64_t>());
    return v;
  }

  // YAML 1.2 core schema (yaml-cpp already turned null/~/empty into Null nodes).
  nlohmann::json plain(const std::string& t, int line) const {
    if (t == "null" || t == "Null" || t == "NULL" || t == "~" || t.empty()) return nullptr;
    if (t == "true" || t == "True" || t == "TRUE") return true;
    if (t == "false" || t == "False" || t == "FALSE") return false;
    const bool number = is_decimal(t) || is_octal_int(t) || is_hex_int(t) || is_floating(t);
    if (number && t.size() > kMaxNumberLength)
      fail(line, "a number of " + std::to_string(t.size()) + " characters (at most " +
                     std::to_string(kMaxNumberLength) + "); quote it if it is meant as text");
    try {
      if (is_decimal(t)) return static_cast<int64_t>(std::stoll(t));
      if (is_octal_int(t)) return static_cast<int64_t>(std::stoll(t.substr(2), nullptr, 8));
      if (is_hex_int(t)) return static_cast<int64_t>(std::stoll(t.substr(2), nullptr, 16));
      if (is_floating(t)) return std::stod(t);
    } catch (const std::out_of_range&) {
      fail(line, "the number " + t + " is out of range");
    }
    // JSON cannot hold inf/nan; keep them as text so the option reports
    // "expected a finite number".
    if (is_inf_or_nan(t)) {
      std::string text = t;
      text.erase(text.find('.'), 1);  // ".inf" -> "inf", which number options parse
      return text;
    }
    return t;
  }

  // yaml-cpp 0.7 accepts a quoted scalar that is still open at the end of the
  // file (`run_name: "open` swallows the rest of the file). A quote that does
  // not close before the end of the text is an error here.
  void check_quote_closed(const YAML::Node& node) const {
    const YAML::Mark mark = node.Mark();
    if (mark.pos < 0) return;
    size_t i = static_cast<size_t>(mark.pos);
    // The mark may sit on a tag or an anchor before the scalar.
    while (i < text_.size() && (text_[i] == '!' || text_[i] == '&')) {
      while (i < text_.size() && text_[i] != ' ' && text_[i] != '\t' && text_[i] != '\n') ++i;
      while (i < text_.size() && (text_[i] == ' ' || text_[i] == '\t')) ++i;
    }
    if (i >= text_.size() || (text_[i] != '"' && text_[i] != '\'')) return;
    const char quote = text_[i];
    for (++i; i < text_.size(); ++i) {
      if (quote == '"' && text_[i] == '\\') {
        ++i;
      } else if (text_[i] == quote) {
        if (quote == '\'' && i + 1 < text_.size() && text_[i + 1] == '\'') {
          ++i;  // '' is a quote inside a single-quoted string
        } else {
          return;
        }
      }
    }
    fail(line_of(mark), std::string("unterminated ") + (quote == '"' ? "double" : "single") + " quote");
  }

  const std::string& text_;
  std::string file_;
  size_t values_ = 0;
  int depth_ = 0;

  // One nesting level (a mapping or a list) for the life of the call that reads it.
  struct Deeper {
    YamlConverter& c;
    Deeper(YamlConverter& converter, const YAML::Node& node) : c(converter) {
      if (++c.depth_ > kMaxDepth)
        c.fail(line_of(node.Mark()), "values nested more than " + std::to_string(kMaxDepth) +
                                         " levels deep (an alias or merge key (<<) that refers to itself?)");
    }
    ~Deeper() { --c.depth_; }
    Deeper(const Deeper&) = delete;
    Deeper& operator=(const Deeper&) = delete;
  };
};

}  // namespace

YamlDocument parse_yaml_config(const std::string& text, const std::string& file) {
  return YamlConverter(text, file).read();
}

}  // namespace trainhook::detail
