// resolve_callbacks: report_to, callbacks and the progress default become one
// ordered list with each rule in one place; the Python bridge gives the same
// answers and errors (test_bridge_api.cpp covers its JSON).
#include <trainhook/plugin_host/host/bridge_api.h>
#include <trainhook/common/errors.hpp>
#include <trainhook/plugin_host/registry/plugin_registry.hpp>
#include <trainhook/plugin_host/selection/callback_resolver.hpp>

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

using namespace trainhook;
namespace fs = std::filesystem;
using names = std::vector<std::string>;

namespace {

const fs::path kRoot = TRAINHOOK_TEST_PLUGIN_ROOT;

// The test plugins of tests/sdk: c_counter and pack_reporter are
// integrations, pack_recorder a callback.
PluginRegistry good_registry() {
  ::setenv("TRAINHOOK_REGISTRY_CACHE", "off", 1);
  PluginSearchOptions o;
  o.plugin_dirs = {kRoot / "good"};
  o.use_environment = false;
  o.default_dir = kRoot / "no_default_here";
  return PluginRegistry(o);
}

std::string bridge_error(const std::string& request) {
  char out[4096] = {};
  char err[2048] = {};
  size_t needed = 0;
  if (trainhook_bridge_resolve(request.c_str(), out, sizeof out, &needed, err, sizeof err) == TH_OK)
    return "";
  return err;
}

}  // namespace

TEST_CASE("report_to, callbacks and progress resolve in HF's order, each name once, with HF's warning") {
  const PluginRegistry registry = good_registry();
  names warnings;
  const auto warn = [&](const std::string& w) { warnings.push_back(w); };
  const CallbackSelection s = resolve_callbacks(
      registry,
      CallbackRequest{{"pack_reporter"}, {"pack_reporter", "pack_recorder", "pack_recorder"}, false}, warn);
  CHECK(s.integrations == names{"pack_reporter"});
  CHECK(s.callbacks == names{"pack_recorder"});
  CHECK(s.progress == "progress");
  CHECK(s.enabled() == names{"pack_reporter", "pack_recorder", "progress"});
  REQUIRE(warnings.size() == 2);
  CHECK(warnings[0] ==
        "callback 'pack_reporter' is in both report_to and callbacks: it runs once, as the report_to "
        "integration (world process zero only)");
  CHECK(warnings[1] == "callback 'pack_recorder' is named twice in callbacks: it runs once");
  CHECK(resolve_callbacks(registry, CallbackRequest{{}, {}, true}, warn).enabled() == names{"printer"});
  CHECK(resolve_callbacks(registry, CallbackRequest{{"all"}, {}, false}, warn).integrations ==
        names{"c_counter", "pack_reporter"});
}

TEST_CASE("every list rule refuses with the list and the name at fault") {
  const PluginRegistry registry = good_registry();
  const auto resolve = [&](names report_to, names callbacks) {
    resolve_callbacks(registry, CallbackRequest{std::move(report_to), std::move(callbacks), false}, nullptr);
  };
  CHECK_THROWS_WITH_AS(resolve({"all", "pack_reporter"}, {}),
                       "report_to: 'all' cannot be combined with other names, got 'all, pack_reporter'",
                       PluginError);
  CHECK_THROWS_WITH_AS(resolve({"none", "pack_reporter"}, {}),
                       "report_to: 'none' cannot be combined with other names, got 'none, pack_reporter'",
                       PluginError);
  CHECK_THROWS_WITH_AS(resolve({"pack_recorder"}, {}), doctest::Contains("is a callback, not an integration"),
                       PluginError);
  CHECK_THROWS_WITH_AS(resolve({}, {"pack_recordr"}), doctest::Contains("callbacks: unknown callback"),
                       PluginError);
}

TEST_CASE("the Python bridge refuses and accepts what the trainer does") {
  const std::string dir = (kRoot / "good").string();
  const auto req = [&](const std::string& callbacks, const std::string& report_to) {
    return R"({"plugin_dirs": [")" + dir + R"("], "callbacks": [)" + callbacks + R"(], "report_to": [)" +
           report_to + "]}";
  };
  CHECK(bridge_error(req("", R"("all", "pack_reporter")")) ==
        "report_to: 'all' cannot be combined with other names, got 'all, pack_reporter'");
  char out[4096] = {};
  char err[2048] = {};
  size_t needed = 0;
  const std::string both = req(R"("pack_reporter")", R"("pack_reporter")");
  REQUIRE(trainhook_bridge_resolve(both.c_str(), out, sizeof out, &needed, err, sizeof err) == TH_OK);
  const std::string answer = out;
  CHECK(answer.find(R"("name":"pack_reporter")") == answer.rfind(R"("name":"pack_reporter")"));
  CHECK(answer.find("is in both report_to and callbacks") != std::string::npos);
}
