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
#include <vector>

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
  // LibTorch 2.x build joins it; in a 1.13 build rank 0 serves its own on a port
  // the kernel chooses and publishes it there (process_group.cpp says why).
  bool agent_store = false;
  std::string source = "none";  // "torchrun" (also trainhook launch), "slurm" or "none"
  // torchrun's elastic agent: TORCHELASTIC_RUN_ID, TORCHELASTIC_RESTART_COUNT
  // and TORCHELASTIC_MAX_RESTARTS (empty / -1 when not set), logged at start.
  std::string run_id;
  int64_t restart_count = -1;
  int64_t max_restarts = -1;
  std::string slurm_job_id;  // SLURM_JOB_ID, whatever the launcher
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

// GLOO_SOCKET_IFNAME as PyTorch reads it: a comma-separated list of network
// interfaces, one Gloo device each. Empty when unset. Throws
// std::runtime_error naming the variable and the interface when one is empty
// or does not exist on this machine (the message lists those that do).
std::vector<std::string> gloo_socket_interfaces(const std::function<const char*(const char*)>& get = {});

// After the requeue signal stopped the run (--requeue_signal): under Slurm
// (SLURM_JOB_ID set), world rank 0 runs `scontrol requeue <job id>` (found on
// PATH, bounded by `timeout_seconds`); the other ranks leave it to rank 0.
// Never throws: a failure (no scontrol, a non-zero exit, no answer) is in the
// outcome's message. `requeued` is true when the job was (or, on other ranks,
// is being) requeued.
struct RequeueOutcome {
  bool requeued = false;
  std::string message;  // what was done, for the run's last line
};
RequeueOutcome requeue_slurm_job(const LaunchEnv& env, int rank, double timeout_seconds = 60);

}  // namespace trainhook::distributed
