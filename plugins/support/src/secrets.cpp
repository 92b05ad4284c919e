#include <trainhook/support/secrets.hpp>

#include <array>
#include <cctype>
#include <string>

namespace trainhook::support {

namespace {
bool secret_part(const std::string& part) {
  static constexpr std::array<const char*, 14> words = {
      "token",  "passphrase", "secret",      "secrets", "password", "passwd", "pwd",
      "apikey", "credential", "credentials", "auth",    "cookie",   "key",    "authorization"};
  for (const char* w : words)
    if (part == w) return true;
  return false;
}
}  // namespace

bool looks_secret(std::string_view key) {
  // Split into lower-case parts at separators and at lower->upper case changes
  // ("apiKey" -> api, key).
  std::string part;
  char prev = '\0';
  auto finish = [&]() {
    bool hit = !part.empty() && secret_part(part);
    part.clear();
    return hit;
  };
  for (char c : key) {
    unsigned char u = static_cast<unsigned char>(c);
    bool sep = !std::isalnum(u);
    bool camel = std::isupper(u) && std::islower(static_cast<unsigned char>(prev));
    if (sep || camel) {
      if (finish()) return true;
    }
    if (!sep) part.push_back(static_cast<char>(std::tolower(u)));
    prev = c;
  }
  return finish();
}

}  // namespace trainhook::support
