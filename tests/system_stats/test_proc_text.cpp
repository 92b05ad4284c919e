// The /proc and cgroup text parsers (sample files in data/), and what they
// answer for damaged input (nullopt, never a throw; fuzz_proc_text explores more).
#include <trainhook/system_stats/proc_text.hpp>

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

using namespace trainhook::system_stats;

namespace {

std::string sample(const std::string& name) {
  std::ifstream in(std::string(TRAINHOOK_SYSTEM_STATS_DATA) + "/" + name);
  REQUIRE_MESSAGE(in.good(), name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("proc status gives VmRSS and VmHWM in bytes") {
  const ProcStatus s = parse_proc_status(sample("proc_v2/status"));
  CHECK(s.rss_bytes == uint64_t{790120} * 1024);
  CHECK(s.peak_rss_bytes == uint64_t{812344} * 1024);
}

TEST_CASE("proc status without the fields or with damaged ones gives nothing") {
  CHECK_FALSE(parse_proc_status("Name:\tx\n").rss_bytes.has_value());
  CHECK_FALSE(parse_proc_status("VmRSS:\t12 MB\n").rss_bytes.has_value());
  CHECK_FALSE(parse_proc_status("VmRSS:\t-5 kB\n").rss_bytes.has_value());
  CHECK_FALSE(parse_proc_status("VmRSS:\t99999999999999999999 kB\n").rss_bytes.has_value());
  CHECK_FALSE(parse_proc_status("VmRSS:").rss_bytes.has_value());
  CHECK(parse_proc_status("VmHWM: 1 kB").peak_rss_bytes == uint64_t{1024});
}

TEST_CASE("proc statm gives the resident pages in bytes") {
  CHECK(parse_proc_statm_rss_bytes("52345 1234 567 8 0 900 0\n", 4096) == uint64_t{1234} * 4096);
  CHECK_FALSE(parse_proc_statm_rss_bytes("52345\n", 4096));
  CHECK_FALSE(parse_proc_statm_rss_bytes("52345 x12 5\n", 4096));
  CHECK_FALSE(parse_proc_statm_rss_bytes("1 99999999999999999999 2", 4096));
  CHECK_FALSE(parse_proc_statm_rss_bytes("1 2 3", 0));
}

TEST_CASE("proc stat gives utime plus stime past a command name with spaces and parentheses") {
  CHECK(parse_proc_stat_cpu_ticks(sample("proc_v2/stat")) == uint64_t{1234 + 567});
  CHECK_FALSE(parse_proc_stat_cpu_ticks("").has_value());
  CHECK_FALSE(parse_proc_stat_cpu_ticks("1 (x) R 1 2 3").has_value());  // cut short
  CHECK_FALSE(parse_proc_stat_cpu_ticks("1 x) R 1 1 1 1 1 1 1 1 1 1 a 5").has_value());
  CHECK_FALSE(parse_proc_stat_cpu_ticks(") (").has_value());
  CHECK_FALSE(parse_proc_stat_cpu_ticks("1 (x) R 1 1 1 1 1 1 1 1 1 1 18446744073709551615 1 0")
                  .has_value());  // overflow
}

TEST_CASE("proc self cgroup lines of v2 and v1") {
  const auto v2 = parse_proc_self_cgroup(sample("proc_v2/cgroup"));
  REQUIRE(v2.size() == 1);
  CHECK(v2[0].hierarchy == "0");
  CHECK(v2[0].controllers.empty());
  CHECK(v2[0].path == "/system.slice/job.scope");
  const auto v1 = parse_proc_self_cgroup(sample("proc_v1/cgroup"));
  REQUIRE(v1.size() == 4);
  CHECK(v1[1].controllers == std::vector<std::string>{"memory"});
  CHECK(v1[2].controllers == std::vector<std::string>{"cpu", "cpuacct"});
  CHECK(v1[1].path == "/docker/abc");
  CHECK(parse_proc_self_cgroup("garbage\n\n::\n").size() == 1);
}

TEST_CASE("cgroup memory limits and their no-limit forms") {
  CHECK(parse_cgroup_memory_limit("2147483648\n") == uint64_t{2147483648});
  CHECK_FALSE(parse_cgroup_memory_limit("max\n").has_value());
  CHECK_FALSE(parse_cgroup_memory_limit("9223372036854771712\n").has_value());  // v1 unlimited
  CHECK_FALSE(parse_cgroup_memory_limit("").has_value());
  CHECK_FALSE(parse_cgroup_memory_limit("12k").has_value());
}
