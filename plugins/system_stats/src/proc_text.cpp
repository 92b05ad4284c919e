#include <trainhook/system_stats/proc_text.hpp>

#include <limits>

namespace trainhook::system_stats {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// All of `s` as a decimal number without sign; nullopt on anything else or overflow.
std::optional<uint64_t> parse_u64(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    out.push_back(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

// "VmRSS:\t  1234 kB" -> bytes.
std::optional<uint64_t> kib_value(std::string_view rest) {
  rest = trim(rest);
  const size_t sp = rest.find_first_of(" \t");
  if (sp == std::string_view::npos) return std::nullopt;
  if (trim(rest.substr(sp)) != "kB") return std::nullopt;
  const std::optional<uint64_t> kib = parse_u64(rest.substr(0, sp));
  if (!kib || *kib > std::numeric_limits<uint64_t>::max() / 1024) return std::nullopt;
  return *kib * 1024;
}

}  // namespace

ProcStatus parse_proc_status(std::string_view text) {
  ProcStatus s;
  for (std::string_view line : lines_of(text)) {
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, colon);
    if (key == "VmRSS") s.rss_bytes = kib_value(line.substr(colon + 1));
    if (key == "VmHWM") s.peak_rss_bytes = kib_value(line.substr(colon + 1));
  }
  return s;
}

std::optional<uint64_t> parse_proc_statm_rss_bytes(std::string_view text, long page_size) {
  // "size resident shared text lib data dt", all in pages.
  text = trim(text);
  const size_t sp = text.find(' ');
  if (sp == std::string_view::npos || page_size <= 0) return std::nullopt;
  std::string_view rest = text.substr(sp + 1);
  const std::optional<uint64_t> pages = parse_u64(rest.substr(0, rest.find(' ')));
  const auto page = static_cast<uint64_t>(page_size);
  if (!pages || *pages > std::numeric_limits<uint64_t>::max() / page) return std::nullopt;
  return *pages * page;
}

std::optional<uint64_t> parse_proc_stat_cpu_ticks(std::string_view text) {
  // "pid (comm) state ppid ...": comm may hold ')' itself; the last one ends it.
  const size_t close = text.rfind(')');
  if (close == std::string_view::npos || text.find('(') > close) return std::nullopt;
  std::string_view rest = text.substr(close + 1);
  // Field 3 (state) is the first after the name; utime and stime are 14 and 15.
  std::optional<uint64_t> utime;
  int field = 2;
  while (true) {
    while (!rest.empty() && is_space(rest.front())) rest.remove_prefix(1);
    if (rest.empty()) return std::nullopt;
    size_t end = 0;
    while (end < rest.size() && !is_space(rest[end])) ++end;
    ++field;
    const std::string_view token = rest.substr(0, end);
    if (field == 14) {
      utime = parse_u64(token);
      if (!utime) return std::nullopt;
    } else if (field == 15) {
      const std::optional<uint64_t> stime = parse_u64(token);
      if (!stime || *stime > std::numeric_limits<uint64_t>::max() - *utime) return std::nullopt;
      return *utime + *stime;
    }
    rest.remove_prefix(end);
  }
}

std::vector<CgroupLine> parse_proc_self_cgroup(std::string_view text) {
  std::vector<CgroupLine> out;
  for (std::string_view line : lines_of(text)) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const size_t a = line.find(':');
    if (a == std::string_view::npos) continue;
    const size_t b = line.find(':', a + 1);
    if (b == std::string_view::npos) continue;
    CgroupLine c;
    c.hierarchy = std::string(line.substr(0, a));
    std::string_view controllers = line.substr(a + 1, b - a - 1);
    while (!controllers.empty()) {
      const size_t comma = controllers.find(',');
      if (comma != 0) c.controllers.emplace_back(controllers.substr(0, comma));
      if (comma == std::string_view::npos) break;
      controllers.remove_prefix(comma + 1);
    }
    c.path = std::string(line.substr(b + 1));
    out.push_back(std::move(c));
  }
  return out;
}

std::optional<uint64_t> parse_cgroup_memory_limit(std::string_view text) {
  const std::string_view t = trim(text);
  if (t == "max") return std::nullopt;
  const std::optional<uint64_t> v = parse_u64(t);
  // v1 reports "unlimited" as PAGE_COUNTER_MAX pages (9223372036854771712 with
  // 4 KiB pages); no machine has 2^62 bytes, so anything that large is no limit.
  if (!v || *v >= (uint64_t{1} << 62)) return std::nullopt;
  return v;
}

}  // namespace trainhook::system_stats
