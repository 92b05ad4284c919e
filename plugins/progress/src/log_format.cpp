#include <trainhook/progress/log_format.hpp>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace trainhook::progress {

std::string python_float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";

  // Shortest round-trip digits, in scientific form "d.ddde±XX".
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  const std::string sci(buf, res.ptr);
  const size_t e_pos = sci.find('e');
  std::string mantissa = sci.substr(0, e_pos);
  const int exponent = std::atoi(sci.c_str() + e_pos + 1);
  const bool negative = mantissa[0] == '-';
  if (negative) mantissa.erase(0, 1);
  std::string digits;
  for (char c : mantissa)
    if (c != '.') digits += c;

  std::string out = negative ? "-" : "";
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out += "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    } else if (static_cast<size_t>(exponent) + 1 >= digits.size()) {
      out += digits + std::string(static_cast<size_t>(exponent) + 1 - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, static_cast<size_t>(exponent) + 1) + "." +
             digits.substr(static_cast<size_t>(exponent) + 1);
    }
  } else {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char exp_buf[16];
    std::snprintf(exp_buf, sizeof exp_buf, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    out += exp_buf;
  }
  return out;
}

std::string python_str_repr(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    switch (c) {
      case '\'':
        out += "\\'";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(c));
          out += hex;
        } else {
          out += c;
        }
    }
  }
  return out + "'";
}

std::string format_logs(const LogValues& logs, const LogFormatOptions& options) {
  std::string out = "{";
  bool first = true;
  auto add = [&](std::string_view key, const std::string& value_repr) {
    if (!first) out += ", ";
    first = false;
    out += python_str_repr(key) + ": " + value_repr;
  };
  for (const auto& [key, value] : logs.numbers) {
    if (key == "total_flos") continue;
    double v = value;
    if (options.round_epoch && key == "epoch" && std::isfinite(v)) v = std::nearbyint(v * 100.0) / 100.0;
    add(key, python_float_repr(v));
  }
  for (const auto& [key, value] : logs.strings) {
    if (key == "total_flos") continue;
    if (options.max_str_len > 0 && value.size() > options.max_str_len)
      add(key, python_str_repr("[String too long to display, length: " + std::to_string(value.size()) +
                               " > " + std::to_string(options.max_str_len) +
                               ". Consider increasing `max_str_len` if needed.]"));
    else
      add(key, python_str_repr(value));
  }
  return out + "}";
}

}  // namespace trainhook::progress
