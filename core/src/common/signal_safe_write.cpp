#include <trainhook/common/signal_safe_write.hpp>

#include <unistd.h>
#include <cstring>

namespace trainhook {

void write_stderr_signal_safe(const char* text) noexcept {
  if (text == nullptr) text = "?";
  size_t n = std::strlen(text);
  while (n > 0) {
    const ssize_t w = ::write(STDERR_FILENO, text, n);
    if (w <= 0) return;
    text += w;
    n -= static_cast<size_t>(w);
  }
}

}  // namespace trainhook
