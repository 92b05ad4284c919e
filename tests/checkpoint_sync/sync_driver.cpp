// Drives the real flyte plugin library (dlopen, C ABI) through a simulated run
// for the integration tests:
//   checkpoint_sync_driver <plugin.so> <output_dir> <config-json> <steps,comma-separated> <big-file-bytes>
// Fires on_init_end, then per step writes checkpoint-<step>/ (a few small files
// and one file of <big-file-bytes> bytes whose content depends on the step) and
// fires on_save, then on_train_end. Prints "RESUME <path>" when the plugin asked
// to resume, and every log line of the plugin to stderr.
#include "fake_host.hpp"
#include "test_files.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>

int main(int argc, char** argv) {
  if (argc != 6) {
    std::cerr << "usage: checkpoint_sync_driver <plugin.so> <output_dir> <config-json> <steps> <big-bytes>\n";
    return 2;
  }
  void* lib = ::dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::cerr << "cannot load " << argv[1] << ": " << ::dlerror() << "\n";
    return 2;
  }
  auto entry = reinterpret_cast<th_plugin_entry_fn>(::dlsym(lib, TRAINHOOK_ENTRY_SYMBOL));
  th_host_info hi{sizeof(th_host_info), TRAINHOOK_ABI_VERSION_MAJOR, TRAINHOOK_ABI_VERSION_MINOR, "driver"};
  const th_plugin_info* pi = nullptr;
  char err[1024] = {0};
  if (entry == nullptr || entry(&hi, &pi, err, sizeof err) != TH_OK) {
    std::cerr << "plugin entry failed: " << err << "\n";
    return 2;
  }
  const th_callback_info* flyte = nullptr;
  for (uint32_t i = 0; i < pi->callback_count; ++i)
    if (std::strcmp(pi->callbacks[i].name, "flyte") == 0) flyte = &pi->callbacks[i];
  if (flyte == nullptr) {
    std::cerr << "no callback named flyte in " << argv[1] << "\n";
    return 2;
  }
  FakeHost host;
  host.output_dir = argv[2];
  host.state_json = R"({"global_step": 3, "log_history": [{"loss": 2.0, "epoch": 1.0, "step": 1},
                        {"loss": 1.0, "epoch": 2.0, "step": 2}]})";
  host.table.log = [](void*, int32_t level, const char* m) {
    std::fprintf(stderr, "[flyte %d] %s\n", level, m);
  };
  void* self = nullptr;
  if (flyte->create(&host.table, argv[3], &self, err, sizeof err) != TH_OK) {
    std::cerr << "create failed: " << err << "\n";
    return 3;
  }
  int rc = 0;
  {
    EventFirer f(flyte, self);
    std::string error;
    if (f.fire(TH_EVENT_INIT_END, nullptr, &error) != TH_OK) {
      std::cerr << "on_init_end failed: " << error << "\n";
      rc = 4;
    }
    if (!host.resume_checkpoint.empty()) std::cout << "RESUME " << host.resume_checkpoint << std::endl;
    std::stringstream steps(argv[4]);
    std::string step;
    const size_t big = std::stoull(argv[5]);
    while (rc == 0 && std::getline(steps, step, ',')) {
      if (step.empty()) continue;
      const int s = std::stoi(step);
      const auto dir = cs_test::make_checkpoint(host.output_dir, s);
      std::string data(big, '\0');
      uint32_t x = 2463534242u + static_cast<uint32_t>(s);
      for (auto& c : data) {  // xorshift: incompressible, step-dependent bytes
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        c = static_cast<char>(x);
      }
      if (big > 0) cs_test::write(dir / "big.bin", data);
      f.state.global_step = s;
      if (f.fire(TH_EVENT_SAVE, dir.c_str(), &error) != TH_OK) {
        std::cerr << "on_save failed: " << error << "\n";
        rc = 4;
      }
    }
    if (f.fire(TH_EVENT_TRAIN_END, nullptr, &error) != TH_OK) {
      std::cerr << "on_train_end failed: " << error << "\n";
      rc = 4;
    }
  }
  flyte->vtable->destroy(self);
  return rc;
}
