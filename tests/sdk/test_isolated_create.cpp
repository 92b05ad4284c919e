// A callback told at creation that it runs isolated (th_host.isolated, ABI
// 1.4) refuses there with its own message; in process it gets the tensor views
// and adds its metrics; on a host older than 1.4 (which does not say) the C++
// layer answers "not isolated" without reading past the host's table. Driven
// on the test host (testkit), with the tensor_reader test plugin.
#include <doctest/doctest.h>
#include <plugin_driver.hpp>
#include <trainhook/plugin.hpp>

#include <string>
#include <vector>

namespace {

const std::string kPlugin = TRAINHOOK_TENSOR_READER_PLUGIN;            // the SDK's own minor
const std::string kPluginMinor1 = TRAINHOOK_TENSOR_READER_1_1_PLUGIN;  // TRAINHOOK_ABI_MIN_MINOR=1

// One float32 CPU parameter of `n` elements, owned by the test.
struct Param {
  std::vector<float> data;
  int64_t shape[1];
  DLTensor view{};
  explicit Param(int64_t n) : data(static_cast<size_t>(n), 1.0f), shape{n} {
    view.data = data.data();
    view.device = {kDLCPU, 0};
    view.ndim = 1;
    view.dtype = {kDLFloat, 32, 1};
    view.shape = shape;
  }
};

}  // namespace

TEST_CASE("an isolated host: the callback refuses in create() with its own message") {
  testkit::Library lib(kPlugin);
  testkit::FakeHost host;
  host.isolated = true;
  const testkit::CallError e = testkit::create_error(lib.callback("tensor_reader"), host, "{}");
  CHECK(e.status == TH_INVALID_ARGUMENT);
  CHECK_MESSAGE(std::string(e.what()).find("tensor_reader reads the model's tensors, which an isolated "
                                           "callback is not given") != std::string::npos,
                e.what());
}

TEST_CASE("in process: created, reads the views, adds its metrics") {
  testkit::Library lib(kPlugin);
  testkit::FakeHost host;
  Param a(6), b(4);
  host.parameters = {{"layer.weight", a.view}, {"layer.bias", b.view}};
  testkit::Instance cb(lib.callback("tensor_reader"), host);
  testkit::Run run;
  run.state.global_step = 1;
  cb.fire(TH_EVENT_STEP_END, run);
  CHECK(host.last_metric("tensor_reader/tensors") == 2.0);
  CHECK(host.last_metric("tensor_reader/elements") == 10.0);
}

TEST_CASE("the test host refuses tensors when it plays an isolated host, as the trainer's helper does") {
  // The plugin built for 1.1 never reads th_host.isolated: created, then its
  // first tensors() call is refused, which is what a 1.3 trainer did to it.
  testkit::Library lib(kPluginMinor1);
  CHECK(lib.info().abi_minor == 1);
  testkit::FakeHost host;
  host.play_abi_minor(3);  // a 1.3 trainer: no isolated field in the table
  host.isolated = true;    // filled past the cut, never read
  testkit::Instance cb(lib.callback("tensor_reader"), host);
  testkit::Run run;
  try {
    cb.fire(TH_EVENT_STEP_END, run);
    FAIL("tensors() was not refused");
  } catch (const testkit::CallError& err) {
    CHECK(std::string(err.what()).find("runs in its own process (plugin_isolation)") != std::string::npos);
  }
}

TEST_CASE("ABI 1.4 adds th_host.isolated at the end of the table") {
  CHECK(TRAINHOOK_ABI_VERSION_MINOR >= 4);
  CHECK(TH_HOST_STRUCT_SIZE >= TH_STRUCT_SIZE(th_host, isolated));
  th_host old{};
  old.struct_size = static_cast<uint32_t>(TH_STRUCT_SIZE(th_host, stop_signal));  // what a 1.3 host fills
  CHECK_FALSE(TH_HAS_FIELD(&old, th_host, isolated));
  const trainhook::Host h(&old);
  CHECK_FALSE(h.knows_isolation());
  CHECK_FALSE(h.isolated());
}
