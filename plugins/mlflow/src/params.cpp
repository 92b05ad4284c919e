#include <trainhook/mlflow/params.hpp>
#include <trainhook/support/secrets.hpp>

#include <trainhook/secret_keys.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace trainhook::mlflow {

namespace {

// Python's repr() of a float (float_repr_style "short"): the shortest digits
// that round-trip, fixed notation for decimal exponents -4..15 ("0.0001",
// "5.0", "1000000000000000.0"), else scientific with a signed exponent of at
// least two digits ("1e-05", "1.5e+16").
std::string py_float(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);  // "-d.ddde+XX"
  std::string sign;
  if (!sci.empty() && sci[0] == '-') {
    sign = "-";
    sci.erase(0, 1);
  }
  const size_t e_pos = sci.find('e');
  std::string digits = sci.substr(0, e_pos);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int exp10 = std::stoi(sci.substr(e_pos + 1));
  if (exp10 < -4 || exp10 >= 16) {
    std::string out = sign + digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    const int a = exp10 < 0 ? -exp10 : exp10;
    out += exp10 < 0 ? "e-" : "e+";
    if (a < 10) out += "0";
    return out + std::to_string(a);
  }
  const int point = exp10 + 1;  // digits before the decimal point
  const int n = static_cast<int>(digits.size());
  if (point <= 0) return sign + "0." + std::string(static_cast<size_t>(-point), '0') + digits;
  if (point >= n) return sign + digits + std::string(static_cast<size_t>(point - n), '0') + ".0";
  return sign + digits.substr(0, static_cast<size_t>(point)) + "." +
         digits.substr(static_cast<size_t>(point));
}

// Decodes one UTF-8 sequence at s[i] (advancing i); invalid bytes come back
// as themselves so nothing is lost.
uint32_t next_code_point(const std::string& s, size_t& i) {
  const auto b = static_cast<unsigned char>(s[i]);
  int len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
  if (len <= 1 || i + static_cast<size_t>(len) > s.size()) {
    ++i;
    return b;
  }
  uint32_t cp = b & (0x7Fu >> len);
  for (int k = 1; k < len; ++k) {
    const auto c = static_cast<unsigned char>(s[i + static_cast<size_t>(k)]);
    if ((c & 0xC0) != 0x80) {
      ++i;
      return b;
    }
    cp = (cp << 6) | (c & 0x3Fu);
  }
  i += static_cast<size_t>(len);
  return cp;
}

// Code points Python's str.isprintable() rejects besides the C0/C1 controls:
// the separators other than ' ' (Zs, Zl, Zp) and the common format
// characters (Cf). Rarer unassigned/private-use code points are kept as they
// are, unlike Python, which escapes them.
bool py_unprintable(uint32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0xA0) || cp == 0xAD || cp == 0x61C || cp == 0x1680 ||
         cp == 0x180E || (cp >= 0x2000 && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202F) ||
         (cp >= 0x205F && cp <= 0x206F) || cp == 0x3000 || cp == 0xFEFF || (cp >= 0xFFF9 && cp <= 0xFFFB) ||
         (cp >= 0xD800 && cp <= 0xDFFF);
}

// Python's repr() of a str: single quotes unless the text has a ' and no ",
// backslash escapes for the quote in use, \\, \t \n \r and \xhh / \uhhhh for
// other unprintable characters; printable non-ASCII stays as it is.
std::string py_str_repr(const std::string& s) {
  const bool has_single = s.find('\'') != std::string::npos;
  const bool has_double = s.find('"') != std::string::npos;
  const char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, quote);
  for (size_t i = 0; i < s.size();) {
    const size_t start = i;
    const uint32_t cp = next_code_point(s, i);
    if (cp == static_cast<uint32_t>(quote) || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (py_unprintable(cp)) {
      char buf[16];
      if (cp < 0x100)
        std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(cp));
      else
        std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
      out += buf;
    } else {
      out.append(s, start, i - start);
    }
  }
  out += quote;
  return out;
}

// Python's repr() of a JSON-decoded value (what str() of a list or dict
// prints for its items). Members whose key names a credential show the
// "<KEY>" placeholder, whatever the host passed.
std::string py_repr(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::string:
      return py_str_repr(v.get_ref<const std::string&>());
    case nlohmann::json::value_t::boolean:
      return v.get<bool>() ? "True" : "False";
    case nlohmann::json::value_t::null:
      return "None";
    case nlohmann::json::value_t::number_float:
      return py_float(v.get<double>());
    case nlohmann::json::value_t::array: {
      std::string out = "[";
      for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + py_repr(v[i]);
      return out + "]";
    }
    case nlohmann::json::value_t::object: {
      std::string out = "{";
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        out += (first ? "" : ", ") + py_str_repr(it.key()) + ": " +
               (support::looks_secret(it.key()) ? py_str_repr(trainhook::secret_placeholder(it.key()))
                                                : py_repr(*it));
        first = false;
      }
      return out + "}";
    }
    default:
      return v.dump();  // integers
  }
}

// Python's str() of a JSON-decoded value, which is what HF sends: strings
// as they are, everything else as repr() (str(['mlflow']) == "['mlflow']").
std::string py_str(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : py_repr(v); }

void collect(const std::string& prefix, const nlohmann::json& obj, bool flatten,
             std::vector<std::pair<std::string, std::string>>& out, std::vector<std::string>& secrets) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (support::looks_secret(it.key()) || support::looks_secret(key)) {
      secrets.push_back(key);
      continue;
    }
    if (flatten && it->is_object() && !it->empty()) {
      collect(key, *it, flatten, out, secrets);
    } else {
      out.emplace_back(key, py_str(*it));
    }
  }
}
}  // namespace

ParamSet build_params(const std::string& args_json, bool flatten, int64_t max_value_length,
                      int64_t max_log_params) {
  nlohmann::json args = nlohmann::json::parse(args_json.empty() ? std::string("{}") : args_json);
  if (!args.is_object()) throw std::invalid_argument("training arguments JSON is not an object");
  ParamSet set;
  std::vector<std::pair<std::string, std::string>> all;
  collect("", args, flatten, all, set.secrets);
  for (auto& kv : all) {
    if (static_cast<int64_t>(kv.second.size()) > max_value_length) {
      set.too_long.push_back(kv.first);
    } else {
      set.params.push_back(std::move(kv));
    }
  }
  if (max_log_params > 0 && static_cast<int64_t>(set.params.size()) > max_log_params) {
    set.capped = set.params.size() - static_cast<size_t>(max_log_params);
    set.params.resize(static_cast<size_t>(max_log_params));
  }
  return set;
}

std::vector<std::vector<std::pair<std::string, std::string>>> chunk_params(
    const std::vector<std::pair<std::string, std::string>>& params, size_t per_request) {
  std::vector<std::vector<std::pair<std::string, std::string>>> out;
  for (size_t i = 0; i < params.size(); i += per_request)
    out.emplace_back(params.begin() + static_cast<std::ptrdiff_t>(i),
                     params.begin() + static_cast<std::ptrdiff_t>(std::min(params.size(), i + per_request)));
  return out;
}

}  // namespace trainhook::mlflow
