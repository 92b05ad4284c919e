#include <trainhook/progress/bar_format.hpp>

#include <cmath>
#include <cstdio>

namespace trainhook::progress {
namespace {

std::string printf_string(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// "[00:12<00:15,  3.61it/s, loss=...]" (or "[00:12, 3.61it/s]" when the total is unknown).
std::string right_part(const BarSnapshot& s) {
  std::string r = "[" + format_duration(s.elapsed);
  if (s.total > 0) {
    const bool known = s.rate > 0 && s.n <= s.total;
    r += "<" + (known ? format_duration(static_cast<double>(s.total - s.n) / s.rate) : std::string("?"));
  }
  r += ", " + format_rate(s.rate);
  if (!s.postfix.empty()) r += ", " + s.postfix;
  r += "]";
  return r;
}

std::string counts(const BarSnapshot& s) {
  if (s.total > 0) return std::to_string(s.n) + "/" + std::to_string(s.total);
  return std::to_string(s.n) + "it";
}

double fraction(const BarSnapshot& s) {
  if (s.total <= 0) return 0;
  const double f = static_cast<double>(s.n) / static_cast<double>(s.total);
  return f < 0 ? 0 : (f > 1 ? 1 : f);
}

std::string percent(const BarSnapshot& s) {
  return printf_string("%3.0f%%", std::floor(fraction(s) * 100.0));
}

std::string label_prefix(const BarSnapshot& s) { return s.label.empty() ? std::string() : s.label + ": "; }

// The bar of `cells` columns: full blocks, one partial block, spaces.
std::string bar_cells(double frac, int cells, bool unicode) {
  static const char* const kPartial[] = {"",       "\u258F", "\u258E", "\u258D",
                                         "\u258C", "\u258B", "\u258A", "\u2589"};
  std::string out;
  if (unicode) {
    const int eighths = static_cast<int>(frac * cells * 8);
    const int full = eighths / 8;
    for (int i = 0; i < full; ++i) out += "\u2588";
    int used = full;
    if (full < cells && eighths % 8 != 0) {
      out += kPartial[eighths % 8];
      ++used;
    }
    out.append(static_cast<size_t>(cells - used), ' ');
  } else {
    const int full = static_cast<int>(frac * cells);
    out.append(static_cast<size_t>(full), '#');
    out.append(static_cast<size_t>(cells - full), ' ');
  }
  return out;
}

}  // namespace

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) seconds = 0;
  const auto total = static_cast<int64_t>(seconds);
  const int64_t h = total / 3600, m = (total / 60) % 60, sec = total % 60;
  char buf[48];
  if (h > 0)
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(h), static_cast<long long>(m),
                  static_cast<long long>(sec));
  else
    std::snprintf(buf, sizeof buf, "%02lld:%02lld", static_cast<long long>(m), static_cast<long long>(sec));
  return buf;
}

std::string format_rate(double rate) {
  if (!(rate > 0) || !std::isfinite(rate)) return "?it/s";
  if (rate < 1) return printf_string("%5.2fs/it", 1.0 / rate);
  return printf_string("%5.2fit/s", rate);
}

std::string format_postfix(std::optional<double> loss, std::optional<double> learning_rate) {
  std::string out;
  if (loss) out += printf_string("loss=%.4g", *loss);
  if (learning_rate) {
    if (!out.empty()) out += ", ";
    out += printf_string("lr=%.3g", *learning_rate);
  }
  return out;
}

std::string format_tty_line(const BarSnapshot& s, int columns, bool unicode) {
  const size_t width = columns > 1 ? static_cast<size_t>(columns - 1) : 0;
  std::string left = label_prefix(s);
  const std::string right = " " + counts(s) + " " + right_part(s);
  if (s.total > 0) {
    left += percent(s) + "|";
    const size_t fixed = left.size() + 1 + right.size();  // + the closing '|'
    if (fixed + 1 <= width) {                             // at least one bar cell fits
      return left + bar_cells(fraction(s), static_cast<int>(width - fixed), unicode) + "|" + right;
    }
    left.pop_back();  // no room for a bar: drop its frame
  }
  std::string line = left + right;
  if (line.size() > width) line.resize(width);  // ASCII only here: bytes are columns
  return line;
}

std::string format_plain_line(const BarSnapshot& s) {
  std::string line = label_prefix(s);
  if (s.total > 0) line += percent(s) + " ";
  line += counts(s) + " " + right_part(s);
  return line;
}

}  // namespace trainhook::progress
