// TrainerState and TrainerControl: the trainer's C++ view, mirrored into the C
// structs of abi.h before each event. trainer_state.json reading/writing lives
// in trainer_state_io.hpp. No LibTorch here.
#pragma once

#include <trainhook/abi.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace trainhook {

// HF TrainerControl: five flags, all false by default.
struct TrainerControl {
  bool should_training_stop = false;
  bool should_epoch_stop = false;
  bool should_save = false;
  bool should_evaluate = false;
  bool should_log = false;
};

// HF TrainerState. Field names and meanings as in transformers' trainer_callback.py.
struct TrainerState {
  double epoch = 0.0;
  int64_t global_step = 0;
  int64_t max_steps = 0;
  int64_t logging_steps = 500;
  int64_t eval_steps = 500;
  int64_t save_steps = 500;
  int64_t train_batch_size = 0;
  double num_train_epochs = 0;
  int64_t num_input_tokens_seen = 0;
  double total_flos = 0;
  // Entries as HF writes them: training {epoch, grad_norm, learning_rate, loss, step}, ...
  std::vector<nlohmann::json> log_history;
  std::optional<double> best_metric;
  std::optional<int64_t> best_global_step;
  std::optional<std::string> best_model_checkpoint;
  bool is_local_process_zero = true;
  bool is_world_process_zero = true;
  bool is_hyper_param_search = false;
  std::optional<std::string> trial_name;
  nlohmann::json trial_params;  // null when none
  // {"<CallbackName>": {"args": {...}, "attributes": {...}}, "TrainerControl": {...}}
  nlohmann::json stateful_callbacks = nlohmann::json::object();
  // Not in HF's JSON; carried for multi-process runs and the C mirror.
  int32_t process_index = 0;
  int32_t world_size = 1;
  int64_t steps_in_epoch = 0;
};

// Fills the C mirror. `out.best_model_checkpoint`/`trial_name` point into `s`,
// so `s` must outlive the use of `out`.
void to_c(const TrainerState& s, th_state& out) noexcept;
void to_c(const TrainerControl& c, th_control& out) noexcept;
void from_c(const th_control& in, TrainerControl& c) noexcept;
// The TrainerControl flags that differ, named and joined by ", " (empty when
// none): what a callback changed in an event where a change is not taken.
std::string changed_flags(const th_control& before, const th_control& after);

}  // namespace trainhook
