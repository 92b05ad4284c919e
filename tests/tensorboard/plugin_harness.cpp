#include "plugin_harness.hpp"

#include <dlfcn.h>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace tbtest {
namespace {

HostData& data(void* ctx) { return *static_cast<HostData*>(ctx); }

void host_log(void* ctx, int32_t level, const char* message) {
  std::lock_guard<std::mutex> lock(data(ctx).mu);
  data(ctx).logs.emplace_back(level, message);
}
const char* host_output_dir(void* ctx) { return data(ctx).output_dir.c_str(); }
const char* host_args(void* ctx) { return data(ctx).args_json.c_str(); }
void host_request_stop(void*, const char*) {}
const char* host_state_json(void*) { return "{}"; }
const char* host_model(void* ctx) { return data(ctx).model_description.c_str(); }
th_status host_set_resume(void*, const char*, char* err, size_t err_size) {
  std::snprintf(err, err_size, "not supported by the test host");
  return TH_INVALID_ARGUMENT;
}
const char* host_run_name(void* ctx) { return data(ctx).run_name.c_str(); }

}  // namespace

std::string plugin_path() {
  const char* build = std::getenv("TRAINHOOK_BUILD_DIR");
  if (build == nullptr) throw std::runtime_error("TRAINHOOK_BUILD_DIR is not set");
  return std::string(build) + "/lib/trainhook/plugins/libtrainhook_tensorboard.so";
}

bool HostData::has(int32_t level, const std::string& needle) {
  std::lock_guard<std::mutex> lock(mu);
  for (const auto& [l, m] : logs)
    if (l == level && m.find(needle) != std::string::npos) return true;
  return false;
}

PluginHarness::PluginHarness(const std::string& library) {
  lib_ = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib_ == nullptr) throw std::runtime_error("dlopen " + library + ": " + ::dlerror());
  auto entry = reinterpret_cast<th_plugin_entry_fn>(::dlsym(lib_, TRAINHOOK_ENTRY_SYMBOL));
  if (entry == nullptr) throw std::runtime_error(library + " has no " TRAINHOOK_ENTRY_SYMBOL);
  th_host_info hi{sizeof(th_host_info), TRAINHOOK_ABI_VERSION_MAJOR, TRAINHOOK_ABI_VERSION_MINOR, "test"};
  const th_plugin_info* pi = nullptr;
  char err[512] = {0};
  if (entry(&hi, &pi, err, sizeof err) != TH_OK)
    throw std::runtime_error(std::string("entry failed: ") + err);
  for (uint32_t i = 0; i < pi->callback_count; ++i)
    if (std::strcmp(pi->callbacks[i].name, "tensorboard") == 0) info_ = &pi->callbacks[i];
  if (info_ == nullptr) throw std::runtime_error(library + " exports no 'tensorboard' callback");

  host_.struct_size = sizeof(th_host);
  host_.abi_major = TRAINHOOK_ABI_VERSION_MAJOR;
  host_.abi_minor = TRAINHOOK_ABI_VERSION_MINOR;
  host_.ctx = &data_;
  host_.log = &host_log;
  host_.output_dir = &host_output_dir;
  host_.training_args_json = &host_args;
  host_.request_stop = &host_request_stop;
  host_.trainer_state_json = &host_state_json;
  host_.model_description = &host_model;
  host_.set_resume_checkpoint = &host_set_resume;
  host_.run_name = &host_run_name;

  state_.struct_size = sizeof(th_state);
  state_.is_local_process_zero = 1;
  state_.is_world_process_zero = 1;
  state_.world_size = 1;
  control_.struct_size = sizeof(th_control);
}

PluginHarness::~PluginHarness() {
  destroy();
  if (lib_ != nullptr) ::dlclose(lib_);
}

th_status PluginHarness::create(const std::string& config_json, std::string* error) {
  char err[1024] = {0};
  th_status st = info_->create(&host_, config_json.c_str(), &self_, err, sizeof err);
  if (st != TH_OK) {
    self_ = nullptr;
    if (error != nullptr) *error = err;
  }
  return st;
}

void PluginHarness::destroy() {
  if (self_ != nullptr) info_->vtable->destroy(self_);
  self_ = nullptr;
}

void PluginHarness::fire(int32_t event, const std::vector<std::pair<std::string, double>>& numbers,
                         const std::vector<std::pair<std::string, std::string>>& strings) {
  if ((info_->event_mask & TH_EVENT_BIT(event)) == 0) return;  // a host skips unwanted events
  std::vector<const char*> keys, skeys, svals;
  std::vector<double> vals;
  for (const auto& [k, v] : numbers) {
    keys.push_back(k.c_str());
    vals.push_back(v);
  }
  for (const auto& [k, v] : strings) {
    skeys.push_back(k.c_str());
    svals.push_back(v.c_str());
  }
  th_values values{sizeof(th_values), static_cast<uint32_t>(keys.size()),  keys.data(),
                   vals.data(),       static_cast<uint32_t>(skeys.size()), skeys.data(),
                   svals.data()};
  th_event_args args{};
  args.struct_size = sizeof(th_event_args);
  args.event = event;
  args.state = &state_;
  args.control = &control_;
  args.values = event == TH_EVENT_LOG ? &values : nullptr;
  args.batch_index = -1;
  args.batch_count = -1;
  char err[1024] = {0};
  if (info_->vtable->on_event(self_, &args, err, sizeof err) != TH_OK)
    throw std::runtime_error(std::string("on_event failed: ") + err);
}

}  // namespace tbtest
