// bridge_api.h, the C functions foreign hosts (python/trainhook) call: the
// registry's resolution and messages, loading with its refusals, the tensor-view
// rules and the constants the Python mirror of abi.h is checked against.
#include <trainhook/plugin_host/host/bridge_api.h>

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace fs = std::filesystem;

namespace {

const fs::path kRoot = TRAINHOOK_TEST_PLUGIN_ROOT;

// No registry cache: every case scans for real.
struct NoCache {
  NoCache() { ::setenv("TRAINHOOK_REGISTRY_CACHE", "off", 1); }
  ~NoCache() { ::unsetenv("TRAINHOOK_REGISTRY_CACHE"); }
};

std::string request(const std::string& dir, const std::string& callbacks, const std::string& report_to) {
  return R"({"plugin_dirs": [")" + dir + R"("], "callbacks": [)" + callbacks + R"(], "report_to": [)" +
         report_to + "]}";
}

}  // namespace

TEST_CASE("bridge_api reports the ABI and the struct sizes of abi.h") {
  CHECK(trainhook_bridge_abi_version() == ((1u << 16) | TRAINHOOK_ABI_VERSION_MINOR));
  uint32_t sizes[16] = {};
  REQUIRE(trainhook_bridge_struct_sizes(nullptr, 0) == 10);
  REQUIRE(trainhook_bridge_struct_sizes(sizes, 16) == 10);
  CHECK(sizes[0] == TH_STATE_STRUCT_SIZE);
  CHECK(sizes[5] == TH_EVENT_ARGS_STRUCT_SIZE);
  CHECK(sizes[7] == TH_HOST_STRUCT_SIZE);
  CHECK(sizes[9] == TH_CALLBACK_INFO_STRUCT_SIZE);
  CHECK(std::string(trainhook_bridge_event_name(TH_EVENT_LOG)) == "on_log");
  CHECK(std::string(trainhook_bridge_event_name(TH_EVENT_INIT_END)) == "on_init_end");
  CHECK(trainhook_bridge_event_name(TH_EVENT_COUNT) == nullptr);
  CHECK(trainhook_bridge_event_name(-1) == nullptr);
}

TEST_CASE("bridge_api resolves callbacks and report_to through the registry") {
  NoCache no_cache;
  const std::string req = request((kRoot / "good").string(), R"("c_counter")", R"("pack_reporter")");
  char err[1024] = {};
  size_t needed = 0;
  char tiny[8] = {};
  REQUIRE(trainhook_bridge_resolve(req.c_str(), tiny, sizeof tiny, &needed, err, sizeof err) ==
          TH_BUFFER_TOO_SMALL);
  REQUIRE(needed > sizeof tiny);
  std::string out(needed, '\0');
  REQUIRE(trainhook_bridge_resolve(req.c_str(), out.data(), out.size(), &needed, err, sizeof err) == TH_OK);
  CHECK(out.find(R"("name":"c_counter")") != std::string::npos);
  CHECK(out.find(R"("name":"pack_reporter")") != std::string::npos);
  CHECK(out.find((kRoot / "good" / "libtrainhook_c_plugin.so").string()) != std::string::npos);
  CHECK(out.find(R"("searched":[)") != std::string::npos);
  // The integrations of report_to first, then the callbacks, as the trainer orders them.
  CHECK(out.find("pack_reporter") < out.find("c_counter"));
}

TEST_CASE("bridge_api gives the registry's message for an unknown name") {
  NoCache no_cache;
  const std::string req = request((kRoot / "good").string(), R"("c_countr")", "");
  char out[4096] = {};
  char err[2048] = {};
  size_t needed = 0;
  REQUIRE(trainhook_bridge_resolve(req.c_str(), out, sizeof out, &needed, err, sizeof err) ==
          TH_INVALID_ARGUMENT);
  const std::string msg = err;
  CHECK(msg.find("unknown callback 'c_countr'") != std::string::npos);
  CHECK(msg.find("Did you mean 'c_counter'?") != std::string::npos);
  CHECK(msg.find("(--plugin_dir)") != std::string::npos);
  CHECK(trainhook_bridge_resolve(R"({"callbacks": "x"})", out, sizeof out, &needed, err, sizeof err) ==
        TH_INVALID_ARGUMENT);
  CHECK(std::string(err) == "request: 'callbacks' must be a list of strings");
  CHECK(trainhook_bridge_resolve("{not json", out, sizeof out, &needed, err, sizeof err) ==
        TH_INVALID_ARGUMENT);
}

TEST_CASE("bridge_api loads a callback and refuses a file as the C++ host does") {
  const th_callback_info* info = nullptr;
  char err[1024] = {};
  const std::string good = (kRoot / "good" / "libtrainhook_c_plugin.so").string();
  REQUIRE(trainhook_bridge_load_callback(good.c_str(), "c_counter", &info, err, sizeof err) == TH_OK);
  REQUIRE(info != nullptr);
  CHECK(std::string(info->name) == "c_counter");
  CHECK((info->vtable->on_event != nullptr));
  CHECK(trainhook_bridge_load_callback(good.c_str(), "nope", &info, err, sizeof err) == TH_INVALID_ARGUMENT);
  CHECK(std::string(err) == "plugin file " + good + " does not export callback 'nope'");
  const std::string bad = (kRoot / "abi_major" / "libtrainhook_abi_major.so").string();
  CHECK(trainhook_bridge_load_callback(bad.c_str(), "x", &info, err, sizeof err) == TH_INVALID_ARGUMENT);
  CHECK(std::string(err).find("refused plugin file " + bad + ": ABI major version mismatch") == 0);
}

TEST_CASE("bridge_api applies the tensor-view and host-function rules of abi.h") {
  char err[512] = {};
  CHECK(trainhook_bridge_check_tensors(TH_EVENT_PRE_OPTIMIZER_STEP, TH_TENSORS_GRADIENTS, TH_ACCESS_WRITE,
                                       err, sizeof err) == TH_OK);
  CHECK(trainhook_bridge_check_tensors(TH_EVENT_LOG, TH_TENSORS_GRADIENTS, TH_ACCESS_READ, err, sizeof err) ==
        TH_INVALID_ARGUMENT);
  CHECK(std::string(err).find("gradients are not readable in on_log") != std::string::npos);
  CHECK(trainhook_bridge_check_metric("loss", 1.0, err, sizeof err) == TH_INVALID_ARGUMENT);
  CHECK(trainhook_bridge_check_metric("mine", 1.0, err, sizeof err) == TH_OK);
  CHECK(trainhook_bridge_check_metric(nullptr, 1.0, err, sizeof err) == TH_INVALID_ARGUMENT);
  CHECK(trainhook_bridge_check_factor(0.0, err, sizeof err) == TH_INVALID_ARGUMENT);
  CHECK(trainhook_bridge_check_factor(0.5, err, sizeof err) == TH_OK);
  CHECK(trainhook_bridge_check_skip(TH_EVENT_STEP_END, err, sizeof err) == TH_INVALID_ARGUMENT);
  CHECK(trainhook_bridge_check_skip(TH_EVENT_PRE_OPTIMIZER_STEP, err, sizeof err) == TH_OK);
}
