// The tensorboard plugin's test harness: the built library loaded through the
// shared C-ABI driver (testkit/plugin_driver.hpp), with the tensorboard
// callback created later (so a test can try several configurations) and logs
// given as key/value lists. Used by the plugin unit test and the integration
// driver.
#pragma once

#include <plugin_driver.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tbtest {

// The built tensorboard plugin under TRAINHOOK_BUILD_DIR (testkit::plugin_path).
inline std::string plugin_path() { return testkit::plugin_path("tensorboard"); }

class PluginHarness {
 public:
  explicit PluginHarness(const std::string& library = plugin_path());
  ~PluginHarness();
  PluginHarness(const PluginHarness&) = delete;
  PluginHarness& operator=(const PluginHarness&) = delete;

  const th_callback_info& info() const { return info_; }
  testkit::FakeHost& host() { return host_; }

  // Creates the callback; returns the status and fills error on failure.
  th_status create(const std::string& config_json, std::string* error = nullptr);
  void destroy() { instance_.reset(); }
  bool created() const { return instance_ != nullptr; }

  th_state& state() { return run_.state; }
  // Fires an event; the values are passed for TH_EVENT_LOG. Throws on a non-OK status.
  void fire(int32_t event, const std::vector<std::pair<std::string, double>>& numbers = {},
            const std::vector<std::pair<std::string, std::string>>& strings = {});
  // EXCEPTION (ABI 1.3) at the current global_step with `message`, kind error.
  void fail(const std::string& message);

 private:
  testkit::Library library_;
  const th_callback_info& info_;
  testkit::FakeHost host_;
  testkit::Run run_;
  std::unique_ptr<testkit::Instance> instance_;
};

}  // namespace tbtest
