// The few terminal facts the progress display needs, and a write that never
// throws. POSIX only; used on the display thread, never on the training thread.
#pragma once

#include <string_view>

namespace trainhook::progress {

// isatty(fd).
bool is_terminal(int fd) noexcept;
// Width of the terminal on fd (ioctl TIOCGWINSZ), else $COLUMNS, else 80.
int terminal_columns(int fd) noexcept;
// True when LC_ALL / LC_CTYPE / LANG (the first one set) names UTF-8, so the
// bar may use Unicode block characters.
bool locale_is_utf8() noexcept;
// Writes all of text to fd, retrying on EINTR and short writes; gives up
// silently on any other error (a closed pipe must not end training).
void write_all(int fd, std::string_view text) noexcept;

}  // namespace trainhook::progress
