// The th_host a checked plugin gets: every service of this ABI answered as a
// trainer would (a tiny model's tensors included), and nothing kept per call
// that grows: logs are counted with only the last few kept, so the memory
// check measures the plugin and not the host. play_minor() plays an older
// trainer: the table is cut to that minor's size and the fields past the cut
// are NULL, so a plugin that calls one without TH_HAS_FIELD crashes here
// rather than on a user's older trainer.
#pragma once

#include <trainhook/abi.h>

#include <array>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace trainhook::plugin_check {

class CheckHost {
 public:
  CheckHost(std::string output_dir, std::string run_name);
  CheckHost(const CheckHost&) = delete;
  CheckHost& operator=(const CheckHost&) = delete;

  const th_host* table() const noexcept { return &table_; }
  void play_minor(uint32_t minor);
  // The run's rank, as training_args_json and trainer_state_json show it.
  void set_rank(int32_t rank, int32_t world_size);

  // The last few log lines at warning level or above ("warn: message").
  std::vector<std::string> recent_warnings();
  uint64_t log_count();

  // What set_observe_only declared since the last take (a callback declares
  // in create; the session takes it right after), and whether it was called.
  uint64_t take_observe_only(bool& declared);
  // Likewise for set_side_by_side (ABI 1.8).
  uint64_t take_side_by_side();
  // The calls that steer the run (add_metric, set_lr_factor,
  // skip_optimizer_step, set_resume_checkpoint, tensors for writing), counted,
  // with the name of the last: an event declared observe-only makes none.
  uint64_t steer_count() const noexcept { return steers_; }
  const char* last_steer() const noexcept { return last_steer_; }

 private:
  static void log_fn(void* ctx, int32_t level, const char* message);
  static th_status tensors_fn(void* ctx, int32_t kind, int32_t access, th_tensor_list* out, char* err,
                              size_t err_size);
  static th_status add_metric_fn(void* ctx, const char* name, double value, char* err, size_t err_size);

  th_host table_{};
  std::string output_dir_, run_name_, args_json_, state_json_;
  std::mutex mu_;
  uint64_t logs_ = 0;
  std::deque<std::string> warnings_;  // the last kKeptWarnings
  // A tiny model: "layer.weight" [4, 3] and "layer.bias" [4], with gradients.
  std::array<float, 16> params_{}, grads_{};
  std::array<int64_t, 2> weight_shape_{4, 3};
  std::array<int64_t, 1> bias_shape_{4};
  std::array<DLTensor, 2> param_views_{}, grad_views_{};
  std::array<const char*, 2> names_{"layer.weight", "layer.bias"};
  double lr_factor_ = 1.0;
  uint64_t observe_only_ = 0;
  bool observe_only_declared_ = false;
  uint64_t side_by_side_ = 0;
  uint64_t steers_ = 0;
  const char* last_steer_ = "";
  void steer(const char* what) noexcept {
    ++steers_;
    last_steer_ = what;
  }
};

}  // namespace trainhook::plugin_check
