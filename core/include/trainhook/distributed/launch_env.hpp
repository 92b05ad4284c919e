// The launch contract of a multi-process run: torchrun's environment (RANK,
// WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), or
// Slurm's (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID) when torchrun's is not
// set. `trainhook launch` sets the same variables. No LibTorch here: the CLI's
// torch-free translation units read it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace trainhook {
struct TrainingArguments;
}

namespace trainhook::distributed {

struct LaunchEnv {
  int32_t rank = 0;
  int32_t world_size = 1;
  int32_t local_rank = 0;
  int32_t local_world_size = 1;
  std::string master_addr;  // empty in a single-process run
  uint16_t master_port = 29500;
  // torchrun's agent serves a store on MASTER_PORT (TORCHELASTIC_USE_AGENT_STORE): a
  // LibTorch 2.x build joins it, a 1.13 build serves its own on MASTER_PORT + 1
  // (process_group.cpp says why).
  bool agent_store = false;
  std::string source = "none";  // "torchrun" (also trainhook launch), "slurm" or "none"
};

// Reads the environment through `get` (std::getenv by default). A world of one
// (no variable set) gives the defaults. Throws std::runtime_error naming the
// variable at fault: a non-number, RANK >= WORLD_SIZE, a missing MASTER_ADDR
// when WORLD_SIZE > 1, a port out of range.
LaunchEnv read_launch_env(const std::function<const char*(const char*)>& get = {});

// Applies the environment to the arguments as HF's TrainingArguments does:
// process_index/world_size/local_rank from the launcher (an explicit
// --local_rank that disagrees with LOCAL_RANK is replaced by it). Returns the
// environment read.
LaunchEnv apply_launch_env(TrainingArguments& args, const std::function<const char*(const char*)>& get = {});

}  // namespace trainhook::distributed
