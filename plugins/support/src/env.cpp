#include <trainhook/support/env.hpp>

#include <cstdlib>

namespace trainhook::support {

std::optional<std::string> get_env(const char* name) {
  if (name == nullptr) return std::nullopt;
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

}  // namespace trainhook::support
