// The registry cache (registry_cache.hpp) and the registry's checks around it:
// what it remembers is used only for the bytes that were scanned. A library
// copied over in place (size, inode and mtime kept) is scanned again; one the
// stat key cannot tell apart is caught by its SHA-256 before it is loaded; a
// timeout verdict is judged again under a higher limit; a cache path that is
// a FIFO or a device is ignored with a warning; entries of the previous
// version are stale, not damage. What is hashed is what is loaded: a library
// renamed over after its check runs the checked bytes (in process, and in a
// runner the descriptor is passed to), one written to in place is refused.
// The libraries: registry_cache_plugins.c (three variants of one file, and
// GATED_CTOR), misbehaving_plugins.cpp.
#include "registry/plugin_loader.hpp"
#include "registry/registry_cache.hpp"

#include <trainhook/common/errors.hpp>
#include <trainhook/common/sha256sum.hpp>
#include <trainhook/plugin_host/registry/plugin_file_name.hpp>
#include <trainhook/plugin_host/registry/plugin_registry.hpp>

#include <doctest/doctest.h>
#include <sanitizer.hpp>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <recording_host.hpp>
#include <temp_dir.hpp>
#include <wait_until.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

using namespace trainhook;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using trainhook::testkit::read_file;
using trainhook::testkit::RecordingHost;
using trainhook::testkit::TempDir;
using trainhook::testkit::write_file;

namespace {

const fs::path kRoot = TRAINHOOK_TEST_PLUGIN_ROOT;
const std::string kReplaceable = plugin_file_name("replaceable");

fs::path variant(int v) { return kRoot / ("replaceable_" + std::to_string(v)) / kReplaceable; }

// The variants are built to the same size; pad to the largest in case a
// compiler made them differ, so every copy keeps the installed file's size.
size_t common_size() {
  size_t n = 0;
  for (int v : {1, 2, 3}) n = std::max<size_t>(n, fs::file_size(variant(v)));
  return n;
}

// Writes variant v's bytes into `to` in place (same inode, same size), then
// sets its access and modification times back, as `cp -p` or
// `rsync --inplace` of a build with the same date would leave it.
void copy_in_place(const fs::path& from, const fs::path& to) {
  struct stat before {};
  REQUIRE(::stat(to.c_str(), &before) == 0);
  std::string bytes = read_file(from);
  REQUIRE(bytes.size() <= static_cast<size_t>(before.st_size));
  bytes.resize(static_cast<size_t>(before.st_size), '\0');
  {
    std::fstream out(to, std::ios::in | std::ios::out | std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    REQUIRE(out.good());
  }
  const struct timespec times[2] = {before.st_atim, before.st_mtim};
  REQUIRE(::utimensat(AT_FDCWD, to.c_str(), times, 0) == 0);
  struct stat after {};
  REQUIRE(::stat(to.c_str(), &after) == 0);
  REQUIRE(after.st_size == before.st_size);
  REQUIRE(after.st_ino == before.st_ino);
  REQUIRE(after.st_mtim.tv_sec == before.st_mtim.tv_sec);
  REQUIRE(after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
}

// A folder holding variant 1 as libtrainhook_replaceable.so (padded to the common size).
fs::path install_variant_1(const TempDir& dir) {
  const fs::path folder = dir.path / "plugins";
  fs::create_directories(folder);
  const fs::path file = folder / kReplaceable;
  std::string bytes = read_file(variant(1));
  bytes.resize(common_size(), '\0');
  write_file(file, bytes);
  return file;
}

// Puts variant v at `file` the way mv, a package upgrade or rsync does: a
// new file renamed over the old one (another inode).
void rename_over(int v, const fs::path& file) {
  const fs::path incoming = file.parent_path() / ".incoming.so";
  std::string bytes = read_file(variant(v));
  bytes.resize(common_size(), '\0');
  write_file(incoming, bytes);
  fs::rename(incoming, file);
}

// Rewrites the cache entry of `file` with the file's current stat key, as if
// its ctime had not moved (a replacement within the same clock tick, or a
// file system or tool that keeps it): only the bytes differ from what was scanned.
void forge_current_key(const fs::path& cache, const fs::path& file) {
  auto doc = nlohmann::json::parse(read_file(cache));
  const auto key = detail::library_file_key(fs::canonical(file));
  REQUIRE(key);
  bool found = false;
  for (auto& e : doc.at("libraries")) {
    if (e.at("path") != key->path) continue;
    e["size"] = key->size;
    e["mtime_ns"] = key->mtime_ns;
    e["ctime_ns"] = key->ctime_ns;
    e["inode"] = key->inode;
    found = true;
  }
  REQUIRE(found);
  write_file(cache, doc.dump(1));
}

// The SHA-256 the cache keeps for `file`.
std::string cached_sha256(const fs::path& cache, const fs::path& file) {
  const auto doc = nlohmann::json::parse(read_file(cache));
  for (const auto& e : doc.at("libraries"))
    if (e.at("path") == fs::canonical(file).string()) return e.at("sha256").get<std::string>();
  return "";
}

PluginSearchOptions only(const std::vector<fs::path>& dirs) {
  PluginSearchOptions o;
  o.plugin_dirs = dirs;
  o.use_environment = false;
  o.default_dir = kRoot / "no_default_here";
  return o;
}

// Sets an environment variable for one scope.
struct ScopedEnv {
  ScopedEnv(const char* name, const std::string& value) : name_(name) { ::setenv(name, value.c_str(), 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  const char* name_;
};

// Captures the log for one scope.
struct LogCapture {
  LogCapture() : previous(spdlog::default_logger()) {
    auto logger =
        std::make_shared<spdlog::logger>("capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
    logger->set_pattern("%l %v");
    spdlog::set_default_logger(logger);
  }
  ~LogCapture() { spdlog::set_default_logger(previous); }
  std::string text() const { return out.str(); }
  std::ostringstream out;
  std::shared_ptr<spdlog::logger> previous;
};

// A registry cache in a folder of its own, with variant 1 of "replaceable"
// installed there and scanned into the cache once.
struct ScannedVariant1 {
  TempDir dir{"th_cache"};
  fs::path cache = dir.path / "registry.json";
  ScopedEnv env{"TRAINHOOK_REGISTRY_CACHE", cache.string()};
  fs::path file = install_variant_1(dir);
  ScannedVariant1() {
    PluginRegistry first(only({file.parent_path()}));
    REQUIRE(first.scanned_count() == 1);
    REQUIRE(first.libraries()[0].plugin_version == "1.0.0");
  }
};

}  // namespace

TEST_CASE("a library copied over in place with its size, inode and mtime kept is scanned again") {
  const ScannedVariant1 scanned;
  const fs::path& file = scanned.file;
  copy_in_place(variant(2), file);
  // Its ctime moved (no user-space tool sets it back): the stat key misses.
  PluginRegistry r(only({file.parent_path()}));
  CHECK(r.scanned_count() == 1);
  REQUIRE(r.libraries().size() == 1);
  CHECK(r.libraries()[0].loaded);
  CHECK(r.libraries()[0].plugin_version == "2.0.0");
  REQUIRE(r.libraries()[0].callbacks.size() == 1);
  CHECK(r.libraries()[0].callbacks[0].version == "2.0.0");
  RecordingHost host;
  auto cb = r.create("replaceable_cb", host, "{}");
  CHECK(host.logged("replaceable_cb|2|variant=2"));
  CHECK(r.scanned_count() == 1);  // the bytes were the scanned ones: no second scan
}

TEST_CASE(
    "bytes the stat key cannot tell apart are caught by their SHA-256 and scanned before they are loaded") {
  const ScannedVariant1 scanned;
  const fs::path& cache = scanned.cache;
  const fs::path& file = scanned.file;
  const std::string scanned_digest = cached_sha256(cache, file);
  CHECK(scanned_digest == sha256_of_file(file));
  copy_in_place(variant(3), file);  // same version and names: only the code differs
  forge_current_key(cache, file);

  PluginRegistry r(only({file.parent_path()}));
  CHECK(r.scanned_count() == 0);  // a listing relies on the stat key
  CHECK(r.libraries()[0].plugin_version == "1.0.0");
  LogCapture log;
  RecordingHost host;
  auto cb = r.create("replaceable_cb", host, "{}");
  CHECK(host.logged("replaceable_cb|2|variant=3"));
  CHECK(r.scanned_count() == 1);
  CHECK(log.text().find("warning plugin file " + file.string() + " changed since it was scanned (SHA-256 " +
                        scanned_digest + " when scanned, " + sha256_of_file(file) +
                        " now); scanning it again before loading it") != std::string::npos);
  // The cache now holds the new bytes' digest: the next run loads them without a scan.
  CHECK(cached_sha256(cache, file) == sha256_of_file(file));
  PluginRegistry next(only({file.parent_path()}));
  CHECK(next.scanned_count() == 0);
  CHECK(next.library_of("replaceable_cb") == fs::canonical(file));
  CHECK(next.scanned_count() == 0);
}

TEST_CASE(
    "a changed library that is refused now is never loaded: create and library_of name the file and why") {
  const ScannedVariant1 scanned;
  const fs::path& cache = scanned.cache;
  const fs::path& file = scanned.file;
  // A library whose constructor raises SIGSEGV, under the same name and key.
  write_file(file, read_file(kRoot / "misbehaving" / plugin_file_name("ctor_segv")));
  forge_current_key(cache, file);

  PluginRegistry r(only({file.parent_path()}));
  CHECK(r.scanned_count() == 0);
  REQUIRE(r.has("replaceable_cb"));
  RecordingHost host;
  const std::string refused =
      "plugin file " + file.string() + " changed since it was scanned and is refused now: " + trainhook::testkit::kSegvCause;
  CHECK_THROWS_WITH_AS(r.create("replaceable_cb", host, "{}"), doctest::Contains(refused.c_str()),
                       PluginError);
  CHECK_THROWS_WITH_AS(r.library_of("replaceable_cb"), doctest::Contains(refused.c_str()), PluginError);
  CHECK(r.scanned_count() == 2);  // scanned each time; this process is still here, so nothing loaded it
}

TEST_CASE("a timeout verdict is judged again under a higher limit, and kept under the same or a lower one") {
  TempDir dir("th_cache");
  ScopedEnv cache("TRAINHOOK_REGISTRY_CACHE", (dir.path / "registry.json").string());
  const fs::path gate = dir.path / "gate";
  ScopedEnv gate_env("TRAINHOOK_TEST_SCAN_GATE", gate.string());
  const fs::path folder = kRoot / "scan_gated";
  auto scan = [&](const char* limit) {
    ScopedEnv env("TRAINHOOK_PLUGIN_SCAN_TIMEOUT", limit);
    return PluginRegistry(only({folder}));
  };
  {
    const auto r = scan("0.3");
    CHECK(r.scanned_count() == 1);
    CHECK_FALSE(r.libraries()[0].loaded);
    CHECK(r.libraries()[0].refused_reason.rfind("did not answer within 0.3 s while loading", 0) == 0);
  }
  write_file(gate, "open");  // from now on the library answers at once
  for (const char* same_or_lower : {"0.3", "0.2"}) {
    const auto r = scan(same_or_lower);
    CHECK(r.scanned_count() == 0);
    CHECK_FALSE(r.libraries()[0].loaded);
  }
  {
    LogCapture log;
    const auto r = scan("30");
    CHECK(r.scanned_count() == 1);
    CHECK(r.libraries()[0].loaded);
    CHECK(
        log.text().find("did not answer within 0.3 s when last scanned; scanning it again under the limit of "
                        "30 s") != std::string::npos);
  }
  for (const char* any : {"30", "0.2"}) {
    const auto r = scan(any);
    CHECK(r.scanned_count() == 0);  // an answer is remembered whatever the limit
    CHECK(r.libraries()[0].loaded);
  }
}

TEST_CASE(
    "a cache path that is a FIFO or a device is ignored with a warning naming it, and scanning goes on") {
  TempDir dir("th_cache");
  const fs::path fifo = dir.path / "registry.fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  ScopedEnv env("TRAINHOOK_REGISTRY_CACHE", fifo.string());
  // Should the registry open the FIFO blocking, a writer that comes and goes
  // unblocks it after a while, so the test fails instead of hanging.
  std::atomic<bool> done{false};
  std::thread unblock([&] {
    if (::testkit::wait_until([&] { return done.load(); }, 30s)) return;
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
  });
  LogCapture log;
  const auto started = std::chrono::steady_clock::now();
  {
    PluginRegistry r(only({kRoot / "good"}));
    CHECK(r.scanned_count() == r.libraries().size());
    CHECK(r.has("c_counter"));
  }
  done = true;
  unblock.join();
  CHECK(std::chrono::steady_clock::now() - started < 30s);
  CHECK(log.text().find("warning registry cache " + fifo.string() +
                        " is a FIFO, not a regular file; ignoring it") != std::string::npos);
  struct stat st {};
  REQUIRE(::stat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));  // not replaced by a saved cache
  CHECK_FALSE(fs::exists(fifo.string() + ".lock"));

  ScopedEnv device("TRAINHOOK_REGISTRY_CACHE", "/dev/null");
  PluginRegistry r(only({kRoot / "good"}));
  CHECK(r.scanned_count() == r.libraries().size());
  CHECK(log.text().find("warning registry cache /dev/null is a character device, not a regular file") !=
        std::string::npos);
}

TEST_CASE(
    "entries written by the previous version (no ctime, no SHA-256) are stale, not damage: scanned again") {
  TempDir dir("th_cache");
  const fs::path cache = dir.path / "registry.json";
  ScopedEnv env("TRAINHOOK_REGISTRY_CACHE", cache.string());
  const fs::path good = kRoot / "good";
  size_t libraries = 0;
  {
    PluginRegistry first(only({good}));
    libraries = first.libraries().size();
  }
  auto doc = nlohmann::json::parse(read_file(cache));
  for (auto& e : doc.at("libraries")) {
    e.erase("ctime_ns");
    e.erase("sha256");
  }
  write_file(cache, doc.dump(1));
  LogCapture log;
  PluginRegistry r(only({good}));
  CHECK(r.scanned_count() == libraries);
  CHECK(log.text().find("damaged") == std::string::npos);
  const auto rewritten = nlohmann::json::parse(read_file(cache));
  for (const auto& e : rewritten.at("libraries")) {
    CHECK(e.contains("ctime_ns"));
    CHECK(e.at("sha256").get<std::string>().size() == 64);
  }
  PluginRegistry again(only({good}));
  CHECK(again.scanned_count() == 0);
}

TEST_CASE(
    "RegistryCache keeps the key, digest and timeout limit of an entry, and any key field differing misses") {
  TempDir dir("th_cache");
  const fs::path file = dir.path / "registry.json";
  const fs::path library = dir.path / "libtrainhook_x.so";
  write_file(library, "not really a library");
  detail::LibraryFileKey key{fs::canonical(library).string(), 10, 20, 30, 40};
  detail::CachedScan scan;
  scan.record.refused_reason = "did not answer within 1 s while loading";
  scan.sha256 = std::string(64, 'a');
  scan.timed_out_under = 1000ms;
  {
    detail::RegistryCache c(file);
    c.store(key, scan);
    c.save();
  }
  const detail::RegistryCache c(file);
  const auto found = c.lookup(key);
  REQUIRE(found);
  CHECK(found->sha256 == scan.sha256);
  CHECK(found->timed_out_under == 1000ms);
  CHECK(found->record.refused_reason == scan.record.refused_reason);
  for (auto change : {&detail::LibraryFileKey::mtime_ns, &detail::LibraryFileKey::ctime_ns}) {
    auto other = key;
    other.*change += 1;
    CHECK_FALSE(c.lookup(other));
  }
  auto other_size = key;
  other_size.size += 1;
  CHECK_FALSE(c.lookup(other_size));
  auto other_inode = key;
  other_inode.inode += 1;
  CHECK_FALSE(c.lookup(other_inode));
}

TEST_CASE("a pinned library renamed over between its check and its load: the checked bytes run in process") {
  const ScannedVariant1 scanned;
  const fs::path& file = scanned.file;
  // The site pins variant 1 only.
  TempDir lock_dir("th_lock");
  const fs::path lock = lock_dir.path / "plugins.lock";
  write_file(lock, sha256_of_file(file) + "  " + kReplaceable + "\n");
  ScopedEnv pin("TRAINHOOK_PLUGIN_LOCK", lock.string());
  PluginRegistry r(only({file.parent_path()}));
  REQUIRE(r.has("replaceable_cb"));
  // What the trainer does: the file is checked (and the isolation decision
  // judged on its digest), then the library is created.
  CHECK(r.library_of("replaceable_cb") == fs::canonical(file));
  CHECK(r.library_sha256("replaceable_cb") == sha256_of_file(file));
  rename_over(2, file);  // unlisted bytes at the path now
  RecordingHost host;
  auto cb = r.create("replaceable_cb", host, "{}");
  CHECK(host.logged("replaceable_cb|2|variant=1"));
  CHECK_FALSE(host.logged("replaceable_cb|2|variant=2"));
  CHECK(r.scanned_count() == 0);
  // The next run judges what the path holds now: not the listed bytes, refused.
  PluginRegistry next(only({file.parent_path()}));
  CHECK(next.libraries()[0].refused_reason.rfind(
            "its SHA-256 differs from the plugin lock file: " + lock.string() + ":1 lists ", 0) == 0);
}

TEST_CASE("the loader loads the descriptor it is given: renamed over after opening, the opened file loads") {
  TempDir dir("th_fd");
  const fs::path file = install_variant_1(dir);
  detail::PluginFile opened(file);
  REQUIRE(opened.is_open());
  rename_over(2, file);
  LibraryRecord rec;
  rec.path = file;
  const auto lib = detail::load_plugin_library(opened, rec);
  REQUIRE(lib);
  CHECK(rec.refused_reason == "");
  CHECK(rec.plugin_version == "1.0.0");
}

TEST_CASE("the loader refuses a file written to in place after it was opened (and hashed)") {
  TempDir dir("th_fd");
  const fs::path file = install_variant_1(dir);
  detail::PluginFile opened(file);
  REQUIRE(opened.is_open());
  {
    std::ofstream out(file, std::ios::binary | std::ios::app);
    out << "appended";
  }
  LibraryRecord rec;
  rec.path = file;
  CHECK_FALSE(detail::load_plugin_library(opened, rec));
  CHECK_FALSE(rec.loaded);
  CHECK(rec.refused_reason.rfind(std::string(detail::kNotTheJudgedFile) + "plugin file " + file.string() +
                                     " was written to while it was checked (size ",
                                 0) == 0);
}

TEST_CASE("a runner loads the descriptor the trainer passed, not the file renamed over the path since") {
  const ScannedVariant1 scanned;
  const fs::path& file = scanned.file;
  PluginRegistry r(only({file.parent_path()}));
  const fs::path checked = r.library_of("replaceable_cb");
  {
    const PluginRegistry::PassedLibrary passed = r.pass_library("replaceable_cb");
    rename_over(2, file);
    // What trainhook-plugin-runner does first (plugin_runner.cpp), here in this process.
    LibraryRecord rec;
    rec.path = checked;
    const auto lib = detail::load_passed_plugin_library(checked, rec);
    REQUIRE(lib);
    CHECK(rec.plugin_version == "1.0.0");
  }
  // Nothing passed (another host): the path is opened, and holds variant 2.
  LibraryRecord rec;
  rec.path = checked;
  const auto lib = detail::load_passed_plugin_library(checked, rec);
  REQUIRE(lib);
  CHECK(rec.plugin_version == "2.0.0");
}
