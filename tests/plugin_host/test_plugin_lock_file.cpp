// The plugin lock (TRAINHOOK_PLUGIN_LOCK, plugin_lock_file.hpp) with the
// trainer's own digests: a site's lock lists only third-party libraries, the
// trainer's plugins in its own folder are checked against
// trainhook-plugins.sha256 there, a changed one of ours is refused naming that
// file, a library listed by name is allowed in any folder, and where the site
// names a library its line decides. plugin_lock_entries gives the lines
// `trainhook plugins lock` prints. A lock file others could change is refused
// (the rule plugin paths follow). Files here are plain bytes: only names and
// digests matter, nothing is loaded.
#include "registry/plugin_lock_file.hpp"

#include <trainhook/common/errors.hpp>
#include <trainhook/common/sha256sum.hpp>
#include <trainhook/plugin_host/registry/plugin_lock.hpp>

#include <doctest/doctest.h>
#include <temp_dir.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <string>

namespace fs = std::filesystem;
using trainhook::detail::PluginLockFile;
using trainhook::testkit::TempDir;
using trainhook::testkit::write_file;

namespace {

struct Site {
  TempDir tmp{"th_lock"};
  fs::path own = tmp.path / "trainer" / "plugins";  // the trainer's own folder
  fs::path pack = tmp.path / "acme";                // a third-party pack's folder
  fs::path lock = tmp.path / "plugins.lock";
  Site() {
    fs::create_directories(own);
    fs::create_directories(pack);
    write_file(own / "libtrainhook_progress.so", "progress v1");
    write_file(own / "libtrainhook_mlflow.so", "mlflow v1");
    write_file(pack / "libtrainhook_acme.so", "acme v1");
    write_file(own / trainhook::kTrainerPluginDigests,
               "# comment\n" + line(own / "libtrainhook_progress.so") + line(own / "libtrainhook_mlflow.so"));
  }
  static std::string line(const fs::path& f) {
    return trainhook::sha256_of_file(f) + "  " + f.filename().string() + "\n";
  }
};

}  // namespace

TEST_CASE("a site's lock lists the pack only: ours are checked against their installed digests") {
  Site s;
  write_file(s.lock, Site::line(s.pack / "libtrainhook_acme.so"));  // by name, as `plugins lock` prints
  const PluginLockFile lock(s.lock, s.own);
  CHECK(lock.refusal(s.pack / "libtrainhook_acme.so") == "");
  CHECK(lock.refusal(s.own / "libtrainhook_progress.so") == "");
  CHECK(lock.refusal(s.own / "libtrainhook_mlflow.so") == "");

  // One of ours changed: refused, naming the trainer's digests file and line.
  write_file(s.own / "libtrainhook_mlflow.so", "mlflow tampered");
  const std::string why = lock.refusal(s.own / "libtrainhook_mlflow.so");
  CHECK_MESSAGE(why.find("its SHA-256 differs from the trainer's own plugin digests: " +
                         (s.own / trainhook::kTrainerPluginDigests).string() + ":3 lists ") == 0,
                why);
  CHECK(why.find(trainhook::sha256_of_file(s.own / "libtrainhook_mlflow.so")) != std::string::npos);
  // The others are untouched by it.
  CHECK(lock.refusal(s.own / "libtrainhook_progress.so") == "");
}

TEST_CASE("a library neither the lock nor the trainer lists is refused with the line that would allow it") {
  Site s;
  write_file(s.lock, "");
  write_file(s.own / "libtrainhook_dropped.so", "dropped in the trainer's folder");
  const PluginLockFile lock(s.lock, s.own);
  const std::string pack = lock.refusal(s.pack / "libtrainhook_acme.so");
  CHECK_MESSAGE(
      pack.find("not listed in the plugin lock file " + s.lock.string() + " (TRAINHOOK_PLUGIN_LOCK)") == 0,
      pack);
  CHECK(pack.find("add the line '" + Site::line(s.pack / "libtrainhook_acme.so").substr(0, 64) +
                  "  libtrainhook_acme.so'") != std::string::npos);
  const std::string dropped = lock.refusal(s.own / "libtrainhook_dropped.so");
  CHECK_MESSAGE(dropped.find("the trainer's own plugin digests do not list it") != std::string::npos,
                dropped);
  // Ours are still allowed.
  CHECK(lock.refusal(s.own / "libtrainhook_progress.so") == "");
}

TEST_CASE("the trainer's digests count only in its own folder, and only when they exist") {
  Site s;
  write_file(s.lock, "");
  // A copy of one of ours elsewhere (a --plugin_dir) is not the trainer's.
  fs::copy_file(s.own / "libtrainhook_progress.so", s.pack / "libtrainhook_progress.so");
  const PluginLockFile lock(s.lock, s.own);
  CHECK(lock.refusal(s.pack / "libtrainhook_progress.so").find("not listed") == 0);
  // Without digests next to them, ours are refused with the reason.
  fs::remove(s.own / trainhook::kTrainerPluginDigests);
  const PluginLockFile missing(s.lock, s.own);
  const std::string why = missing.refusal(s.own / "libtrainhook_progress.so");
  CHECK_MESSAGE(
      why.find("the trainer's own plugin digests " + (s.own / trainhook::kTrainerPluginDigests).string() +
               " are missing") != std::string::npos,
      why);
  // No own folder given (an older caller): nothing counts as the trainer's.
  write_file(s.own / trainhook::kTrainerPluginDigests, Site::line(s.own / "libtrainhook_progress.so"));
  CHECK(PluginLockFile(s.lock, {}).refusal(s.own / "libtrainhook_progress.so").find("not listed") == 0);
}

TEST_CASE("where the site's lock names a library, its line decides, by path or by name") {
  Site s;
  const std::string acme = Site::line(s.pack / "libtrainhook_acme.so").substr(0, 64);
  const std::string other(64, 'a');
  // Two lines for the name: either digest is allowed (two versions of a pack).
  write_file(s.lock, other + "  libtrainhook_acme.so\n" + acme + "  libtrainhook_acme.so\n" + other +
                         "  libtrainhook_progress.so\n" + acme + "  acme/libtrainhook_acme.so\n");
  const PluginLockFile lock(s.lock, s.own);
  CHECK(lock.refusal(s.pack / "libtrainhook_acme.so") == "");
  // The site pins one of ours to other bytes: refused, although our digests match.
  const std::string why = lock.refusal(s.own / "libtrainhook_progress.so");
  CHECK_MESSAGE(why.find("its SHA-256 differs from the plugin lock file: " + s.lock.string() + ":3 lists " +
                         other) == 0,
                why);
  // A path relative to the lock's folder decides for that file over the name lines.
  write_file(s.lock, other + "  acme/libtrainhook_acme.so\n" + acme + "  libtrainhook_acme.so\n");
  CHECK(PluginLockFile(s.lock, s.own).refusal(s.pack / "libtrainhook_acme.so").find(s.lock.string() + ":1") !=
        std::string::npos);
}

TEST_CASE("plugin_lock_entries: lines by name for given files and folders, the trainer's own marked") {
  Site s;
  trainhook::PluginSearchOptions options;
  options.use_environment = false;
  options.default_dir = s.own;
  options.plugin_dirs = {s.pack};
  const auto all = trainhook::plugin_lock_entries({}, options);
  REQUIRE(all.size() == 3);
  CHECK(all[0].line + "\n" == Site::line(s.pack / "libtrainhook_acme.so"));
  CHECK_FALSE(all[0].trainers_own);
  CHECK(all[1].trainers_own);
  CHECK(all[2].trainers_own);
  const auto given = trainhook::plugin_lock_entries({s.pack / "libtrainhook_acme.so"}, options);
  REQUIRE(given.size() == 1);
  CHECK(given[0].line + "\n" == Site::line(s.pack / "libtrainhook_acme.so"));
  write_file(s.pack / "notes.txt", "x");
  CHECK_THROWS_WITH_AS(trainhook::plugin_lock_entries({s.pack / "notes.txt"}, options),
                       doctest::Contains("not a plugin library's name"), trainhook::PluginError);
  CHECK_THROWS_WITH_AS(trainhook::plugin_lock_entries({s.pack / "missing.so"}, options),
                       doctest::Contains("no such file or folder"), trainhook::PluginError);
}

TEST_CASE("a lock file others could change is refused naming the file, the bit and the fix") {
  Site s;
  write_file(s.lock, Site::line(s.pack / "libtrainhook_acme.so"));
  ::chmod(s.lock.c_str(), 0666);
  CHECK_THROWS_WITH_AS(PluginLockFile(s.lock, s.own),
                       ("plugin lock file " + s.lock.string() + " is refused: file " + s.lock.string() +
                        " is world-writable (mode 0666); anyone could change it (`chmod go-w " +
                        s.lock.string() + "`); whoever can change it decides which plugins run")
                           .c_str(),
                       trainhook::PluginError);
  ::chmod(s.lock.c_str(), 0620);
  CHECK_THROWS_WITH_AS(
      PluginLockFile(s.lock, s.own),
      doctest::Contains(("is group-writable (mode 0620); anyone in its group could change it "
                         "(`chmod g-w " +
                         s.lock.string() + "`)")
                            .c_str()),
      trainhook::PluginError);
  // --allow_unsafe_plugin_paths lets it be used anyway.
  CHECK(PluginLockFile(s.lock, s.own, true).refusal(s.pack / "libtrainhook_acme.so") == "");
  ::chmod(s.lock.c_str(), 0644);
  CHECK(PluginLockFile(s.lock, s.own).refusal(s.pack / "libtrainhook_acme.so") == "");
  // Owned by another user (root can arrange it; this suite runs as root in CI).
  if (::geteuid() == 0) {
    REQUIRE(::chown(s.lock.c_str(), 65534, 65534) == 0);
    CHECK_THROWS_WITH_AS(PluginLockFile(s.lock, s.own),
                         doctest::Contains(("file " + s.lock.string() + " is owned by ").c_str()),
                         trainhook::PluginError);
    CHECK_THROWS_WITH_AS(PluginLockFile(s.lock, s.own), doctest::Contains("(uid 65534), not by you ("),
                         trainhook::PluginError);
  } else {
    MESSAGE("not root: the foreign-owner case is not arranged");
  }
  // A folder above it that its group may write: anyone there could put another lock in its place.
  ::chown(s.lock.c_str(), ::geteuid(), ::getegid());
  ::chmod(s.tmp.path.c_str(), 0770);
  CHECK_THROWS_WITH_AS(PluginLockFile(s.lock, s.own),
                       doctest::Contains(("folder " + s.tmp.path.string() + ", above " + s.lock.string() +
                                          ", is group-writable (mode 0770)")
                                             .c_str()),
                       trainhook::PluginError);
  ::chmod(s.tmp.path.c_str(), 0700);
}
