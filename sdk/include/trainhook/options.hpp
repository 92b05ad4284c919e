// A plugin's options, declared once: each key of its plugin_config section with
// its name, type, default, range, help and (optionally) an environment variable
// that supplies the value when the key is absent. Parsing goes through the C
// reader of plugin_config.h, so C and C++ plugins (ours and third-party packs)
// read sections the same way and report the same errors:
//
//   plugin_config ema.decay: expected a number in [0, 1), got 1.5
//   plugin_config ema: unknown key 'decy' (did you mean 'decay'?); keys: decay, warmup
//   environment variable MLFLOW_X (plugin_config mlflow.x): expected an integer, got '3x'
//
// Precedence: the plugin_config key, then the variable, then the default. The
// default is the options type's own (declared once, with TRAINHOOK_OPTION): the
// table reads it from a default-constructed object for help and README rows.
//
//   class EmaOptions {
//     TRAINHOOK_OPTION(double, decay, 0.999);
//    public:
//     TRAINHOOK_OPTION(bool, warmup, false);
//   };
//   const trainhook::OptionTable<EmaOptions>& table() {
//     static const auto t = trainhook::OptionTable<EmaOptions>("ema")
//       .key(TRAINHOOK_KEY(decay), "EMA decay").min(0).below(1)
//       .key(TRAINHOOK_KEY(warmup), "use a warm-up");
//     return t;
//   }
//   EmaOptions o = table().parse(config_json);   // throws trainhook::ConfigError
//
// Field types: bool, int64_t (and other integer types: the range of the type
// is checked too), double, std::chrono::milliseconds (given in seconds),
// std::string, std::vector<std::string> (a JSON array of strings, or
// comma-separated text), std::map<std::string, std::string> (a JSON object;
// numbers and booleans kept as their text), trainhook::JsonText (any JSON value,
// kept as text), std::optional of those (absent: unset), and any type through
// choice() (named values). Header-only, standard library only.
#pragma once

#include <trainhook/plugin_config.h>
#include <trainhook/plugin.hpp>
#include <trainhook/secret_keys.hpp>

#include <algorithm>
#include <any>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

// TRAINHOOK_OPTION: one field of a plugin's <Name>Options type, in LibTorch's
// TORCH_ARG style: a chained setter `opts.name(value)` returning the options,
// and getters `opts.name()` (const, and non-const for in-place edits). The
// macro ends in a private: section holding the field (`name_`), so each use
// starts with its own public: line (or follows another TRAINHOOK_OPTION after
// `public:`).
#define TRAINHOOK_OPTION(T, name, ...)                     \
 public:                                                   \
  auto name(const T& new_##name)->decltype(*this) {        \
    this->name##_ = new_##name;                            \
    return *this;                                          \
  }                                                        \
  auto name(T&& new_##name)->decltype(*this) {             \
    this->name##_ = std::move(new_##name);                 \
    return *this;                                          \
  }                                                        \
  const T& name() const noexcept { return this->name##_; } \
  T& name() noexcept { return this->name##_; }             \
                                                           \
 private:                                                  \
  T name##_ = __VA_ARGS__

// The key named like the TRAINHOOK_OPTION field, and the field's accessor.
#define TRAINHOOK_KEY(name) \
#name, [](auto& o) -> auto& { return o.name(); }

namespace trainhook {

// A key whose value is any JSON value, kept as its text (for a plugin that
// passes it on, e.g. a dictionary of tags).
struct JsonText {
  std::string text;
  bool operator==(const JsonText& o) const { return text == o.text; }
};

namespace options_detail {

template <class T>
struct unwrap {
  using type = T;
  static constexpr bool optional = false;
};
template <class T>
struct unwrap<std::optional<T>> {
  using type = T;
  static constexpr bool optional = true;
};

template <class F>
struct first_arg : first_arg<decltype(&F::operator())> {};
template <class C, class R, class A>
struct first_arg<R (C::*)(A) const> {
  using type = std::decay_t<A>;
};
template <class R, class A>
struct first_arg<R (*)(A)> {
  using type = std::decay_t<A>;
};

inline std::string joined(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

inline size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// The closest of `names` to `word`, if close enough to be a typo.
inline std::optional<std::string> closest(const std::string& word, const std::vector<std::string>& names) {
  std::optional<std::string> best;
  size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
  for (const auto& n : names) {
    const size_t d = edit_distance(word, n);
    if (d < best_d) {
      best_d = d;
      best = n;
    }
  }
  if (!best && word.size() >= 3) {
    for (const auto& n : names)  // a prefix of a key ("queue" for "queue_size"), or a key with more after it
      if (n.rfind(word, 0) == 0 || word.rfind(n, 0) == 0) return n;
  }
  return best;
}

// The shortest decimal text that reads back as d ("0.999", "1e+06", "15").
inline std::string number_text(double d) {
  char buf[40];
  if (d == std::floor(d) && std::fabs(d) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", d);  // whole numbers as integers: 10000000, not 1e+07
    return buf;
  }
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  return buf;
}

inline std::string trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

inline std::string decoded(const th_cfg_value& v) {
  const long n = th_cfg_string(&v, nullptr, 0);
  if (n < 0) return {};
  std::string out(static_cast<size_t>(n) + 1, '\0');
  th_cfg_string(&v, out.data(), out.size());
  out.resize(static_cast<size_t>(n));
  return out;
}

// Where a value came from, and its text: a plugin_config member or a variable.
struct Source {
  std::string where;  // "plugin_config ema.decay" / "environment variable X (plugin_config p.k)"
  std::string got;    // the value as shown in messages (placeholder for credentials)
  bool from_env = false;
  th_cfg_value json{};  // from plugin_config
  std::string text;     // from the environment (blanks trimmed)

  [[noreturn]] void fail(const std::string& expected) const {
    throw ConfigError(where + ": expected " + expected + ", got " + got);
  }
  // The value as text, for types read from text: a JSON string's content, a
  // JSON number or boolean as written ("--plugin_config x.name=2024" gives 2024).
  std::optional<std::string> as_text() const {
    if (from_env) return text;
    if (json.type == TH_CFG_STRING) {
      if (th_cfg_string(&json, nullptr, 0) < 0) return std::nullopt;
      return decoded(json);
    }
    if (json.type == TH_CFG_NUMBER || json.type == TH_CFG_BOOL) return std::string(json.text, json.len);
    return std::nullopt;
  }
};

// A number's range, checked after parsing, and said in the "expected" text.
struct Range {
  std::optional<double> lo, hi;
  bool lo_open = false, hi_open = false;

  bool holds(double d) const {
    if (lo && (lo_open ? !(d > *lo) : !(d >= *lo))) return false;
    if (hi && (hi_open ? !(d < *hi) : !(d <= *hi))) return false;
    return true;
  }
  std::string text(const char* what) const {
    std::string out = what;
    if (lo && hi)
      return out + " in " + (lo_open ? "(" : "[") + number_text(*lo) + ", " + number_text(*hi) +
             (hi_open ? ")" : "]");
    if (lo) return out + (lo_open ? " > " : " >= ") + number_text(*lo);
    if (hi) return out + (hi_open ? " < " : " <= ") + number_text(*hi);
    return out;
  }
};

// Reading one value of type V from a source; `range` applies to numbers.
template <class V>
V read(const Source& s, const Range& range) {
  if constexpr (std::is_same_v<V, bool>) {
    int b = 0;
    if (s.from_env ? th_cfg_parse_bool(s.text.data(), s.text.size(), &b) == 0 : th_cfg_bool(&s.json, &b) == 0)
      s.fail("true or false");
    return b != 0;
  } else if constexpr (std::is_same_v<V, int64_t>) {
    int64_t n = 0;
    const bool ok = s.from_env ? th_cfg_parse_int64(s.text.data(), s.text.size(), &n) != 0
                               : th_cfg_int64(&s.json, &n) != 0;
    if (!ok || !range.holds(static_cast<double>(n))) s.fail(range.text("an integer"));
    return n;
  } else if constexpr (std::is_integral_v<V>) {
    // Another integer type (size_t, int): its own range too.
    Range r = range;
    const double lo = static_cast<double>(std::numeric_limits<V>::min());
    const double hi = static_cast<double>(std::numeric_limits<V>::max());
    if (!r.lo || *r.lo < lo) r.lo = lo;
    if (hi < 9.2e18 && (!r.hi || *r.hi > hi)) r.hi = hi;  // wider than int64_t: int64_t's own check
    return static_cast<V>(read<int64_t>(s, r));
  } else if constexpr (std::is_same_v<V, std::chrono::milliseconds>) {
    Range r = range;
    if (!r.lo) r.lo = 0.0;
    return std::chrono::milliseconds(static_cast<int64_t>(std::llround(read<double>(s, r) * 1000)));
  } else if constexpr (std::is_same_v<V, std::map<std::string, std::string>>) {
    const std::string expected = "a JSON object of strings (e.g. {\"team\": \"nlp\"})";
    std::string text;
    if (s.from_env) {
      text = s.text;
    } else if (s.json.type == TH_CFG_OBJECT) {
      text.assign(s.json.text, s.json.len);
    } else if (s.json.type == TH_CFG_STRING) {
      text = decoded(s.json);  // a config file may hold the object as text, as the variable does
    } else {
      s.fail(expected);
    }
    if (th_cfg_check(text.c_str(), nullptr, 0) == 0 || trimmed(text).empty() || trimmed(text)[0] != '{')
      s.fail(expected);
    std::map<std::string, std::string> out;
    size_t pos = 0;
    th_cfg_value k, v;
    while (th_cfg_next(text.c_str(), &pos, &k, &v) == 1) {
      if (v.type == TH_CFG_STRING)
        out[decoded(k)] = decoded(v);
      else if (v.type == TH_CFG_NUMBER || v.type == TH_CFG_BOOL)
        out[decoded(k)] = std::string(v.text, v.len);
      else
        s.fail(expected);
    }
    return out;
  } else if constexpr (std::is_same_v<V, double>) {
    double d = 0;
    const bool ok = s.from_env ? th_cfg_parse_number(s.text.data(), s.text.size(), &d) != 0
                               : th_cfg_number(&s.json, &d) != 0;
    if (!ok || !range.holds(d)) s.fail(range.text("a number"));
    return d;
  } else if constexpr (std::is_same_v<V, std::string>) {
    auto t = s.as_text();
    if (!t) s.fail("a string");
    return *t;
  } else if constexpr (std::is_same_v<V, std::vector<std::string>>) {
    std::vector<std::string> out;
    if (!s.from_env && s.json.type == TH_CFG_ARRAY) {
      // Each element must be a string: the array's text is walked as an object
      // would be, with th_cfg__value for each element.
      const char* p = s.json.text;
      const size_t n = s.json.len;
      size_t i = th_cfg__ws(p, n, 1);
      while (i < n && p[i] != ']') {
        th_cfg_value e;
        i = th_cfg__value(p, n, i, 1, &e, nullptr, 0);
        if (i == static_cast<size_t>(-1) || e.type != TH_CFG_STRING) s.fail("a list of strings");
        out.push_back(decoded(e));
        i = th_cfg__ws(p, n, i);
        if (i < n && p[i] == ',') i = th_cfg__ws(p, n, i + 1);
      }
      return out;
    }
    auto t = s.from_env || s.json.type == TH_CFG_STRING ? s.as_text() : std::nullopt;
    if (!t) s.fail("a list of strings (a JSON array or comma-separated text)");
    size_t start = 0;
    while (start <= t->size()) {
      size_t comma = t->find(',', start);
      if (comma == std::string::npos) comma = t->size();
      std::string item = trimmed(t->substr(start, comma - start));
      if (!item.empty()) out.push_back(item);
      start = comma + 1;
    }
    return out;
  } else if constexpr (std::is_same_v<V, JsonText>) {
    if (!s.from_env) return JsonText{std::string(s.json.text, s.json.len)};
    th_cfg_value v;
    const size_t end = th_cfg__value(s.text.data(), s.text.size(), 0, 0, &v, nullptr, 0);
    if (end == static_cast<size_t>(-1) || th_cfg__ws(s.text.data(), s.text.size(), end) != s.text.size())
      s.fail("a JSON value");
    return JsonText{s.text};
  } else {
    static_assert(sizeof(V) == 0,
                  "option field type: use bool, int64_t, double, std::string, "
                  "std::vector<std::string>, JsonText, an optional of them, or choice()");
  }
}

template <class V>
std::string default_text(const V& v) {
  if constexpr (std::is_same_v<V, bool>) {
    return v ? "`true`" : "`false`";
  } else if constexpr (std::is_integral_v<V>) {
    return "`" + std::to_string(v) + "`";
  } else if constexpr (std::is_same_v<V, std::chrono::milliseconds>) {
    return "`" + number_text(static_cast<double>(v.count()) / 1000) + "`";
  } else if constexpr (std::is_same_v<V, std::map<std::string, std::string>>) {
    return v.empty() ? "empty" : "";
  } else if constexpr (std::is_same_v<V, double>) {
    return "`" + number_text(v) + "`";
  } else if constexpr (std::is_same_v<V, std::string>) {
    return v.empty() ? "empty" : "`" + v + "`";
  } else if constexpr (std::is_same_v<V, std::vector<std::string>>) {
    return v.empty() ? "empty" : "`" + joined(v, ",") + "`";
  } else if constexpr (std::is_same_v<V, JsonText>) {
    return "`" + v.text + "`";
  } else {
    return "";
  }
}

}  // namespace options_detail

// The declaration of a plugin's keys, bound to the fields of its options type O
// (default-constructible and copyable). Build it once (a function-local static)
// with the chained calls below; each modifier applies to the key declared last.
template <class O>
class OptionTable {
 public:
  explicit OptionTable(std::string plugin) : plugin_(std::move(plugin)) {}

  // A key bound to a field: `field(o)` returns a reference to it (TRAINHOOK_KEY
  // gives the name and the accessor of a TRAINHOOK_OPTION field).
  template <class F>
  OptionTable& key(std::string name, F field, std::string help) {
    using T = std::decay_t<decltype(field(std::declval<O&>()))>;
    using V = typename options_detail::unwrap<T>::type;
    Entry e;
    e.name = std::move(name);
    e.help = std::move(help);
    e.apply = [field](O& o, const Entry& self, const options_detail::Source& s) {
      V v = options_detail::read<V>(s, self.range);
      self.run_checks(std::any(v), s);
      field(o) = std::move(v);
    };
    e.default_text = [field]() {
      O o;
      const T& v = field(o);
      if constexpr (options_detail::unwrap<T>::optional) {
        return v ? options_detail::default_text(*v) : std::string("unset");
      } else {
        return options_detail::default_text(v);
      }
    };
    entries_.push_back(std::move(e));
    return *this;
  }

  // A key whose value is one of the named `choices` (lower case, matched in any
  // case; several names may give one value), stored as their value.
  template <class F, class T = std::decay_t<decltype(std::declval<F>()(std::declval<O&>()))>>
  OptionTable& choice(std::string name, F field, std::vector<std::pair<std::string, T>> choices,
                      std::string help) {
    Entry e;
    e.name = std::move(name);
    e.help = std::move(help);
    std::vector<std::string> names;
    for (const auto& c : choices) names.push_back(c.first);
    e.apply = [field, choices, names](O& o, const Entry& self, const options_detail::Source& s) {
      // Names match in any case ("OFFLINE" from a variable is "offline").
      auto t = s.as_text();
      if (t)
        for (auto& ch : *t) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      for (const auto& c : choices) {
        if (t && *t == c.first) {
          self.run_checks(std::any(c.second), s);
          field(o) = c.second;
          return;
        }
      }
      s.fail("one of " + options_detail::joined(names));
    };
    e.default_text = [field, choices]() {
      O o;
      for (const auto& c : choices)
        if (field(o) == c.second) return "`" + c.first + "`";
      return std::string("unset");
    };
    entries_.push_back(std::move(e));
    return *this;
  }

  // The range of the last numeric key: [min, max], (above, below).
  OptionTable& min(double v) { return bound(true, v, false); }
  OptionTable& max(double v) { return bound(false, v, false); }
  OptionTable& above(double v) { return bound(true, v, true); }
  OptionTable& below(double v) { return bound(false, v, true); }
  // Another name of the last key (a section may use either, not both).
  OptionTable& alias(std::string other) {
    last().aliases.push_back(std::move(other));
    return *this;
  }
  // An environment variable read when the key is absent (empty: absent too).
  // Called again: a variable read when the ones before are absent.
  OptionTable& env(std::string variable) {
    last().env.push_back(std::move(variable));
    return *this;
  }
  // A condition on the parsed value (the field's type, unwrapped from optional):
  // false gives "<where>: expected <expected>, got <value>".
  template <class P>
  OptionTable& check(std::string expected, P ok) {
    using A = typename options_detail::first_arg<P>::type;
    last().checks.emplace_back(std::move(expected),
                               [ok](const std::any& v) { return ok(std::any_cast<const A&>(v)); });
    return *this;
  }
  // The default as shown in help and README rows, when the value alone does
  // not say it (e.g. "metric_for_best_model").
  OptionTable& shown_default(std::string text) {
    last().shown_default = std::move(text);
    return *this;
  }

  const std::string& plugin() const noexcept { return plugin_; }
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto& e : entries_) out.push_back(e.name);
    return out;
  }

  // The options from a plugin_config section (a JSON object text; empty: {})
  // and the environment. Throws ConfigError naming the key or the variable.
  // `sources`, when given, gets where each set key's value came from
  // ("plugin_config p.k" or "environment variable X (plugin_config p.k)"), for
  // a plugin's own later checks.
  O parse(const std::string& config_json, std::map<std::string, std::string>* sources = nullptr) const {
    O o;
    parse_into(o, config_json, sources);
    return o;
  }
  // Only the keys `only` (from the section or their variables), with no check of
  // the others: for a setting that decides whether anything else is read (a
  // `mode` of `disabled`).
  void parse_keys(O& o, const std::string& config_json, const std::vector<std::string>& only) const {
    parse_into(o, config_json, nullptr, &only);
  }
  void parse_into(O& o, const std::string& config_json, std::map<std::string, std::string>* sources = nullptr,
                  const std::vector<std::string>* only = nullptr) const {
    char err[160] = {0};
    if (th_cfg_check(config_json.c_str(), err, sizeof err) == 0)
      throw ConfigError("plugin_config " + plugin_ + ": not a valid JSON object: " + err);
    std::vector<std::pair<std::string, th_cfg_value>> given;
    size_t pos = 0;
    th_cfg_value k, v;
    while (th_cfg_next(config_json.c_str(), &pos, &k, &v) == 1) {
      const std::string name = options_detail::decoded(k);
      const Entry* e = find(name);
      if (e == nullptr && only != nullptr) continue;
      if (e == nullptr) {
        std::vector<std::string> names;
        for (const auto& x : entries_) {
          names.push_back(x.name);
          names.insert(names.end(), x.aliases.begin(), x.aliases.end());
        }
        const auto near = options_detail::closest(name, names);
        throw ConfigError("plugin_config " + plugin_ + ": unknown key '" + name + "'" +
                          (near ? " (did you mean '" + *near + "'?)" : std::string()) +
                          (entries_.empty() ? std::string("; it takes no keys")
                                            : "; keys: " + options_detail::joined(keys())));
      }
      for (const auto& g : given)
        if (g.first == e->name)
          throw ConfigError(where(name) + ": given twice" +
                            (name == e->name ? std::string() : " (as " + e->name + " and " + name + ")"));
      given.emplace_back(e->name, v);
    }
    for (const auto& e : entries_) {
      if (only != nullptr && std::find(only->begin(), only->end(), e.name) == only->end()) continue;
      options_detail::Source s;
      auto it = std::find_if(given.begin(), given.end(), [&](const auto& g) { return g.first == e.name; });
      if (it != given.end()) {
        if (it->second.type == TH_CFG_NULL) continue;  // null: the default
        s.where = where(e.name);
        s.json = it->second;
        s.got = secret(e) ? secret_placeholder(e.name) : shown(it->second);
      } else {
        const char* t = nullptr;
        std::string var;
        for (const auto& var_name : e.env) {
          t = std::getenv(var_name.c_str());
          if (t != nullptr && *t != '\0') {
            var = var_name;
            break;
          }
        }
        if (var.empty()) continue;
        s.from_env = true;
        s.where = "environment variable " + var + " (" + where(e.name) + ")";
        s.text = options_detail::trimmed(t);
        s.got = secret(e) ? secret_placeholder(var) : "'" + std::string(t) + "'";
      }
      e.apply(o, e, s);
      if (sources != nullptr) (*sources)[e.name] = s.where;
    }
  }

  // "plugin_config <plugin>.<key>", for the plugin's own messages.
  std::string where(const std::string& key) const { return "plugin_config " + plugin_ + "." + key; }

  // One markdown row per key, "| `key` | default | help |" (plus its aliases and
  // "environment variable `X`" when there are), for the plugin's README table.
  std::string markdown_rows() const {
    std::string out;
    for (const auto& e : entries_) {
      const std::string def = e.shown_default.empty() ? e.default_text() : e.shown_default;
      std::string also;
      for (const auto& a : e.aliases) also += (also.empty() ? "" : ", ") + ("`" + a + "`");
      std::string vars;
      for (const auto& v : e.env) vars += (vars.empty() ? "" : ", then ") + ("`" + v + "`");
      out += "| `" + e.name + "` | " + def + " | " + e.help + (also.empty() ? "" : " (alias " + also + ")") +
             (vars.empty() ? "" : " (environment variable " + vars + ")") + " |\n";
    }
    return out;
  }

 private:
  struct Entry {
    std::string name, help, shown_default;
    std::vector<std::string> env;
    std::vector<std::string> aliases;
    options_detail::Range range;
    std::vector<std::pair<std::string, std::function<bool(const std::any&)>>> checks;
    std::function<void(O&, const Entry&, const options_detail::Source&)> apply;
    std::function<std::string()> default_text;

    void run_checks(const std::any& v, const options_detail::Source& s) const {
      for (const auto& c : checks)
        if (!c.second(v)) s.fail(c.first);
    }
  };

  Entry& last() {
    if (entries_.empty()) throw std::logic_error("OptionTable: a modifier before the first key");
    return entries_.back();
  }
  OptionTable& bound(bool lower, double v, bool open) {
    auto& r = last().range;
    (lower ? r.lo : r.hi) = v;
    (lower ? r.lo_open : r.hi_open) = open;
    return *this;
  }
  const Entry* find(const std::string& name) const {
    for (const auto& e : entries_)
      if (e.name == name || std::find(e.aliases.begin(), e.aliases.end(), name) != e.aliases.end()) return &e;
    return nullptr;
  }
  static bool secret(const Entry& e) {
    bool s = is_secret_key(e.name);
    for (const auto& v : e.env) s = s || is_secret_key(v);
    return s;
  }
  // A JSON value as written, cut to a readable length.
  static std::string shown(const th_cfg_value& v) {
    std::string t(v.text, v.len);
    return t.size() > 80 ? t.substr(0, 77) + "..." : t;
  }

  std::string plugin_;
  std::vector<Entry> entries_;
};

}  // namespace trainhook
