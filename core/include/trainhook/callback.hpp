// In-process callbacks: the core's own (DefaultFlowCallback), callbacks a C++
// user passes to Trainer, and the adapter that wraps a plugin's C callback.
// The handler only ever sees this interface.
#pragma once

#include <trainhook/abi.h>
#include <trainhook/state.hpp>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace trainhook {

// Event ids are the ABI's TH_EVENT_* values.
using EventId = int32_t;

// What an event carries besides state and control; all borrowed for one call.
struct EventPayload {
  const th_values* values = nullptr;        // logs (LOG) or metrics (EVALUATE/PREDICT)
  const char* checkpoint_dir = nullptr;     // SAVE
  int64_t batch_index = -1;                 // PREDICTION_STEP
  int64_t batch_count = -1;                 // PREDICTION_STEP
  int32_t prediction_kind = 0;              // PREDICTION_STEP: 0 evaluate, 1 predict
};

class TrainerCallback {
 public:
  virtual ~TrainerCallback() = default;
  // Unique name; for plugins, the callback name from its th_callback_info.
  virtual std::string name() const = 0;
  // Bit set of TH_EVENT_BIT()s this callback wants; others are not dispatched.
  virtual uint64_t event_mask() const { return TH_EVENT_MASK_ALL; }
  // May throw; the handler applies the plugin error policy.
  virtual void on_event(EventId event, const th_event_args& args) = 0;
  // Stateful callbacks: state to store under stateful_callbacks[name()]; nullopt = stateless.
  virtual std::optional<nlohmann::json> save_state() { return std::nullopt; }
  virtual void load_state(const nlohmann::json& /*state*/) {}
};

}  // namespace trainhook
