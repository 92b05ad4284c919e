// The site file (site_config.hpp): the three keys read and their paths
// resolved against the file's folder; every bad file refused naming the file,
// the key and what was expected; TRAINHOOK_SITE_CONFIG naming a missing file
// refused, an absent default file meaning no settings; a site file others
// could change refused naming the file, the bit and the fix.
#include <trainhook/common/errors.hpp>
#include <trainhook/plugin_host/selection/site_config.hpp>

#include <doctest/doctest.h>
#include <temp_dir.hpp>

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

namespace fs = std::filesystem;
using trainhook::ArgumentError;
using trainhook::read_site_config;
using trainhook::SiteConfig;
using trainhook::testkit::TempDir;
using trainhook::testkit::write_file;

namespace {

// The message read_site_config throws for `text`, "" when it accepts it.
std::string refusal(const std::string& text) {
  TempDir tmp("th_site");
  const fs::path file = tmp.path / "site.json";
  write_file(file, text);
  try {
    read_site_config(file);
  } catch (const ArgumentError& e) {
    const std::string what = e.what();
    CHECK_MESSAGE(what.find(file.string()) != std::string::npos, what);
    return what;
  }
  return "";
}

struct SiteEnv {
  explicit SiteEnv(const std::string& value) { ::setenv(trainhook::kSiteConfigEnv, value.c_str(), 1); }
  ~SiteEnv() { ::unsetenv(trainhook::kSiteConfigEnv); }
};

}  // namespace

TEST_CASE("the site file's keys are read and its relative paths are its own folder's") {
  TempDir tmp("th_site");
  const fs::path file = tmp.path / "etc" / "site.json";
  write_file(file, R"({"plugin_isolation": "none", "trusted_plugin_dirs": ["packs", "/opt/acme/plugins/"],
                       "plugin_lock": "../locks/plugins.lock"})");
  const SiteConfig site = read_site_config(file);
  CHECK(site.file == file);
  CHECK(site.plugin_isolation == "none");
  REQUIRE(site.trusted_plugin_dirs.size() == 2);
  CHECK(site.trusted_plugin_dirs[0] == tmp.path / "etc" / "packs");
  CHECK(site.trusted_plugin_dirs[1] == fs::path("/opt/acme/plugins/"));
  CHECK(site.plugin_lock == tmp.path / "locks" / "plugins.lock");

  const SiteConfig empty = read_site_config((write_file(file, "{}"), file));
  CHECK(empty.plugin_isolation.empty());
  CHECK(empty.trusted_plugin_dirs.empty());
  CHECK(empty.plugin_lock.empty());
}

TEST_CASE("a bad site file is refused naming the file, the key and what was expected") {
  CHECK(refusal(R"({"plugin_isolation": "auto"})") == "");
  CHECK(refusal("{not json").find("not valid JSON") != std::string::npos);
  // A number past double's range is the JSON reader's out_of_range, not a parse error.
  CHECK(refusal("{\"plugin_isolation\": 1" + std::string(400, '0') + "}").find("not valid JSON") !=
        std::string::npos);
  CHECK(refusal("[1, 2]").find("expected a JSON object") != std::string::npos);
  const std::string unknown = refusal(R"({"trusted_dirs": []})");
  CHECK_MESSAGE(unknown.find("unknown key 'trusted_dirs' (expected plugin_isolation, trusted_plugin_dirs, "
                             "plugin_lock)") != std::string::npos,
                unknown);
  const std::string mode = refusal(R"({"plugin_isolation": "process"})");
  CHECK_MESSAGE(mode.find("key 'plugin_isolation': expected \"auto\" or \"none\", got \"process\"") !=
                    std::string::npos,
                mode);
  CHECK(refusal(R"({"plugin_isolation": true})").find("key 'plugin_isolation'") != std::string::npos);
  CHECK(refusal(R"({"trusted_plugin_dirs": "packs"})")
            .find("key 'trusted_plugin_dirs': expected an array of folder paths") != std::string::npos);
  CHECK(refusal(R"({"trusted_plugin_dirs": ["packs", 3]})")
            .find("key 'trusted_plugin_dirs': expected a non-empty path string, got 3") != std::string::npos);
  CHECK(refusal(R"({"plugin_lock": ""})").find("key 'plugin_lock': expected a non-empty path string") !=
        std::string::npos);
}

TEST_CASE("an unreadable site file is refused naming it") {
  TempDir tmp("th_site");
  CHECK_THROWS_WITH_AS(read_site_config(tmp.path / "missing.json"),
                       doctest::Contains(((tmp.path / "missing.json").string() + ": cannot be read").c_str()),
                       ArgumentError);
  CHECK_THROWS_WITH_AS(read_site_config(tmp.path), doctest::Contains("cannot be read"), ArgumentError);
}

TEST_CASE("TRAINHOOK_SITE_CONFIG names the file, which must exist") {
  TempDir tmp("th_site");
  const fs::path file = tmp.path / "site.json";
  write_file(file, R"({"plugin_isolation": "none"})");
  {
    SiteEnv env(file.string());
    CHECK(trainhook::load_site_config().plugin_isolation == "none");
  }
  {
    SiteEnv env((tmp.path / "nope.json").string());
    CHECK_THROWS_WITH_AS(
        trainhook::load_site_config(),
        doctest::Contains(("TRAINHOOK_SITE_CONFIG=" + (tmp.path / "nope.json").string()).c_str()),
        ArgumentError);
  }
  // Unset: the default path next to the test executable's prefix, absent here.
  ::unsetenv(trainhook::kSiteConfigEnv);
  CHECK(trainhook::default_site_config_path().filename() == "site.json");
  CHECK(trainhook::default_site_config_path().parent_path().filename() == "trainhook");
  CHECK(trainhook::load_site_config().file.empty());
}

TEST_CASE("a site file others could change is refused, naming the file, the bit and the fix") {
  TempDir tmp("th_site");
  const fs::path file = tmp.path / "site.json";
  write_file(file, R"({"plugin_isolation": "none"})");
  ::chmod(file.c_str(), 0646);
  CHECK_THROWS_WITH_AS(
      read_site_config(file),
      ("site file " + file.string() + ": refused: file " + file.string() +
       " is world-writable (mode 0646); anyone could change it (`chmod go-w " + file.string() +
       "`); whoever can change it decides which plugins run in the trainer's process")
          .c_str(),
      ArgumentError);
  ::chmod(file.c_str(), 0664);
  CHECK_THROWS_WITH_AS(read_site_config(file),
                       doctest::Contains(("(`chmod g-w " + file.string() + "`)").c_str()), ArgumentError);
  ::chmod(file.c_str(), 0644);
  CHECK(read_site_config(file).plugin_isolation == "none");
  if (::geteuid() == 0) {
    REQUIRE(::chown(file.c_str(), 65534, 65534) == 0);
    CHECK_THROWS_WITH_AS(read_site_config(file), doctest::Contains("(uid 65534), not by you ("),
                         ArgumentError);
    REQUIRE(::chown(file.c_str(), 0, 0) == 0);
  } else {
    MESSAGE("not root: the foreign-owner case is not arranged");
  }
  // A folder above it that others may write (not sticky): they could put another file in its place.
  const fs::path etc = tmp.path / "etc";
  fs::create_directories(etc);
  write_file(etc / "site.json", "{}");
  ::chmod(etc.c_str(), 0777);
  CHECK_THROWS_WITH_AS(read_site_config(etc / "site.json"),
                       doctest::Contains(("folder " + etc.string() + ", above " +
                                          (etc / "site.json").string() + ", is world-writable (mode 0777)")
                                             .c_str()),
                       ArgumentError);
  ::chmod(etc.c_str(), 0755);
}
