#include <trainhook/flyte/s3_xml.hpp>

#include <trainhook/flyte/deck.hpp>

#include <cstdlib>

namespace trainhook::flyte::s3xml {

std::vector<std::string_view> blocks(std::string_view xml, std::string_view outer) {
  std::vector<std::string_view> out;
  const std::string open = "<" + std::string(outer) + ">";
  const std::string close = "</" + std::string(outer) + ">";
  size_t pos = 0;
  for (;;) {
    const auto b = xml.find(open, pos);
    if (b == std::string_view::npos) break;
    const auto e = xml.find(close, b + open.size());
    if (e == std::string_view::npos) break;
    out.push_back(xml.substr(b + open.size(), e - b - open.size()));
    pos = e + close.size();
  }
  return out;
}

std::vector<std::string> all(std::string_view xml, std::string_view tag) {
  std::vector<std::string> out;
  for (auto b : blocks(xml, tag)) out.push_back(decode_entities(b));
  return out;
}

std::optional<std::string> first(std::string_view xml, std::string_view tag) {
  auto b = blocks(xml, tag);
  if (b.empty()) return std::nullopt;
  return decode_entities(b.front());
}

std::string decode_entities(std::string_view t) {
  std::string out;
  out.reserve(t.size());
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] != '&') {
      out += t[i];
      continue;
    }
    const auto semi = t.find(';', i);
    if (semi == std::string_view::npos) {
      out += t.substr(i);
      break;
    }
    const auto ent = t.substr(i + 1, semi - i - 1);
    if (ent == "amp")
      out += '&';
    else if (ent == "lt")
      out += '<';
    else if (ent == "gt")
      out += '>';
    else if (ent == "quot")
      out += '"';
    else if (ent == "apos")
      out += '\'';
    else if (!ent.empty() && ent[0] == '#') {
      const std::string num(ent.substr(1));
      const long cp = num.size() > 1 && (num[0] == 'x' || num[0] == 'X')
                          ? std::strtol(num.c_str() + 1, nullptr, 16)
                          : std::strtol(num.c_str(), nullptr, 10);
      // UTF-8 encode the code point.
      if (cp < 0x80) {
        out += static_cast<char>(cp);
      } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
      } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
      } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
      }
    } else {
      out += t.substr(i, semi - i + 1);  // unknown entity: keep as is
    }
    i = semi;
  }
  return out;
}

// The deck's HTML escaping covers XML's five entities (&#39; is valid XML), so
// one escaper serves both.
std::string escape(std::string_view t) { return html_escape(std::string(t)); }

std::optional<std::string> error_of(std::string_view xml) {
  if (xml.find("<Error>") == std::string_view::npos) return std::nullopt;
  const auto err = blocks(xml, "Error");
  const std::string_view body = err.empty() ? xml : err.front();
  return first(body, "Code").value_or("UnknownError") + ": " + first(body, "Message").value_or("");
}

std::string complete_multipart_body(const std::vector<std::pair<int, std::string>>& parts) {
  std::string x = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">";
  for (const auto& [n, etag] : parts)
    x += "<Part><PartNumber>" + std::to_string(n) + "</PartNumber><ETag>" + escape(etag) + "</ETag></Part>";
  x += "</CompleteMultipartUpload>";
  return x;
}

}  // namespace trainhook::flyte::s3xml
