#include "plugin_harness.hpp"

#include <stdexcept>

namespace tbtest {

PluginHarness::PluginHarness(const std::string& library)
    : library_(library), info_(library_.callback("tensorboard")) {
  host_.run_name = "run";
}

PluginHarness::~PluginHarness() { destroy(); }

th_status PluginHarness::create(const std::string& config_json, std::string* error) {
  try {
    instance_ = std::make_unique<testkit::Instance>(info_, host_, config_json);
    return TH_OK;
  } catch (const testkit::CallError& e) {
    if (error != nullptr) *error = e.what();
    return e.status;
  }
}

void PluginHarness::fire(int32_t event, const std::vector<std::pair<std::string, double>>& numbers,
                         const std::vector<std::pair<std::string, std::string>>& strings) {
  if (instance_ == nullptr) throw std::logic_error("fire before create");
  testkit::Values values(numbers, strings);
  instance_->fire(event, run_, event == TH_EVENT_LOG ? values.view() : nullptr);
}

void PluginHarness::fail(const std::string& message) {
  if (instance_ == nullptr) throw std::logic_error("fail before create");
  const th_failure f{TH_FAILURE_STRUCT_SIZE, TH_FAILURE_ERROR, message.c_str(), run_.state.global_step};
  instance_->fire_exception(run_, f);
}

}  // namespace tbtest
