// One binary for hosts of several minors (TRAINHOOK_ABI_MIN_MINOR, abi.h): a
// plugin built with this SDK that declares minor 1 loads on a host that speaks
// 1.1 (th_host_info.abi_minor 1, a th_host table cut after set_critical) and
// never reads the 1.2 field there; the same source built without the
// declaration is refused by that host, as every plugin of a newer minor is.
// The host here is testkit's, which applies the trainer's own rule
// (core/src/plugin_host/registry/plugin_loader.cpp: a plugin minor above the host's is refused).
#include <doctest/doctest.h>
#include <plugin_driver.hpp>

#include <string>

namespace {

const std::string kDeclared = TRAINHOOK_MIN_MINOR_PLUGIN;  // TRAINHOOK_ABI_MIN_MINOR=1
const std::string kUndeclared = TRAINHOOK_DEFAULT_PLUGIN;  // the SDK's own minor

void run_to_train_end(testkit::Library& lib, testkit::FakeHost& host) {
  testkit::Instance cb(lib.callback("min_minor"), host);
  testkit::Run run;
  cb.fire(TH_EVENT_TRAIN_END, run);
}

}  // namespace

TEST_CASE("a plugin that declares minor 1 loads on a 1.1 host and reads nothing past its table") {
  testkit::Library lib(kDeclared, 1);
  CHECK(lib.info().abi_major == TRAINHOOK_ABI_VERSION_MAJOR);
  CHECK(lib.info().abi_minor == 1);
  testkit::FakeHost host;
  host.play_abi_minor(1);
  host.end_now = 1;  // would change the log line if the plugin read the 1.2 field
  run_to_train_end(lib, host);
  CHECK(host.critical);                  // the 1.1 service was used
  CHECK(host.end_requested_calls == 0);  // the 1.2 one was not touched
  CHECK_MESSAGE(host.logged("host ABI 1.1: no early end"), host.all_logs());
}

TEST_CASE("the same binary uses the 1.2 service on a 1.2 host") {
  testkit::Library lib(kDeclared, 2);
  CHECK(lib.info().abi_minor == 1);
  testkit::FakeHost host;
  host.play_abi_minor(2);
  host.end_now = 1;
  run_to_train_end(lib, host);
  CHECK(host.critical);
  CHECK(host.end_requested_calls == 1);
  CHECK_MESSAGE(host.logged("host ABI 1.2: asked to end now"), host.all_logs());
}

TEST_CASE("a plugin that declares minor 1 is refused by a 1.0 host") {
  CHECK_THROWS_WITH_AS(testkit::Library(kDeclared, 0),
                       doctest::Contains("the plugin was built for ABI 1.1, newer than this host's ABI 1.0"),
                       std::runtime_error);
}

TEST_CASE("a plugin that declares nothing is stamped with the SDK's minor and refused by a 1.1 host") {
  {
    testkit::Library lib(kUndeclared);
    CHECK(lib.info().abi_minor == TRAINHOOK_ABI_VERSION_MINOR);
  }
  const std::string refusal = "the plugin was built for ABI 1." +
                              std::to_string(TRAINHOOK_ABI_VERSION_MINOR) +
                              ", newer than this host's ABI 1.1";
  CHECK_THROWS_WITH_AS(testkit::Library(kUndeclared, 1), doctest::Contains(refusal.c_str()),
                       std::runtime_error);
}
