// examples/c_plugin/loss_guard.c, the plain-C example of docs/plugins.md, built
// as a plugin and driven through the C ABI as any host would.
#include <doctest/doctest.h>
#include <plugin_driver.hpp>

#include <cmath>
#include <limits>
#include <string>

namespace {

const std::string kLibrary = TRAINHOOK_C_EXAMPLE_PLUGIN;

}  // namespace

TEST_CASE("the C example stops training on a loss that is not finite or above max_loss") {
  testkit::Library lib(kLibrary);
  CHECK(std::string(lib.info().name) == "loss_guard");
  const th_callback_info& info = lib.callback("loss_guard");
  CHECK(info.kind == TH_KIND_CALLBACK);

  testkit::FakeHost host;
  testkit::Instance cb(info, host, R"({"max_loss": "5"})");
  testkit::Run run;
  run.state.global_step = 10;
  testkit::Values fine{{"loss", 4.5}, {"learning_rate", 100.0}};
  cb.fire(TH_EVENT_LOG, run, fine.view());
  CHECK(run.control.should_training_stop == 0);

  run.state.global_step = 20;
  testkit::Values high{{"loss", 7.0}};
  cb.fire(TH_EVENT_LOG, run, high.view());
  CHECK(run.control.should_training_stop == 1);
  CHECK(host.has(TH_LOG_WARN, "loss 7 at step 20 is above max_loss; stopping training"));

  testkit::Run run2;
  testkit::Values nan{{"loss", std::numeric_limits<double>::quiet_NaN()}};
  cb.fire(TH_EVENT_LOG, run2, nan.view());
  CHECK(run2.control.should_training_stop == 1);
  CHECK(host.logged("is not finite"));
}

TEST_CASE("the C example refuses a bad max_loss with a message naming the key") {
  testkit::Library lib(kLibrary);
  testkit::FakeHost host;
  const auto e = testkit::create_error(lib.callback("loss_guard"), host, R"({"max_loss": "lots"})");
  CHECK(e.status == TH_INVALID_ARGUMENT);
  CHECK(std::string(e.what()).find(
            R"(plugin_config loss_guard.max_loss: expected a number > 0, got "lots")") != std::string::npos);
  // Numbers as text are parsed strictly: no trailing junk, no blanks.
  for (const char* bad : {R"({"max_loss": "5x"})", R"({"max_loss": " 5"})", R"({"max_loss": -1})"}) {
    const auto b = testkit::create_error(lib.callback("loss_guard"), host, bad);
    CHECK(b.status == TH_INVALID_ARGUMENT);
    CHECK(std::string(b.what()).find("plugin_config loss_guard.max_loss: expected a number > 0") !=
          std::string::npos);
  }
}

TEST_CASE("the C example reads its keys with the SDK's C reader: a key inside a value is not the key") {
  testkit::Library lib(kLibrary);
  testkit::FakeHost host;
  // The old scanner found "max_loss" inside this string value and read 1 from it.
  const auto e = testkit::create_error(lib.callback("loss_guard"), host, R"({"note": "\"max_loss\": 1"})");
  CHECK(e.status == TH_INVALID_ARGUMENT);
  CHECK(std::string(e.what()).find("plugin_config loss_guard: unknown key 'note'; keys: max_loss") !=
        std::string::npos);
  const auto j = testkit::create_error(lib.callback("loss_guard"), host, R"({"max_loss": 5,})");
  CHECK(j.status == TH_INVALID_ARGUMENT);
  CHECK(std::string(j.what()).find(
            "plugin_config loss_guard: not a valid JSON object: expected a key in double "
            "quotes at offset 15") != std::string::npos);
  // Escapes in the key decode before the comparison.
  testkit::Instance cb(lib.callback("loss_guard"), host, R"({"max\u005floss": "2"})");
  testkit::Run run;
  testkit::Values high{{"loss", 3.0}};
  cb.fire(TH_EVENT_LOG, run, high.view());
  CHECK(run.control.should_training_stop == 1);
}

TEST_CASE("the C example reads max_loss as the JSON number --plugin_config loss_guard.max_loss=5 gives") {
  testkit::Library lib(kLibrary);
  testkit::FakeHost host;
  testkit::Instance cb(lib.callback("loss_guard"), host, R"({"max_loss": 5})");
  testkit::Run run;
  testkit::Values high{{"loss", 6.0}};
  cb.fire(TH_EVENT_LOG, run, high.view());
  CHECK(run.control.should_training_stop == 1);
}

TEST_CASE("the C example declares ABI 1.0 as enough and loads on a 1.0 host") {
  testkit::Library lib(kLibrary, 0);
  CHECK(lib.info().abi_minor == 0);
  testkit::FakeHost host;
  host.play_abi_minor(0);
  testkit::Instance cb(lib.callback("loss_guard"), host, "{}");
  testkit::Run run;
  testkit::Values nan{{"loss", std::numeric_limits<double>::quiet_NaN()}};
  cb.fire(TH_EVENT_LOG, run, nan.view());
  CHECK(run.control.should_training_stop == 1);
}
