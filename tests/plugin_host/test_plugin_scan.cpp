// The plugin scanner as the registry runs it (plugin_scan.hpp), against the
// libraries of registry_cache_plugins.c (DAEMON_CTOR, GATED_CTOR): an answer
// counts as soon as it arrives, whatever a library's constructor left running
// with the scanner's pipes, and everything in the scanner's process group ends
// with the scan; and it scans only the version of the file its caller judged.
#include "isolation/helper_executable.hpp"
#include "registry/plugin_loader.hpp"
#include "registry/plugin_scan.hpp"

#include <trainhook/plugin_host/registry/plugin_file_name.hpp>

#include <doctest/doctest.h>
#include <sanitizer.hpp>
#include <temp_dir.hpp>
#include <wait_until.hpp>

#include <signal.h>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>

using namespace trainhook;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using trainhook::testkit::TempDir;

namespace {

const fs::path kRoot = TRAINHOOK_TEST_PLUGIN_ROOT;

fs::path library(const std::string& name) {
  return kRoot / ("scan_" + name) / plugin_file_name("scan_" + name);
}

// Whether process `pid` has ended: no such process, or a zombie that its new
// parent has not reaped yet (a container's init may never do it).
bool gone(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const size_t name_end = line.rfind(')');
  return name_end != std::string::npos && name_end + 2 < line.size() && line[name_end + 2] == 'Z';
}

// The version of `file` there now, as the registry judges it.
detail::FileIdentity identity_of(const fs::path& file) {
  const detail::PluginFile f(file);
  REQUIRE(f.is_open());
  return f.identity();
}

// Sets an environment variable for one scope.
struct ScopedEnv {
  ScopedEnv(const char* name, const std::string& value) : name_(name) { ::setenv(name, value.c_str(), 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  const char* name_;
};

}  // namespace

TEST_CASE(
    "a constructor's daemon that keeps the scanner's pipes: the answer counts, the daemon ends with the "
    "scan") {
  TempDir dir("th_scan");
  const fs::path pid_file = dir.path / "daemon.pid";
  ScopedEnv env("TRAINHOOK_TEST_DAEMON_PID_FILE", pid_file.string());
  LibraryRecord rec;
  rec.path = library("daemon");
  const auto started = std::chrono::steady_clock::now();
  const bool timed_out = detail::scan_in_helper(detail::helper_executable("trainhook-plugin-scanner"),
                                                rec.path, identity_of(rec.path), 30s, rec);
  const auto took = std::chrono::steady_clock::now() - started;
  CHECK_FALSE(timed_out);
  CHECK(rec.refused_reason == "");
  CHECK(rec.loaded);
  REQUIRE(rec.callbacks.size() == 1);
  CHECK(rec.callbacks[0].name == "scan_daemon");
  // The scan ended with the answer, not at the limit (the daemon never closes the pipes).
  CHECK(took < 20s);
  const std::string text = trainhook::testkit::read_file(pid_file);
  REQUIRE_FALSE(text.empty());
  const pid_t daemon = static_cast<pid_t>(std::stol(text));
  REQUIRE(daemon > 1);
  CHECK(::testkit::wait_until([&] { return gone(daemon); }, 10s));
}

TEST_CASE("a library that does not answer in time: the scan says timed out, and an answering one does not") {
  TempDir dir("th_scan");
  const fs::path gate = dir.path / "gate";
  ScopedEnv env("TRAINHOOK_TEST_SCAN_GATE", gate.string());
  const fs::path scanner = detail::helper_executable("trainhook-plugin-scanner");
  LibraryRecord rec;
  rec.path = library("gated");
  CHECK(detail::scan_in_helper(scanner, rec.path, identity_of(rec.path), 300ms, rec));
  CHECK_FALSE(rec.loaded);
  CHECK(rec.refused_reason.rfind("did not answer within 0.3 s while loading (the scanner was killed; "
                                 "TRAINHOOK_PLUGIN_SCAN_TIMEOUT sets the limit)",
                                 0) == 0);

  trainhook::testkit::write_file(gate, "open");
  LibraryRecord again;
  again.path = rec.path;
  CHECK_FALSE(detail::scan_in_helper(scanner, again.path, identity_of(again.path), 30s, again));
  CHECK(again.loaded);
  CHECK(again.refused_reason == "");
}

TEST_CASE(
    "the scanner judges only the version of the file its caller judged: a file put there since is refused") {
  TempDir dir("th_scan");
  const fs::path file = dir.path / plugin_file_name("c_plugin");
  fs::copy_file(kRoot / "good" / plugin_file_name("c_plugin"), file);
  const detail::FileIdentity judged = identity_of(file);
  // Renamed over by another library (mv, a package upgrade) after the caller judged it.
  const fs::path other = dir.path / "incoming.so";
  fs::copy_file(kRoot / "good" / plugin_file_name("test_pack"), other);
  fs::rename(other, file);
  LibraryRecord rec;
  rec.path = file;
  CHECK_FALSE(
      detail::scan_in_helper(detail::helper_executable("trainhook-plugin-scanner"), file, judged, 30s, rec));
  CHECK_FALSE(rec.loaded);
  CHECK(rec.callbacks.empty());
  CHECK(rec.refused_reason.rfind(std::string(detail::kNotTheJudgedFile) + file.string() +
                                     " was replaced by another file after it was checked (file identity " +
                                     judged.to_text() + " when checked, ",
                                 0) == 0);
}

TEST_CASE("a library that crashes or exits while loading is still judged by how the scanner ended") {
  const fs::path scanner = detail::helper_executable("trainhook-plugin-scanner");
  LibraryRecord rec;
  rec.path = kRoot / "misbehaving" / plugin_file_name("ctor_segv");
  CHECK_FALSE(detail::scan_in_helper(scanner, rec.path, identity_of(rec.path), 30s, rec));
  CHECK_FALSE(rec.loaded);
  CHECK(rec.refused_reason.rfind(std::string(trainhook::testkit::kSegvCause) + " while loading", 0) == 0);
}
