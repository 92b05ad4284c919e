#include <trainhook/distributed/launch_env.hpp>
#include <trainhook/args/training_arguments.hpp>

#include <net/if.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>

extern char** environ;

namespace trainhook::distributed {
namespace {

using Getter = std::function<const char*(const char*)>;

std::optional<std::string> value_of(const Getter& get, const char* name) {
  const char* v = get ? get(name) : std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

int64_t integer_of(const std::string& name, const std::string& text, int64_t lo, int64_t hi) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0' || v < lo || v > hi) {
    throw std::runtime_error("environment variable " + name + "='" + text + "': expected an integer in [" +
                             std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return v;
}

std::optional<int64_t> optional_integer(const Getter& get, const char* name, int64_t lo, int64_t hi) {
  const auto v = value_of(get, name);
  if (!v) return std::nullopt;
  return integer_of(name, *v, lo, hi);
}

}  // namespace

LaunchEnv read_launch_env(const Getter& get) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  LaunchEnv env;
  env.slurm_job_id = value_of(get, "SLURM_JOB_ID").value_or("");
  env.run_id = value_of(get, "TORCHELASTIC_RUN_ID").value_or("");
  env.restart_count = optional_integer(get, "TORCHELASTIC_RESTART_COUNT", 0, kMax).value_or(-1);
  env.max_restarts = optional_integer(get, "TORCHELASTIC_MAX_RESTARTS", 0, kMax).value_or(-1);
  const char* rank_var = "RANK";
  const char* world_var = "WORLD_SIZE";
  const char* local_var = "LOCAL_RANK";
  auto world = optional_integer(get, "WORLD_SIZE", 1, kMax);
  auto rank = optional_integer(get, "RANK", 0, kMax);
  auto local = optional_integer(get, "LOCAL_RANK", 0, kMax);
  auto local_world = optional_integer(get, "LOCAL_WORLD_SIZE", 1, kMax);
  if (world || rank) {
    env.source = "torchrun";
  } else if (value_of(get, "SLURM_NTASKS") || value_of(get, "SLURM_PROCID")) {
    // srun starts one task per process itself; SLURM_NTASKS_PER_NODE may be a
    // list ("2(x3)"), so the local world size is left to LOCAL_WORLD_SIZE.
    env.source = "slurm";
    rank_var = "SLURM_PROCID";
    world_var = "SLURM_NTASKS";
    local_var = "SLURM_LOCALID";
    world = optional_integer(get, "SLURM_NTASKS", 1, kMax);
    rank = optional_integer(get, "SLURM_PROCID", 0, kMax);
    local = optional_integer(get, "SLURM_LOCALID", 0, kMax);
  } else {
    return env;
  }
  if (!world) throw std::runtime_error(std::string(rank_var) + " is set but " + world_var + " is not");
  if (!rank) throw std::runtime_error(std::string(world_var) + " is set but " + rank_var + " is not");
  if (*rank >= *world) {
    throw std::runtime_error("environment variable " + std::string(rank_var) + "=" + std::to_string(*rank) +
                             " is not below " + world_var + "=" + std::to_string(*world) + " (ranks are 0.." +
                             std::to_string(*world - 1) + ")");
  }
  env.world_size = static_cast<int32_t>(*world);
  env.rank = static_cast<int32_t>(*rank);
  env.local_rank = static_cast<int32_t>(local.value_or(*rank));
  env.local_world_size = static_cast<int32_t>(local_world.value_or(*world));
  if (env.local_rank >= env.local_world_size) {
    throw std::runtime_error("environment variable " + std::string(local_var) + "=" +
                             std::to_string(env.local_rank) +
                             " is not below LOCAL_WORLD_SIZE=" + std::to_string(env.local_world_size));
  }
  if (const auto port = optional_integer(get, "MASTER_PORT", 1, 65535))
    env.master_port = static_cast<uint16_t>(*port);
  if (const auto addr = value_of(get, "MASTER_ADDR")) env.master_addr = *addr;
  const auto agent = value_of(get, "TORCHELASTIC_USE_AGENT_STORE");
  env.agent_store = agent && (*agent == "True" || *agent == "true" || *agent == "1");
  if (env.world_size > 1 && env.master_addr.empty()) {
    if (env.source == "slurm") {
      throw std::runtime_error(
          "MASTER_ADDR is not set: under Slurm export it to the first node of the job, e.g. "
          "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)");
    }
    throw std::runtime_error("MASTER_ADDR is not set (WORLD_SIZE=" + std::to_string(env.world_size) +
                             " needs the address of rank 0's rendezvous store)");
  }
  return env;
}

LaunchEnv apply_launch_env(TrainingArguments& args, const Getter& get) {
  LaunchEnv env = read_launch_env(get);
  if (env.source == "none") return env;
  args.process_index = env.rank;
  args.world_size = env.world_size;
  args.local_rank = env.local_rank;
  return env;
}

std::vector<std::string> gloo_socket_interfaces(const Getter& get) {
  const auto value = value_of(get, "GLOO_SOCKET_IFNAME");
  std::vector<std::string> out;
  if (!value) return out;
  auto existing = [] {
    std::string names;
    if (struct if_nameindex* all = ::if_nameindex()) {
      for (const struct if_nameindex* i = all; i->if_index != 0 && i->if_name != nullptr; ++i) {
        names += (names.empty() ? "" : ", ") + std::string(i->if_name);
      }
      ::if_freenameindex(all);
    }
    return names.empty() ? std::string("none found") : names;
  };
  size_t start = 0;
  for (;;) {
    const size_t comma = value->find(',', start);
    std::string name = value->substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
    while (!name.empty() && (name.front() == ' ' || name.front() == '\t')) name.erase(0, 1);
    if (name.empty())
      throw std::runtime_error("environment variable GLOO_SOCKET_IFNAME='" + *value +
                               "': an empty interface name in the list (expected names separated by commas, "
                               "e.g. eth0,eth1)");
    if (name.size() >= IF_NAMESIZE || ::if_nametoindex(name.c_str()) == 0)
      throw std::runtime_error("environment variable GLOO_SOCKET_IFNAME='" + *value + "': interface '" + name +
                               "' does not exist on this machine (its interfaces: " + existing() + ")");
    out.push_back(name);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

RequeueOutcome requeue_slurm_job(const LaunchEnv& env, int rank, double timeout_seconds) {
  RequeueOutcome out;
  try {
    if (env.slurm_job_id.empty()) {
      out.message = "not under Slurm (SLURM_JOB_ID is not set): nothing to requeue";
      return out;
    }
    if (rank != 0) {
      out.requeued = true;
      out.message = "rank 0 requeues Slurm job " + env.slurm_job_id;
      return out;
    }
    const std::string command = "scontrol requeue " + env.slurm_job_id;
    std::string a0 = "scontrol", a1 = "requeue", a2 = env.slurm_job_id;
    char* argv[] = {a0.data(), a1.data(), a2.data(), nullptr};
    pid_t pid = 0;
    if (const int err = ::posix_spawnp(&pid, "scontrol", nullptr, nullptr, argv, environ); err != 0) {
      out.message = "could not run `" + command + "`: " + std::strerror(err) +
                    (err == ENOENT ? " (scontrol is not on PATH)" : "") + "; the job was not requeued";
      return out;
    }
    // Bounded: a slurmctld that does not answer must not hold the exit.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
    int status = 0;
    for (;;) {
      const pid_t done = ::waitpid(pid, &status, WNOHANG);
      if (done == pid) break;
      if (done < 0 && errno != EINTR) {
        out.message = "`" + command + "`: cannot wait for it (" + std::strerror(errno) + ")";
        return out;
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        out.message = "`" + command + "` did not finish within " + std::to_string(static_cast<int>(timeout_seconds)) +
                      " s and was killed; the job may not be requeued";
        return out;
      }
      timespec pause{0, 20 * 1000 * 1000};  // polls the child's end, up to the deadline
      ::nanosleep(&pause, nullptr);
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      out.requeued = true;
      out.message = "requeued Slurm job " + env.slurm_job_id + " (`" + command + "`)";
    } else {
      out.message = "`" + command + "` failed (" +
                    (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                       : "killed by signal " + std::to_string(WTERMSIG(status))) +
                    "; its own message is above); the job was not requeued";
    }
  } catch (const std::exception& e) {
    out.requeued = false;
    out.message = std::string("requeue failed: ") + e.what();
  }
  return out;
}

}  // namespace trainhook::distributed
