// trainer_state.json of a checkpoint: parse and every field's range check.
#include <trainhook/callbacks/trainer_state_io.hpp>
#include <trainhook/common/checked_json.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const trainhook::TrainerState s = trainhook::state_from_json(trainhook::parse_checked_json(text, "fuzz"));
    if (s.global_step < 0 || s.max_steps < 0 || s.epoch < 0) __builtin_trap();
    (void)trainhook::to_json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const std::runtime_error&) {
  }
  return 0;
}
