// ProcessSampler over sample /proc and cgroup trees (v2 and v1), the real
// /proc of this process, and NVML through a stand-in library (fake_nvml.c)
// and through a missing one.
#include <trainhook/system_stats/nvml.hpp>
#include <trainhook/system_stats/process_sampler.hpp>
#include <trainhook/system_stats/system_stats_options.hpp>

#include <trainhook/plugin.hpp>

#include <doctest/doctest.h>

#include <fstream>
#include <iterator>

#include <time.h>

#include <chrono>
#include <cmath>
#include <map>
#include <string>

using namespace trainhook::system_stats;
namespace fs = std::filesystem;

namespace {

std::map<std::string, double> as_map(const std::vector<std::pair<std::string, double>>& v) {
  return {v.begin(), v.end()};
}

ProcPaths tree(const std::string& name) {
  const fs::path d = fs::path(TRAINHOOK_SYSTEM_STATS_DATA) / name;
  return ProcPaths{d, d / "sys"};
}

}  // namespace

TEST_CASE("a v2 tree: memory and the limit of the process's own cgroup and CPU from the second sample") {
  ProcessSampler s(tree("proc_v2"), 100);
  auto first = as_map(s.sample(10.0));
  CHECK(first.at("system/rss_bytes") == 790120.0 * 1024);
  CHECK(first.at("system/peak_rss_bytes") == 812344.0 * 1024);
  CHECK(first.at("system/cgroup_memory_limit_bytes") == 2147483648.0);
  CHECK(first.count("system/cpu_percent") == 0);
  // The same ticks 2 s later: an idle process.
  CHECK(as_map(s.sample(12.0)).at("system/cpu_percent") == 0.0);
}

TEST_CASE("a v1 tree: the memory controller's limit") {
  ProcessSampler s(tree("proc_v1"), 100);
  CHECK(as_map(s.sample(1.0)).at("system/cgroup_memory_limit_bytes") == 536870912.0);
}

TEST_CASE("limit candidates walk up from the process's cgroup and never above the mount") {
  const auto c = cgroup_limit_candidates({{"0", {}, "/a/b"}}, "/cg");
  REQUIRE(c.size() >= 3);
  CHECK(c[0] == fs::path("/cg/a/b/memory.max"));
  CHECK(c[1] == fs::path("/cg/a/memory.max"));
  CHECK(c[2] == fs::path("/cg/memory.max"));
  for (const auto& p : cgroup_limit_candidates({{"0", {}, "/../../etc"}}, "/cg"))
    CHECK(p.string().find("..") == std::string::npos);
}

TEST_CASE("this process: RSS and the CPU percentage of a busy loop against the process CPU clock") {
  auto process_cpu_s = [] {
    timespec ts{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  };
  ProcessSampler s;
  const auto start = std::chrono::steady_clock::now();
  const double cpu0 = process_cpu_s();
  (void)s.sample(0.0);
  // Busy until the process has used 0.3 s of CPU, however loaded the machine is.
  volatile double x = 0;
  while (process_cpu_s() - cpu0 < 0.3) x = x + 1;
  const double cpu = process_cpu_s() - cpu0;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto m = as_map(s.sample(wall));
  CHECK(m.at("system/rss_bytes") > 1e6);
  CHECK(m.at("system/peak_rss_bytes") >= m.at("system/rss_bytes"));
  // statm and getrusage say what status says (VmRSS moves a little between the reads).
  std::ifstream status_file("/proc/self/status");
  const std::string status_text((std::istreambuf_iterator<char>(status_file)), std::istreambuf_iterator<char>());
  const ProcStatus status = parse_proc_status(status_text);
  REQUIRE(status.rss_bytes);
  REQUIRE(status.peak_rss_bytes);
  CHECK(std::abs(m.at("system/rss_bytes") - static_cast<double>(*status.rss_bytes)) < 4e6);
  CHECK(std::abs(m.at("system/peak_rss_bytes") - static_cast<double>(*status.peak_rss_bytes)) < 4e6);
  // The same quantity: the sampler reads the same clock, a moment apart.
  const double want = 100.0 * cpu / wall;
  CHECK_MESSAGE(std::abs(m.at("system/cpu_percent") - want) <= 2.0,
                "sampler " << m.at("system/cpu_percent") << " vs clock " << want);
}

TEST_CASE("NVML missing: no driver and a reason") {
  std::string why;
  CHECK(Nvml::load(why, "libnvidia-ml-not-here.so.1") == nullptr);
  CHECK(why.find("no NVIDIA driver") != std::string::npos);
  CHECK(Nvml::load(why, "libc.so.6") == nullptr);
  CHECK(why.find("has no nvmlInit_v2") != std::string::npos);
}

TEST_CASE("NVML through a stand-in library: every device and value") {
  std::string why;
  auto nvml = Nvml::load(why, TRAINHOOK_FAKE_NVML);
  REQUIRE_MESSAGE(nvml != nullptr, why);
  CHECK(nvml->device_count() == 2);
  const auto m = as_map(nvml->sample());
  CHECK(m.at("system/gpu0/utilization_percent") == 40.0);
  CHECK(m.at("system/gpu1/utilization_percent") == 80.0);
  CHECK(m.at("system/gpu0/memory_utilization_percent") == 7.0);
  CHECK(m.at("system/gpu1/memory_used_bytes") == 2.0 * (1 << 30));
  CHECK(m.at("system/gpu0/memory_total_bytes") == 80.0 * (1 << 30));
  CHECK(m.at("system/gpu0/power_watts") == 312.5);
  CHECK(m.count("system/gpu1/power_watts") == 0);  // the device did not report it
}

TEST_CASE("system_stats options and their errors") {
  CHECK(SystemStatsOptions::from_json("{}").interval_steps() == 10);
  CHECK_FALSE(SystemStatsOptions::from_json(R"({"gpu": "false"})").gpu());
  CHECK_THROWS_WITH_AS(SystemStatsOptions::from_json(R"({"interval_steps": 0})"),
                       doctest::Contains("plugin_config system_stats.interval_steps"),
                       trainhook::ConfigError);
  CHECK_THROWS_WITH_AS(SystemStatsOptions::from_json(R"({"interval": 5})"), doctest::Contains("unknown key"),
                       trainhook::ConfigError);
}
