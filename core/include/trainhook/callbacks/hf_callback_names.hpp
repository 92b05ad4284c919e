// HF's class names for the callbacks that are HF's, the keys under which
// trainer_state.json's stateful_callbacks holds their state (HF's
// TrainerState looks up EarlyStoppingCallback, not early_stopping).
#pragma once

#include <string>

namespace trainhook {

// "early_stopping" -> "EarlyStoppingCallback", "tensorboard" ->
// "TensorBoardCallback", ...; any other name is returned unchanged.
std::string stateful_callback_key(const std::string& callback_name);

}  // namespace trainhook
