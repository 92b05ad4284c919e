#include <trainhook/csv/csv_text.hpp>

#include <cmath>

namespace trainhook::csv {

std::string quote_cell(std::string_view s) {
  const bool needs = s.find_first_of(",\"\r\n") != std::string_view::npos ||
                     (!s.empty() && (s.front() == ' ' || s.back() == ' '));
  if (!needs) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string value_cell(const nlohmann::json& v) {
  if (v.is_null()) return "";
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
    return v.dump();  // nlohmann: the shortest round-trip text
  }
  if (v.is_number() || v.is_boolean()) return v.dump();
  if (v.is_string()) return quote_cell(v.get<std::string>());
  return quote_cell(v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

std::string join_row(const std::vector<std::string>& cells) {
  std::string out;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) out += ',';
    out += cells[i];
  }
  return out;
}

std::vector<std::string_view> split_records(std::string_view text, bool complete_only) {
  std::vector<std::string_view> out;
  bool quoted = false;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      quoted = !quoted;  // a doubled quote toggles twice
    } else if (c == '\n' && !quoted) {
      size_t end = i;
      if (end > start && text[end - 1] == '\r') --end;
      out.push_back(text.substr(start, end - start));
      start = i + 1;
    }
  }
  if (!complete_only && start < text.size()) out.push_back(text.substr(start));
  return out;
}

std::vector<std::string> parse_fields(std::string_view record) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < record.size(); ++i) {
    const char c = record[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < record.size() && record[i + 1] == '"') {
          fields.back() += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

}  // namespace trainhook::csv
