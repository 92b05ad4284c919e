// Loads the built tensorboard plugin with dlopen and drives it through the C
// ABI exactly as a host would: a fake th_host (output_dir, args JSON, model
// description, a log sink), TrainerState/Control structs, th_values for logs.
// Used by the plugin unit test and by the integration driver.
#pragma once

#include <trainhook/abi.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace tbtest {

// <build>/lib/trainhook/plugins/libtrainhook_tensorboard.so from TRAINHOOK_BUILD_DIR.
std::string plugin_path();

struct HostData {
  std::string output_dir;
  std::string args_json = "{}";
  std::string model_description;
  std::string run_name = "run";
  std::mutex mu;
  std::vector<std::pair<int32_t, std::string>> logs;  // (level, message)
  bool has(int32_t level, const std::string& needle);
};

class PluginHarness {
 public:
  explicit PluginHarness(const std::string& library = plugin_path());
  ~PluginHarness();
  PluginHarness(const PluginHarness&) = delete;
  PluginHarness& operator=(const PluginHarness&) = delete;

  const th_callback_info& info() const { return *info_; }
  HostData& host() { return data_; }

  // Creates the callback; returns the status and fills error on failure.
  th_status create(const std::string& config_json, std::string* error = nullptr);
  void destroy();
  bool created() const { return self_ != nullptr; }

  th_state& state() { return state_; }
  // Fires an event; logs is used for TH_EVENT_LOG. Throws std::runtime_error on a non-OK status.
  void fire(int32_t event, const std::vector<std::pair<std::string, double>>& numbers = {},
            const std::vector<std::pair<std::string, std::string>>& strings = {});

 private:
  void* lib_ = nullptr;
  const th_callback_info* info_ = nullptr;
  HostData data_;
  th_host host_{};
  void* self_ = nullptr;
  th_state state_{};
  th_control control_{};
};

}  // namespace tbtest
