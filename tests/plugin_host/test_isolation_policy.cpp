// The isolation decision (isolation_policy.hpp): under auto the trainer's own
// folder, a site trusted folder (and its subfolders) and a pinned library run
// in process and anything else is isolated; none keeps everything in process;
// names isolate only themselves, also after auto; the flag wins over the site
// file; none combined with anything is refused; the advice for an untrusted
// plugin names every way to trust it. Paths only: nothing is loaded.
#include <trainhook/common/errors.hpp>
#include <trainhook/common/sha256sum.hpp>
#include <trainhook/plugin_host/selection/isolation_policy.hpp>

#include <doctest/doctest.h>
#include <temp_dir.hpp>

#include <string>

namespace fs = std::filesystem;
using trainhook::IsolationMode;
using trainhook::IsolationPolicy;
using trainhook::PluginTrust;
using trainhook::SiteConfig;
using trainhook::testkit::TempDir;
using trainhook::testkit::write_file;

namespace {

struct Layout {
  TempDir tmp{"th_policy"};
  fs::path own = tmp.path / "lib" / "trainhook" / "plugins";
  fs::path ours = own / "libtrainhook_progress.so";
  fs::path trusted_dir = tmp.path / "site-packs";
  fs::path trusted = trusted_dir / "acme" / "libtrainhook_acme.so";  // a subfolder of a trusted folder
  fs::path stranger = tmp.path / "home" / "libtrainhook_stranger.so";
  fs::path lookalike = tmp.path / "site-packs-evil" / "libtrainhook_evil.so";  // a prefix, not a subfolder
  Layout() {
    for (const auto& f : {ours, trusted, stranger, lookalike}) write_file(f, "bytes");
  }
  SiteConfig site(const std::string& mode = "") const {
    SiteConfig s;
    s.file = tmp.path / "etc" / "site.json";
    s.plugin_isolation = mode;
    s.trusted_plugin_dirs = {trusted_dir};
    return s;
  }
};

}  // namespace

TEST_CASE("auto runs the trainer's own, trusted-folder and pinned plugins in process and isolates the rest") {
  Layout l;
  const IsolationPolicy policy({}, l.site(), l.own, {});
  CHECK(policy.mode() == IsolationMode::automatic);
  CHECK(policy.describe_mode() == "auto (the default)");
  CHECK(policy.trust_of(l.ours) == PluginTrust::own_folder);
  CHECK(policy.trust_of(l.trusted) == PluginTrust::trusted_folder);
  CHECK(policy.trust_of(l.stranger) == PluginTrust::untrusted);
  CHECK(policy.trust_of(l.lookalike) == PluginTrust::untrusted);

  const auto own = policy.decide("progress", l.ours);
  CHECK_FALSE(own.isolated);
  CHECK(own.by_trust);
  CHECK(own.why == "the trainer's own plugin folder");
  const auto trusted = policy.decide("acme", l.trusted);
  CHECK_FALSE(trusted.isolated);
  CHECK(trusted.why == "a trusted folder of site file " + (l.tmp.path / "etc" / "site.json").string());
  const auto stranger = policy.decide("stranger", l.stranger);
  CHECK(stranger.isolated);
  CHECK(stranger.by_trust);
  CHECK(stranger.why.find("not trusted") == 0);

  // With a lock in force, the registry accepted only listed libraries: pinned.
  const IsolationPolicy locked({}, l.site(), l.own, l.tmp.path / "plugins.lock");
  const auto pinned = locked.decide("stranger", l.stranger);
  CHECK_FALSE(pinned.isolated);
  CHECK(pinned.trust == PluginTrust::pinned);
  CHECK(pinned.why == "pinned in " + (l.tmp.path / "plugins.lock").string());
  CHECK(locked.decide("progress", l.ours).trust == PluginTrust::own_folder);  // own before pinned
}

TEST_CASE(
    "the site's lock pins by digest: a listed library runs in process, the unlisted and the changed are "
    "isolated") {
  Layout l;
  const fs::path other = l.tmp.path / "home" / "libtrainhook_other.so";
  write_file(other, "other bytes");
  // sha256sum's format, a path relative to the lock's folder (`trainhook plugins lock` prints such lines).
  const fs::path lock = l.tmp.path / "etc" / "plugins.lock";
  write_file(lock, trainhook::sha256_of_file(l.stranger) + "  ../home/libtrainhook_stranger.so\n");
  SiteConfig site = l.site();
  site.plugin_lock = lock;
  const IsolationPolicy policy({}, site, l.own, {});
  const auto pinned = policy.decide("stranger", l.stranger);
  CHECK_FALSE(pinned.isolated);
  CHECK(pinned.trust == PluginTrust::pinned);
  CHECK(pinned.why == "pinned in " + lock.string());
  const auto unlisted = policy.decide("other", other);
  CHECK(unlisted.isolated);  // not refused: the site's lock only decides trust
  CHECK(unlisted.trust == PluginTrust::untrusted);
  // The same file with other bytes than the pinned ones is no longer trusted.
  write_file(l.stranger, "swapped bytes");
  CHECK(IsolationPolicy({}, site, l.own, {}).decide("stranger", l.stranger).isolated);
  // A lock that cannot be read is an error naming it.
  site.plugin_lock = l.tmp.path / "etc" / "missing.lock";
  CHECK_THROWS_WITH_AS(IsolationPolicy({}, site, l.own, {}),
                       doctest::Contains((l.tmp.path / "etc" / "missing.lock").string().c_str()),
                       trainhook::PluginError);
}

TEST_CASE("none keeps every plugin in process and names only isolate themselves") {
  Layout l;
  const IsolationPolicy none({"none"}, l.site(), l.own, {});
  CHECK(none.mode() == IsolationMode::none);
  CHECK_FALSE(none.decide("stranger", l.stranger).isolated);
  CHECK_FALSE(none.decide("stranger", l.stranger).by_trust);

  const IsolationPolicy named({"progress"}, l.site(), l.own, {});
  CHECK(named.mode() == IsolationMode::named);
  CHECK(named.decide("progress", l.ours).isolated);
  CHECK(named.decide("progress", l.ours).why == "named in --plugin_isolation");
  CHECK(named.decide("progress", l.ours).named);
  CHECK_FALSE(named.decide("stranger", l.stranger).isolated);  // as before auto existed

  const IsolationPolicy auto_named({"auto", "progress"}, l.site(), l.own, {});
  CHECK(auto_named.mode() == IsolationMode::automatic);
  CHECK(auto_named.decide("progress", l.ours).isolated);
  CHECK(auto_named.decide("progress", l.ours).named);
  CHECK(auto_named.decide("stranger", l.stranger).isolated);
  CHECK_FALSE(auto_named.decide("stranger", l.stranger).named);
  CHECK_FALSE(auto_named.decide("acme", l.trusted).isolated);
}

TEST_CASE("the flag wins over the site file's mode, which wins over the default") {
  Layout l;
  const IsolationPolicy site_none({}, l.site("none"), l.own, {});
  CHECK(site_none.mode() == IsolationMode::none);
  CHECK(site_none.describe_mode() == "none (site file " + (l.tmp.path / "etc" / "site.json").string() + ")");
  CHECK_FALSE(site_none.decide("stranger", l.stranger).isolated);

  const IsolationPolicy flag_auto({"auto"}, l.site("none"), l.own, {});
  CHECK(flag_auto.describe_mode() == "auto (--plugin_isolation)");
  CHECK(flag_auto.decide("stranger", l.stranger).isolated);

  CHECK_THROWS_WITH_AS(IsolationPolicy({"none", "progress"}, l.site(), l.own, {}),
                       doctest::Contains("'none' (every plugin in process) cannot be combined"),
                       trainhook::ArgumentError);
  CHECK_THROWS_AS(IsolationPolicy({"auto", "none"}, l.site(), l.own, {}), trainhook::ArgumentError);
}

TEST_CASE("the advice for an untrusted plugin names every way to trust it") {
  Layout l;
  const IsolationPolicy policy({}, l.site(), l.own, {});
  const std::string how = policy.how_to_trust("stranger", l.stranger);
  CHECK_MESSAGE(
      how.find("add " + l.stranger.parent_path().string() + " to trusted_plugin_dirs in the site file " +
               (l.tmp.path / "etc" / "site.json").string()) != std::string::npos,
      how);
  CHECK(how.find("trainhook plugins lock " + l.stranger.string()) != std::string::npos);
  CHECK(how.find("TRAINHOOK_PLUGIN_LOCK") != std::string::npos);
  CHECK(how.find("--plugin_config stranger.isolation=in_process") != std::string::npos);
  CHECK(how.find("--plugin_isolation none") != std::string::npos);
}
