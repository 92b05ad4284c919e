#include "check_host.hpp"

#include <trainhook/testkit/plugin_driver.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>

namespace trainhook::plugin_check {
namespace {

constexpr size_t kKeptWarnings = 8;

void write_err(char* err, size_t err_size, const char* message) {
  if (err != nullptr && err_size > 0) std::snprintf(err, err_size, "%s", message);
}

DLTensor view(float* data, int64_t* shape, int32_t ndim) {
  DLTensor t{};
  t.data = data;
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = ndim;
  t.dtype = DLDataType{kDLFloat, 32, 1};
  t.shape = shape;
  t.strides = nullptr;
  t.byte_offset = 0;
  return t;
}

}  // namespace

CheckHost::CheckHost(std::string output_dir, std::string run_name)
    : output_dir_(std::move(output_dir)), run_name_(std::move(run_name)) {
  set_rank(0, 1);
  for (size_t i = 0; i < params_.size(); ++i) {
    params_[i] = 0.01f * static_cast<float>(i);
    grads_[i] = 0.001f;
  }
  param_views_ = {view(params_.data(), weight_shape_.data(), 2),
                  view(params_.data() + 12, bias_shape_.data(), 1)};
  grad_views_ = {view(grads_.data(), weight_shape_.data(), 2),
                 view(grads_.data() + 12, bias_shape_.data(), 1)};

  table_.struct_size = TH_HOST_STRUCT_SIZE;
  table_.abi_major = TRAINHOOK_ABI_VERSION_MAJOR;
  table_.abi_minor = TRAINHOOK_ABI_VERSION_MINOR;
  table_.ctx = this;
  table_.log = &CheckHost::log_fn;
  table_.output_dir = [](void* c) { return static_cast<CheckHost*>(c)->output_dir_.c_str(); };
  table_.training_args_json = [](void* c) { return static_cast<CheckHost*>(c)->args_json_.c_str(); };
  table_.request_stop = [](void*, const char*) {};
  table_.trainer_state_json = [](void* c) { return static_cast<CheckHost*>(c)->state_json_.c_str(); };
  table_.model_description = [](void*) { return "Linear(3, 4)"; };
  table_.set_resume_checkpoint = [](void* c, const char* path, char* err, size_t err_size) -> th_status {
    static_cast<CheckHost*>(c)->steer("set_resume_checkpoint");
    if (path != nullptr && *path != '\0') return TH_OK;
    write_err(err, err_size, "set_resume_checkpoint: the path is empty");
    return TH_INVALID_ARGUMENT;
  };
  table_.run_name = [](void* c) { return static_cast<CheckHost*>(c)->run_name_.c_str(); };
  table_.tensors = &CheckHost::tensors_fn;
  table_.learning_rates = [](void*, double* out, uint32_t capacity, uint32_t* count, char* err,
                             size_t err_size) -> th_status {
    if (count == nullptr) {
      write_err(err, err_size, "learning_rates: `count` is NULL");
      return TH_INVALID_ARGUMENT;
    }
    *count = 1;
    if (out != nullptr && capacity > 0) out[0] = 1e-3;
    return TH_OK;
  };
  table_.set_lr_factor = [](void* c, double factor, char* err, size_t err_size) -> th_status {
    static_cast<CheckHost*>(c)->steer("set_lr_factor");
    if (!(factor > 0) || !std::isfinite(factor)) {
      write_err(err, err_size, "set_lr_factor: the factor must be finite and > 0");
      return TH_INVALID_ARGUMENT;
    }
    static_cast<CheckHost*>(c)->lr_factor_ = factor;
    return TH_OK;
  };
  table_.lr_factor = [](void* c) { return static_cast<CheckHost*>(c)->lr_factor_; };
  table_.add_metric = &CheckHost::add_metric_fn;
  table_.skip_optimizer_step = [](void* c, char*, size_t) -> th_status {
    static_cast<CheckHost*>(c)->steer("skip_optimizer_step");
    return TH_OK;
  };
  table_.set_critical = [](void*) {};
  table_.end_requested = [](void*) -> int32_t { return 0; };
  table_.stop_signal = [](void*) -> int32_t { return 0; };
  table_.isolated = [](void*) -> int32_t { return 0; };
  table_.profiling = [](void*) -> int32_t { return 0; };
  table_.profile_span = [](void*, const char*, int64_t, int64_t) {};
  table_.set_observe_only = [](void* c, uint64_t events) {
    auto* h = static_cast<CheckHost*>(c);
    h->observe_only_ = events;
    h->observe_only_declared_ = true;
  };
  table_.set_side_by_side = [](void* c, uint64_t events) {
    static_cast<CheckHost*>(c)->side_by_side_ = events;
  };
}

void CheckHost::play_minor(uint32_t minor) {
  if (minor > TRAINHOOK_ABI_VERSION_MINOR) minor = TRAINHOOK_ABI_VERSION_MINOR;
  table_.abi_minor = minor;
  table_.struct_size = testkit::host_table_size(minor);
  // Past the cut: NULL, as a table that ends there has nothing.
  char* base = reinterpret_cast<char*>(&table_);
  std::memset(base + table_.struct_size, 0, sizeof(th_host) - table_.struct_size);
}

void CheckHost::set_rank(int32_t rank, int32_t world_size) {
  args_json_ = "{\"output_dir\": \"" + output_dir_ + "\", \"run_name\": \"" + run_name_ +
               "\", \"logging_steps\": 2, \"save_steps\": 4, \"num_train_epochs\": 2, \"world_size\": " +
               std::to_string(world_size) + ", \"process_index\": " + std::to_string(rank) + "}";
  state_json_ = "{\"global_step\": 0, \"log_history\": [], \"is_world_process_zero\": " +
                std::string(rank == 0 ? "true" : "false") + "}";
}

std::vector<std::string> CheckHost::recent_warnings() {
  std::lock_guard<std::mutex> lock(mu_);
  return {warnings_.begin(), warnings_.end()};
}

uint64_t CheckHost::take_side_by_side() { return std::exchange(side_by_side_, 0); }

uint64_t CheckHost::take_observe_only(bool& declared) {
  declared = observe_only_declared_;
  const uint64_t events = observe_only_;
  observe_only_ = 0;
  observe_only_declared_ = false;
  return events;
}

uint64_t CheckHost::log_count() {
  std::lock_guard<std::mutex> lock(mu_);
  return logs_;
}

void CheckHost::log_fn(void* ctx, int32_t level, const char* message) {
  auto* h = static_cast<CheckHost*>(ctx);
  std::lock_guard<std::mutex> lock(h->mu_);
  ++h->logs_;
  if (level < TH_LOG_WARN || message == nullptr) return;
  h->warnings_.push_back(std::string(level >= TH_LOG_ERROR ? "error: " : "warn: ") + message);
  if (h->warnings_.size() > kKeptWarnings) h->warnings_.pop_front();
}

th_status CheckHost::tensors_fn(void* ctx, int32_t kind, int32_t access, th_tensor_list* out, char* err,
                                size_t err_size) {
  auto* h = static_cast<CheckHost*>(ctx);
  if (access == TH_ACCESS_WRITE) h->steer("tensors for writing");
  if (out == nullptr || !TH_HAS_FIELD(out, th_tensor_list, tensors)) {
    write_err(err, err_size,
              "tensors: `out` is NULL or its struct_size is not set to TH_TENSOR_LIST_STRUCT_SIZE");
    return TH_INVALID_ARGUMENT;
  }
  if ((access != TH_ACCESS_READ && access != TH_ACCESS_WRITE) ||
      (kind != TH_TENSORS_PARAMETERS && kind != TH_TENSORS_GRADIENTS && kind != TH_TENSORS_BUFFERS)) {
    write_err(err, err_size, "tensors: unknown kind or access");
    return TH_INVALID_ARGUMENT;
  }
  out->count = kind == TH_TENSORS_BUFFERS ? 0 : 2;
  out->names = h->names_.data();
  out->tensors = kind == TH_TENSORS_GRADIENTS ? h->grad_views_.data() : h->param_views_.data();
  return TH_OK;
}

th_status CheckHost::add_metric_fn(void* ctx, const char* name, double value, char* err, size_t err_size) {
  static_cast<CheckHost*>(ctx)->steer("add_metric");
  if (name == nullptr || *name == '\0') {
    write_err(err, err_size, "add_metric: the metric name is empty");
    return TH_INVALID_ARGUMENT;
  }
  if (!std::isfinite(value)) {
    write_err(err, err_size, "add_metric: the value is not finite (only finite values reach the logs)");
    return TH_INVALID_ARGUMENT;
  }
  return TH_OK;
}

}  // namespace trainhook::plugin_check
