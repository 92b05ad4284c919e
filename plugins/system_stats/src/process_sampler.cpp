#include <trainhook/system_stats/process_sampler.hpp>

#include <fcntl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

namespace trainhook::system_stats {
namespace {

// The text of a file opened for one read (the cgroup file at the first sample).
std::optional<std::string> read_once(const std::filesystem::path& p) {
  const KeptFile f(p);
  return f.read();
}

}  // namespace

KeptFile::KeptFile(const std::filesystem::path& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}

KeptFile::~KeptFile() {
  if (fd_ >= 0) ::close(fd_);
}

KeptFile::KeptFile(KeptFile&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

KeptFile& KeptFile::operator=(KeptFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

std::optional<std::string> KeptFile::read() const {
  if (fd_ < 0) return std::nullopt;
  // Kernel text files are small; 64 KiB bounds a file that is not what it should be.
  std::string text;
  char buf[4096];
  while (text.size() < 64 * 1024) {
    const ssize_t n = ::pread(fd_, buf, sizeof buf, static_cast<off_t>(text.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  return text;
}

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

ProcessSampler::ProcessSampler(ProcPaths paths, long ticks_per_second)
    : paths_(std::move(paths)), live_(paths_.proc_self == "/proc/self") {
  if (ticks_per_second <= 0) ticks_per_second = ::sysconf(_SC_CLK_TCK);
  ticks_per_second_ = ticks_per_second > 0 ? static_cast<double>(ticks_per_second) : 100.0;
  // statm is a line of counters; status is a page of text the kernel builds
  // on every read (tens of microseconds in a large process).
  memory_ = KeptFile(paths_.proc_self / (live_ ? "statm" : "status"));
  if (!live_) stat_ = KeptFile(paths_.proc_self / "stat");
  page_size_ = ::sysconf(_SC_PAGESIZE);
}

std::vector<std::pair<std::string, double>> ProcessSampler::sample(double wall_seconds) {
  std::vector<std::pair<std::string, double>> out;
  ProcStatus mem;
  if (const auto text = memory_.read()) {
    if (live_) {
      mem.rss_bytes = parse_proc_statm_rss_bytes(*text, page_size_);
      // ru_maxrss is the kernel's high-water RSS in KiB, which it raises
      // lazily; status's VmHWM is the larger of it and the current RSS.
      rusage ru{};
      if (::getrusage(RUSAGE_SELF, &ru) == 0 && ru.ru_maxrss > 0)
        mem.peak_rss_bytes = std::max(static_cast<uint64_t>(ru.ru_maxrss) * 1024, mem.rss_bytes.value_or(0));
    } else {
      mem = parse_proc_status(*text);
    }
  }
  if (mem.rss_bytes) out.emplace_back("system/rss_bytes", static_cast<double>(*mem.rss_bytes));
  if (mem.peak_rss_bytes) out.emplace_back("system/peak_rss_bytes", static_cast<double>(*mem.peak_rss_bytes));
  // This process's CPU time: the kernel's own clock (nanoseconds) when the
  // paths are this process's, since /proc's 10 ms ticks make a short interval's
  // percentage meaningless (one tick more or less is a large share of it);
  // /proc/<self>/stat's ticks otherwise (the injected trees of the tests).
  std::optional<double> cpu_seconds;
  if (live_) {
    timespec ts{};
    if (::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0)
      cpu_seconds = static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  } else if (const auto stat = stat_.read()) {
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
    if (const auto cg = read_once(paths_.proc_self / "cgroup")) lines = parse_proc_self_cgroup(*cg);
    for (const auto& candidate : cgroup_limit_candidates(lines, paths_.cgroup_root)) {
      std::error_code ec;
      if (std::filesystem::is_regular_file(candidate, ec)) {
        limit_ = KeptFile(candidate);
        break;
      }
    }
  }
  if (limit_.is_open())
    if (const auto text = limit_.read())
      if (const std::optional<uint64_t> limit = parse_cgroup_memory_limit(*text))
        out.emplace_back("system/cgroup_memory_limit_bytes", static_cast<double>(*limit));
  return out;
}

}  // namespace trainhook::system_stats
