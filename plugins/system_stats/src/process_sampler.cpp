#include <trainhook/system_stats/process_sampler.hpp>

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

namespace trainhook::system_stats {
namespace {

// The file's text, or nullopt when it cannot be read. /proc files are small;
// 64 KiB bounds a file that is not what it should be. Plain read(2) into a
// stack buffer: a sample is a few of these, on the training thread.
std::optional<std::string> slurp(const std::filesystem::path& p) {
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buf[4096];
  while (text.size() < 64 * 1024) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

}  // namespace

std::vector<std::filesystem::path> cgroup_limit_candidates(const std::vector<CgroupLine>& lines,
                                                           const std::filesystem::path& cgroup_root) {
  std::vector<std::filesystem::path> out;
  auto walk = [&](const std::filesystem::path& base, std::string path, const char* file) {
    // Never above the mount: ".." in a path from the file is not followed.
    if (path.find("..") != std::string::npos) path = "/";
    for (;;) {
      out.push_back(base / std::filesystem::path(path).relative_path() / file);
      if (path.empty() || path == "/") break;
      const size_t slash = path.find_last_of('/');
      path = slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
    }
  };
  for (const CgroupLine& c : lines)
    if (c.hierarchy == "0" && c.controllers.empty()) walk(cgroup_root, c.path, "memory.max");
  for (const CgroupLine& c : lines)
    for (const std::string& ctl : c.controllers)
      if (ctl == "memory") walk(cgroup_root / "memory", c.path, "memory.limit_in_bytes");
  out.push_back(cgroup_root / "memory.max");
  out.push_back(cgroup_root / "memory" / "memory.limit_in_bytes");
  return out;
}

ProcessSampler::ProcessSampler(ProcPaths paths, long ticks_per_second) : paths_(std::move(paths)) {
  if (ticks_per_second <= 0) ticks_per_second = ::sysconf(_SC_CLK_TCK);
  ticks_per_second_ = ticks_per_second > 0 ? static_cast<double>(ticks_per_second) : 100.0;
}

std::vector<std::pair<std::string, double>> ProcessSampler::sample(double wall_seconds) {
  std::vector<std::pair<std::string, double>> out;
  if (const auto status = slurp(paths_.proc_self / "status")) {
    const ProcStatus s = parse_proc_status(*status);
    if (s.rss_bytes) out.emplace_back("system/rss_bytes", static_cast<double>(*s.rss_bytes));
    if (s.peak_rss_bytes) out.emplace_back("system/peak_rss_bytes", static_cast<double>(*s.peak_rss_bytes));
  }
  // This process's CPU time: the kernel's own clock (nanoseconds) when the
  // paths are this process's, since /proc's 10 ms ticks make a short interval's
  // percentage meaningless (a 4-step interval of 20 ms read 295% on 2 cores);
  // /proc/<self>/stat's ticks otherwise (the injected trees of the tests).
  std::optional<double> cpu_seconds;
  if (paths_.proc_self == "/proc/self") {
    timespec ts{};
    if (::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0)
      cpu_seconds = static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  } else if (const auto stat = slurp(paths_.proc_self / "stat")) {
    if (const std::optional<uint64_t> ticks = parse_proc_stat_cpu_ticks(*stat))
      cpu_seconds = static_cast<double>(*ticks) / ticks_per_second_;
  }
  if (cpu_seconds) {
    if (last_cpu_ && wall_seconds > last_cpu_->first && *cpu_seconds >= last_cpu_->second)
      out.emplace_back("system/cpu_percent",
                       100.0 * (*cpu_seconds - last_cpu_->second) / (wall_seconds - last_cpu_->first));
    last_cpu_ = std::make_pair(wall_seconds, *cpu_seconds);
  }
  if (!limit_resolved_) {
    // The cgroup does not change during a run: found once, read every sample.
    limit_resolved_ = true;
    std::vector<CgroupLine> lines;
    if (const auto cg = slurp(paths_.proc_self / "cgroup")) lines = parse_proc_self_cgroup(*cg);
    for (const auto& candidate : cgroup_limit_candidates(lines, paths_.cgroup_root)) {
      std::error_code ec;
      if (std::filesystem::is_regular_file(candidate, ec)) {
        limit_file_ = candidate;
        break;
      }
    }
  }
  if (limit_file_)
    if (const auto text = slurp(*limit_file_))
      if (const std::optional<uint64_t> limit = parse_cgroup_memory_limit(*text))
        out.emplace_back("system/cgroup_memory_limit_bytes", static_cast<double>(*limit));
  return out;
}

}  // namespace trainhook::system_stats
