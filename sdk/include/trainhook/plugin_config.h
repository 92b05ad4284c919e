/* A small strict JSON reader for a plugin's plugin_config section (the JSON
 * object text a callback's create() receives), in C11 (static inline, no
 * allocation), so C plugins read their keys the way C++ plugins do: the C++
 * option table (options.hpp) parses through these same functions.
 *
 *   char err[256];
 *   size_t pos = 0;
 *   th_cfg_value key, value;
 *   if (!th_cfg_check(config_json, err, sizeof err)) ... not a JSON object: err says where
 *   while (th_cfg_next(config_json, &pos, &key, &value) == 1) {
 *     if (th_cfg_key_is(&key, "max_loss")) th_cfg_number(&value, &max_loss) ...
 *   }
 *
 * Values are spans of the original text (never copied). A number may be given
 * as a string holding one JSON number ("3": what `--plugin_config name.key=3`
 * flags and config files give); it is parsed strictly: "3x", "", " 3" and
 * "0x10" are not numbers. */
#ifndef TRAINHOOK_PLUGIN_CONFIG_H
#define TRAINHOOK_PLUGIN_CONFIG_H

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum th_cfg_type {
  TH_CFG_NULL = 0,
  TH_CFG_BOOL = 1,
  TH_CFG_NUMBER = 2,
  TH_CFG_STRING = 3,
  TH_CFG_ARRAY = 4,
  TH_CFG_OBJECT = 5
} th_cfg_type;

/* One JSON value (or member key): its type and its text in the section, quotes
 * included for strings. */
typedef struct th_cfg_value {
  th_cfg_type type;
  const char* text;
  size_t len;
} th_cfg_value;

/* Nesting deeper than this is refused (a section is a flat object of settings). */
#define TH_CFG_MAX_DEPTH 32

/* ---- internals (th_cfg__*) ---- */

static inline size_t th_cfg__ws(const char* s, size_t n, size_t i) {
  while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  return i;
}

static inline int th_cfg__hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* The length of the JSON number grammar's match at s[i..n), 0 when none. */
static inline size_t th_cfg__number_len(const char* s, size_t n, size_t i) {
  size_t j = i;
  if (j < n && s[j] == '-') ++j;
  if (j >= n) return 0;
  if (s[j] == '0') {
    ++j;
  } else if (s[j] >= '1' && s[j] <= '9') {
    while (j < n && s[j] >= '0' && s[j] <= '9') ++j;
  } else {
    return 0;
  }
  if (j < n && s[j] == '.') {
    ++j;
    if (j >= n || s[j] < '0' || s[j] > '9') return 0;
    while (j < n && s[j] >= '0' && s[j] <= '9') ++j;
  }
  if (j < n && (s[j] == 'e' || s[j] == 'E')) {
    ++j;
    if (j < n && (s[j] == '+' || s[j] == '-')) ++j;
    if (j >= n || s[j] < '0' || s[j] > '9') return 0;
    while (j < n && s[j] >= '0' && s[j] <= '9') ++j;
  }
  return j - i;
}

/* A string starting at s[i] == '"': its length quotes included, 0 when malformed. */
static inline size_t th_cfg__string_len(const char* s, size_t n, size_t i) {
  size_t j = i + 1;
  while (j < n) {
    unsigned char c = (unsigned char)s[j];
    if (c == '"') return j + 1 - i;
    if (c < 0x20) return 0;
    if (c == '\\') {
      if (j + 1 >= n) return 0;
      c = (unsigned char)s[j + 1];
      if (c == 'u') {
        int k;
        if (j + 6 > n) return 0;
        for (k = 2; k < 6; ++k)
          if (th_cfg__hex(s[j + k]) < 0) return 0;
        j += 6;
        continue;
      }
      if (strchr("\"\\/bfnrt", (int)c) == NULL || c == '\0') return 0;
      j += 2;
      continue;
    }
    ++j;
  }
  return 0;
}

static inline void th_cfg__error(char* err, size_t err_size, const char* what, size_t at) {
  if (err != NULL && err_size > 0) snprintf(err, err_size, "%s at offset %lu", what, (unsigned long)at);
}

/* Parses one value at s[i] (after blanks): fills v, returns the index after it,
 * or (size_t)-1 with err set. */
static inline size_t th_cfg__value(const char* s, size_t n, size_t i, int depth, th_cfg_value* v, char* err,
                                   size_t err_size) {
  size_t len;
  i = th_cfg__ws(s, n, i);
  if (i >= n) {
    th_cfg__error(err, err_size, "expected a value, got the end of the text", i);
    return (size_t)-1;
  }
  v->text = s + i;
  if (s[i] == '"') {
    len = th_cfg__string_len(s, n, i);
    if (len == 0) {
      th_cfg__error(err, err_size, "malformed string", i);
      return (size_t)-1;
    }
    v->type = TH_CFG_STRING;
    v->len = len;
    return i + len;
  }
  if (s[i] == '{' || s[i] == '[') {
    const char close = s[i] == '{' ? '}' : ']';
    const int object = s[i] == '{';
    size_t j = th_cfg__ws(s, n, i + 1);
    th_cfg_value inner;
    if (depth >= TH_CFG_MAX_DEPTH) {
      th_cfg__error(err, err_size, "nested too deeply", i);
      return (size_t)-1;
    }
    if (j < n && s[j] == close) {
      v->type = object ? TH_CFG_OBJECT : TH_CFG_ARRAY;
      v->len = j + 1 - i;
      return j + 1;
    }
    for (;;) {
      if (object) {
        j = th_cfg__ws(s, n, j);
        if (j >= n || s[j] != '"' || (len = th_cfg__string_len(s, n, j)) == 0) {
          th_cfg__error(err, err_size, "expected a key in double quotes", j);
          return (size_t)-1;
        }
        j = th_cfg__ws(s, n, j + len);
        if (j >= n || s[j] != ':') {
          th_cfg__error(err, err_size, "expected ':' after a key", j);
          return (size_t)-1;
        }
        ++j;
      }
      j = th_cfg__value(s, n, j, depth + 1, &inner, err, err_size);
      if (j == (size_t)-1) return j;
      j = th_cfg__ws(s, n, j);
      if (j < n && s[j] == ',') {
        ++j;
        continue;
      }
      if (j < n && s[j] == close) break;
      th_cfg__error(err, err_size, object ? "expected ',' or '}'" : "expected ',' or ']'", j);
      return (size_t)-1;
    }
    v->type = object ? TH_CFG_OBJECT : TH_CFG_ARRAY;
    v->len = j + 1 - i;
    return j + 1;
  }
  if (n - i >= 4 && strncmp(s + i, "true", 4) == 0) {
    v->type = TH_CFG_BOOL;
    v->len = 4;
    return i + 4;
  }
  if (n - i >= 5 && strncmp(s + i, "false", 5) == 0) {
    v->type = TH_CFG_BOOL;
    v->len = 5;
    return i + 5;
  }
  if (n - i >= 4 && strncmp(s + i, "null", 4) == 0) {
    v->type = TH_CFG_NULL;
    v->len = 4;
    return i + 4;
  }
  len = th_cfg__number_len(s, n, i);
  if (len == 0) {
    th_cfg__error(err, err_size, "expected a JSON value", i);
    return (size_t)-1;
  }
  v->type = TH_CFG_NUMBER;
  v->len = len;
  return i + len;
}

/* ---- the API ---- */

/* 1 when `json` is one JSON object (blanks around it allowed); NULL or blank
 * text counts as {}. 0 otherwise, with a message ("expected ':' after a key at
 * offset 7") in err. Call it once before th_cfg_next/th_cfg_find. */
static inline int th_cfg_check(const char* json, char* err, size_t err_size) {
  th_cfg_value v;
  size_t n, end;
  if (json == NULL) return 1;
  n = strlen(json);
  if (th_cfg__ws(json, n, 0) == n) return 1;
  end = th_cfg__value(json, n, 0, 0, &v, err, err_size);
  if (end == (size_t)-1) return 0;
  if (v.type != TH_CFG_OBJECT) {
    th_cfg__error(err, err_size, "expected a JSON object", (size_t)(v.text - json));
    return 0;
  }
  if (th_cfg__ws(json, n, end) != n) {
    th_cfg__error(err, err_size, "unexpected text after the object", th_cfg__ws(json, n, end));
    return 0;
  }
  return 1;
}

/* The next member of a checked object: *pos starts at 0. Returns 1 with its key
 * (a TH_CFG_STRING) and value, 0 after the last one (or for NULL/blank text). */
static inline int th_cfg_next(const char* json, size_t* pos, th_cfg_value* key, th_cfg_value* value) {
  size_t n, i;
  if (json == NULL) return 0;
  n = strlen(json);
  i = th_cfg__ws(json, n, *pos);
  if (i >= n) return 0;
  if (json[i] == '{' || json[i] == ',') i = th_cfg__ws(json, n, i + 1);
  if (i >= n || json[i] != '"') return 0; /* '}' or not checked */
  key->type = TH_CFG_STRING;
  key->text = json + i;
  key->len = th_cfg__string_len(json, n, i);
  if (key->len == 0) return 0;
  i = th_cfg__ws(json, n, i + key->len);
  if (i >= n || json[i] != ':') return 0;
  i = th_cfg__value(json, n, i + 1, 1, value, NULL, 0);
  if (i == (size_t)-1) return 0;
  *pos = th_cfg__ws(json, n, i);
  return 1;
}

/* A JSON string's decoded text (UTF-8) into buf, NUL-terminated and cut to
 * buf_size - 1 bytes; returns the decoded length (which may exceed buf_size - 1:
 * call again with a larger buffer), or -1 when v is not a string or holds an
 * escaped NUL or a lone surrogate. buf may be NULL with buf_size 0. */
/* GCC 12 at -O3, inlining this through th_cfg_key_is into a caller, warns that
 * the guarded write below may overflow the caller's 128-byte buffer; the guard
 * (out + 1 < buf_size) rules it out. Silenced here only, for GCC only. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
static inline long th_cfg_string(const th_cfg_value* v, char* buf, size_t buf_size) {
  size_t i, out = 0;
  if (v == NULL || v->type != TH_CFG_STRING || v->len < 2) return -1;
#define TH_CFG__PUT(c)                                           \
  do {                                                           \
    if (buf != NULL && out + 1 < buf_size) buf[out] = (char)(c); \
    ++out;                                                       \
  } while (0)
  for (i = 1; i + 1 < v->len; ++i) {
    const char c = v->text[i];
    unsigned long cp;
    if (c != '\\') {
      TH_CFG__PUT(c);
      continue;
    }
    ++i;
    switch (v->text[i]) {
      case 'b':
        TH_CFG__PUT('\b');
        continue;
      case 'f':
        TH_CFG__PUT('\f');
        continue;
      case 'n':
        TH_CFG__PUT('\n');
        continue;
      case 'r':
        TH_CFG__PUT('\r');
        continue;
      case 't':
        TH_CFG__PUT('\t');
        continue;
      case 'u':
        break;
      default:
        TH_CFG__PUT(v->text[i]);
        continue;
    }
    cp = (unsigned long)(th_cfg__hex(v->text[i + 1]) << 12 | th_cfg__hex(v->text[i + 2]) << 8 |
                         th_cfg__hex(v->text[i + 3]) << 4 | th_cfg__hex(v->text[i + 4]));
    i += 4;
    if (cp >= 0xDC00 && cp <= 0xDFFF) return -1;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      unsigned long lo;
      if (i + 6 >= v->len || v->text[i + 1] != '\\' || v->text[i + 2] != 'u') return -1;
      lo = (unsigned long)(th_cfg__hex(v->text[i + 3]) << 12 | th_cfg__hex(v->text[i + 4]) << 8 |
                           th_cfg__hex(v->text[i + 5]) << 4 | th_cfg__hex(v->text[i + 6]));
      if (lo < 0xDC00 || lo > 0xDFFF) return -1;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      i += 6;
    }
    if (cp == 0) return -1;
    if (cp < 0x80) {
      TH_CFG__PUT(cp);
    } else if (cp < 0x800) {
      TH_CFG__PUT(0xC0 | (cp >> 6));
      TH_CFG__PUT(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      TH_CFG__PUT(0xE0 | (cp >> 12));
      TH_CFG__PUT(0x80 | ((cp >> 6) & 0x3F));
      TH_CFG__PUT(0x80 | (cp & 0x3F));
    } else {
      TH_CFG__PUT(0xF0 | (cp >> 18));
      TH_CFG__PUT(0x80 | ((cp >> 12) & 0x3F));
      TH_CFG__PUT(0x80 | ((cp >> 6) & 0x3F));
      TH_CFG__PUT(0x80 | (cp & 0x3F));
    }
  }
#undef TH_CFG__PUT
  if (buf != NULL && buf_size > 0) buf[out < buf_size ? out : buf_size - 1] = '\0';
  return (long)out;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/* 1 when the key (or string value) decodes to exactly `name`. */
static inline int th_cfg_key_is(const th_cfg_value* key, const char* name) {
  char buf[128];
  const long len = th_cfg_string(key, buf, sizeof buf);
  return len >= 0 && (size_t)len < sizeof buf && strcmp(buf, name) == 0;
}

/* A number from text: all of text[0..len) must be one JSON number, finite as a
 * double. 1 with *out set, else 0. */
static inline int th_cfg_parse_number(const char* text, size_t len, double* out) {
  char buf[64];
  double d;
  char* end = NULL;
  if (len == 0 || len >= sizeof buf || th_cfg__number_len(text, len, 0) != len) return 0;
  memcpy(buf, text, len);
  buf[len] = '\0';
  errno = 0;
  d = strtod(buf, &end);
  if (end != buf + len || !isfinite(d)) return 0;
  *out = d;
  return 1;
}

/* An integer from text: one JSON number whose value is a whole number in the
 * int64 range ("3", "-2", "1e6"; not "1.5"). 1 with *out set, else 0. */
static inline int th_cfg_parse_int64(const char* text, size_t len, int64_t* out) {
  char buf[64];
  size_t k;
  int plain = 1;
  if (len == 0 || len >= sizeof buf || th_cfg__number_len(text, len, 0) != len) return 0;
  for (k = 0; k < len; ++k) plain = plain && (text[k] == '-' || (text[k] >= '0' && text[k] <= '9'));
  memcpy(buf, text, len);
  buf[len] = '\0';
  if (plain) {
    char* end = NULL;
    long long v;
    errno = 0;
    v = strtoll(buf, &end, 10);
    if (errno == ERANGE || end != buf + len) return 0;
    *out = (int64_t)v;
    return 1;
  } else {
    double d;
    if (!th_cfg_parse_number(text, len, &d) || d != floor(d) || d < -9.2e18 || d > 9.2e18) return 0;
    *out = (int64_t)d;
    return 1;
  }
}

/* A JSON number, or a string holding exactly one (no blanks). 1 with *out, else 0. */
static inline int th_cfg_number(const th_cfg_value* v, double* out) {
  if (v == NULL) return 0;
  if (v->type == TH_CFG_NUMBER) return th_cfg_parse_number(v->text, v->len, out);
  if (v->type == TH_CFG_STRING && v->len >= 2 && memchr(v->text, '\\', v->len) == NULL)
    return th_cfg_parse_number(v->text + 1, v->len - 2, out);
  return 0;
}

/* Like th_cfg_number, for a whole number in the int64 range. */
static inline int th_cfg_int64(const th_cfg_value* v, int64_t* out) {
  if (v == NULL) return 0;
  if (v->type == TH_CFG_NUMBER) return th_cfg_parse_int64(v->text, v->len, out);
  if (v->type == TH_CFG_STRING && v->len >= 2 && memchr(v->text, '\\', v->len) == NULL)
    return th_cfg_parse_int64(v->text + 1, v->len - 2, out);
  return 0;
}

/* true/false, or the strings "true"/"false" (any case). 1 with *out (0 or 1), else 0. */
static inline int th_cfg_parse_bool(const char* text, size_t len, int* out) {
  static const char* const yes[] = {"true", "1", "yes", "on"};
  static const char* const no[] = {"false", "0", "no", "off"};
  size_t k, m;
  for (k = 0; k < 4; ++k) {
    int match_yes = strlen(yes[k]) == len, match_no = strlen(no[k]) == len;
    for (m = 0; m < len; ++m) {
      const char c = (char)(text[m] >= 'A' && text[m] <= 'Z' ? text[m] - 'A' + 'a' : text[m]);
      match_yes = match_yes && c == yes[k][m];
      match_no = match_no && c == no[k][m];
    }
    if (match_yes || match_no) {
      *out = match_yes;
      return 1;
    }
  }
  return 0;
}

/* A JSON boolean, or a string holding true/false, 1/0, yes/no or on/off (any
 * case: what environment variables and flags give). 1 with *out, else 0. */
static inline int th_cfg_bool(const th_cfg_value* v, int* out) {
  if (v == NULL) return 0;
  if (v->type == TH_CFG_BOOL) {
    *out = v->text[0] == 't';
    return 1;
  }
  if (v->type == TH_CFG_STRING && v->len >= 2 && memchr(v->text, '\\', v->len) == NULL)
    return th_cfg_parse_bool(v->text + 1, v->len - 2, out);
  return 0;
}

/* The member `key` of a checked object: 1 with *value, 0 when absent (the last
 * one when a key repeats, as the C++ table refuses repeats). */
static inline int th_cfg_find(const char* json, const char* key, th_cfg_value* value) {
  size_t pos = 0;
  th_cfg_value k, v;
  int found = 0;
  while (th_cfg_next(json, &pos, &k, &v) == 1) {
    if (th_cfg_key_is(&k, key)) {
      *value = v;
      found = 1;
    }
  }
  return found;
}

/* ---- the run's training arguments (th_host.training_args_json) ----
 * HF's TrainingArguments names, as in training_args.json. Each reader returns
 * 1 with *out when the argument is there with the type asked, 0 when the
 * trainer does not give it or gives null (*out untouched: the caller's
 * default stays), and -1 when it holds another type or the text is not a JSON
 * object, with err saying so in the words every plugin uses:
 *   "training argument 'logging_steps' is a string, expected a number"
 * Unlike plugin_config values, a number is never read from a string here: the
 * trainer writes typed JSON. */

static inline const char* th_args__type_name(th_cfg_type t) {
  switch (t) {
    case TH_CFG_NULL: return "null";
    case TH_CFG_BOOL: return "a boolean";
    case TH_CFG_NUMBER: return "a number";
    case TH_CFG_STRING: return "a string";
    case TH_CFG_ARRAY: return "a list";
    default: return "an object";
  }
}

/* 1 with *value, 0 absent or null, -1 with err (not an object, or another type than `want`). */
static inline int th_args__find(const char* args_json, const char* key, th_cfg_type want, th_cfg_value* value,
                                char* err, size_t err_size) {
  char why[160];
  if (args_json == NULL || !th_cfg_check(args_json, why, sizeof why)) {
    if (err != NULL && err_size > 0)
      snprintf(err, err_size, "the trainer's training arguments are not a JSON object (%s)",
               args_json == NULL ? "none given" : why);
    return -1;
  }
  if (!th_cfg_find(args_json, key, value) || value->type == TH_CFG_NULL) return 0;
  if (value->type != want) {
    if (err != NULL && err_size > 0)
      snprintf(err, err_size, "training argument '%s' is %s, expected %s", key, th_args__type_name(value->type),
               th_args__type_name(want));
    return -1;
  }
  return 1;
}

static inline int th_args_number(const char* args_json, const char* key, double* out, char* err, size_t err_size) {
  th_cfg_value v;
  const int found = th_args__find(args_json, key, TH_CFG_NUMBER, &v, err, err_size);
  if (found == 1 && !th_cfg_number(&v, out)) {
    if (err != NULL && err_size > 0) snprintf(err, err_size, "training argument '%s' is not a finite number", key);
    return -1;
  }
  return found;
}

/* A whole number in the int64 range (a number with a fraction is -1 with err). */
static inline int th_args_int64(const char* args_json, const char* key, int64_t* out, char* err, size_t err_size) {
  th_cfg_value v;
  const int found = th_args__find(args_json, key, TH_CFG_NUMBER, &v, err, err_size);
  if (found == 1 && !th_cfg_int64(&v, out)) {
    if (err != NULL && err_size > 0)
      snprintf(err, err_size, "training argument '%s' is %.*s, expected a whole number", key, (int)v.len, v.text);
    return -1;
  }
  return found;
}

static inline int th_args_bool(const char* args_json, const char* key, int* out, char* err, size_t err_size) {
  th_cfg_value v;
  const int found = th_args__find(args_json, key, TH_CFG_BOOL, &v, err, err_size);
  if (found == 1) *out = v.len == 4; /* "true" */
  return found;
}

/* The decoded string into buf (NUL-terminated); *len (optional) gets its full
 * length: a value longer than buf_size - 1 is cut, as snprintf cuts. */
static inline int th_args_string(const char* args_json, const char* key, char* buf, size_t buf_size, size_t* len,
                                 char* err, size_t err_size) {
  th_cfg_value v;
  const int found = th_args__find(args_json, key, TH_CFG_STRING, &v, err, err_size);
  if (found != 1) return found;
  const long n = th_cfg_string(&v, buf, buf_size);
  if (n < 0) {
    if (err != NULL && err_size > 0) snprintf(err, err_size, "training argument '%s' is not a valid string", key);
    return -1;
  }
  if (len != NULL) *len = (size_t)n;
  return 1;
}

#ifdef __cplusplus
}
#endif

#endif /* TRAINHOOK_PLUGIN_CONFIG_H */
