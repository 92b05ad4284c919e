// The one rule for which argument / configuration keys hold credentials, and
// the placeholder that replaces their values wherever arguments are written
// or sent (training_args.json, the host's training_args_json, logs, tracking
// servers). Header-only so that the core (which masks) and plugins/support
// (whose integrations also drop such keys) share it without the core linking
// plugin code. No LibTorch, no JSON library: plain C++17.
#pragma once

#include <array>
#include <cctype>
#include <string>
#include <string_view>

namespace trainhook {

namespace secret_keys_detail {
inline bool secret_part(std::string_view part) {
  static constexpr std::array<std::string_view, 14> words = {
      "token",  "passphrase", "secret",      "secrets", "password", "passwd", "pwd",
      "apikey", "credential", "credentials", "auth",    "cookie",   "key",    "authorization"};
  for (std::string_view w : words)
    if (part == w) return true;
  return false;
}
}  // namespace secret_keys_detail

// True when the key, split at non-alphanumerics and at lower->upper case
// changes ("apiKey" -> api, key), has a part such as token, secret, password,
// passwd, pwd, credential(s), apikey, auth, authorization, cookie or key. This
// covers HF's rule (TrainingArguments.to_dict masks every "*_token" field) and
// ours: *api_key*, *secret*, *password*, *credential*, aws_access_key_id,
// aws_secret_access_key, aws_session_token. Deliberately over-inclusive: a
// false positive costs one masked parameter, a false negative leaks a
// credential. Whole parts only, so "num_input_tokens_seen", "tokenizer_name"
// or "monkey" stay visible.
inline bool is_secret_key(std::string_view key) {
  std::string part;
  char prev = '\0';
  for (char c : key) {
    const auto u = static_cast<unsigned char>(c);
    const bool sep = std::isalnum(u) == 0;
    const bool camel = std::isupper(u) != 0 && std::islower(static_cast<unsigned char>(prev)) != 0;
    if (sep || camel) {
      if (!part.empty() && secret_keys_detail::secret_part(part)) return true;
      part.clear();
    }
    if (!sep) part.push_back(static_cast<char>(std::tolower(u)));
    prev = c;
  }
  return !part.empty() && secret_keys_detail::secret_part(part);
}

// What a secret value is replaced with: "<KEY>" with the key in upper case,
// as HF's TrainingArguments.to_dict writes "<HUB_TOKEN>" for hub_token.
inline std::string secret_placeholder(std::string_view key) {
  std::string out = "<";
  for (char c : key) out.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  out.push_back('>');
  return out;
}

// What replaces the password of a URL's user-info.
inline constexpr std::string_view kUrlPasswordPlaceholder = "<PASSWORD>";

// `text` with the password of every URL's user-info replaced by <PASSWORD>:
// "http://alice:s3cret@host:5000/x" -> "http://alice:<PASSWORD>@host:5000/x".
// Credentials inside a value cannot be seen by the key rule above
// (mlflow.tracking_uri, MLFLOW_TRACKING_URI); this finds every "://" in the
// text, so it masks URLs inside messages too. The user name stays visible.
inline std::string mask_url_passwords(std::string_view text) {
  std::string out;
  size_t copied = 0;
  size_t from = 0;
  while (true) {
    const size_t scheme_end = text.find("://", from);
    if (scheme_end == std::string_view::npos) break;
    const size_t start = scheme_end + 3;
    // The authority ends at the path, query, fragment, or anything that cannot
    // be in a URL written inside a message.
    size_t end = start;
    while (end < text.size()) {
      const char c = text[end];
      if (c == '/' || c == '?' || c == '#' || c == '"' || c == '\'' || c == '<' || c == '>' || c == '`' ||
          std::isspace(static_cast<unsigned char>(c)) != 0)
        break;
      ++end;
    }
    const std::string_view authority = text.substr(start, end - start);
    const size_t at = authority.rfind('@');
    if (at != std::string_view::npos) {
      const size_t colon = authority.find(':');
      if (colon != std::string_view::npos && colon < at &&
          authority.substr(colon + 1, at - colon - 1) != kUrlPasswordPlaceholder) {
        out.append(text.substr(copied, start + colon + 1 - copied));
        out.append(kUrlPasswordPlaceholder);
        copied = start + at;
      }
    }
    from = end > start ? end : start;
  }
  out.append(text.substr(copied));
  return out;
}

}  // namespace trainhook
