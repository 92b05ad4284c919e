#include <trainhook/support/host_name.hpp>

#include <unistd.h>

namespace trainhook::support {

std::string host_name(std::string_view fallback) {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return std::string(fallback);
  return buf;
}

}  // namespace trainhook::support
