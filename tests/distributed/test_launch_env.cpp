// The launch contract read from the environment (torchrun's variables, Slurm's
// as the fallback) and its errors, through an injected getenv; GLOO_SOCKET_IFNAME's
// list, and the Slurm requeue through a fake scontrol on PATH.
#include <trainhook/distributed/launch_env.hpp>
#include <trainhook/args/training_arguments.hpp>

#include <doctest/doctest.h>
#include <temp_dir.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

using trainhook::distributed::LaunchEnv;
using trainhook::distributed::read_launch_env;

namespace {

struct FakeEnv {
  std::map<std::string, std::string> vars;
  std::function<const char*(const char*)> getter() const {
    return [this](const char* name) -> const char* {
      const auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

std::string error_of(const FakeEnv& env) {
  try {
    read_launch_env(env.getter());
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("no launcher: a world of one") {
  const FakeEnv env;
  const LaunchEnv e = read_launch_env(env.getter());
  CHECK(e.source == "none");
  CHECK(e.world_size == 1);
  CHECK(e.rank == 0);
}

TEST_CASE("torchrun's variables") {
  const FakeEnv env{{{"RANK", "3"},
                     {"WORLD_SIZE", "4"},
                     {"LOCAL_RANK", "1"},
                     {"LOCAL_WORLD_SIZE", "2"},
                     {"MASTER_ADDR", "10.0.0.1"},
                     {"MASTER_PORT", "29555"},
                     {"TORCHELASTIC_USE_AGENT_STORE", "True"}}};
  const LaunchEnv e = read_launch_env(env.getter());
  CHECK(e.source == "torchrun");
  CHECK(e.rank == 3);
  CHECK(e.world_size == 4);
  CHECK(e.local_rank == 1);
  CHECK(e.local_world_size == 2);
  CHECK(e.master_addr == "10.0.0.1");
  CHECK(e.master_port == 29555);
  CHECK(e.agent_store);

  trainhook::TrainingArguments a;
  trainhook::distributed::apply_launch_env(a, env.getter());
  CHECK(a.process_index == 3);
  CHECK(a.world_size == 4);
  CHECK(a.local_rank == 1);
}

TEST_CASE("Slurm's variables when torchrun's are unset, torchrun's when both are set") {
  FakeEnv env{
      {{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "1"}, {"MASTER_ADDR", "node1"}}};
  LaunchEnv e = read_launch_env(env.getter());
  CHECK(e.source == "slurm");
  CHECK(e.rank == 5);
  CHECK(e.world_size == 8);
  CHECK(e.local_rank == 1);
  CHECK(e.master_port == 29500);
  env.vars["RANK"] = "0";
  env.vars["WORLD_SIZE"] = "2";
  e = read_launch_env(env.getter());
  CHECK(e.source == "torchrun");
  CHECK(e.world_size == 2);
}

TEST_CASE("inconsistent environments name the variable at fault") {
  CHECK(contains(error_of(FakeEnv{{{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}}),
                 "RANK=2 is not below WORLD_SIZE=2"));
  CHECK(contains(error_of(FakeEnv{{{"RANK", "0"}, {"WORLD_SIZE", "2"}}}), "MASTER_ADDR is not set"));
  CHECK(
      contains(error_of(FakeEnv{{{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}}}), "scontrol show hostnames"));
  CHECK(contains(error_of(FakeEnv{{{"RANK", "0"}}}), "RANK is set but WORLD_SIZE is not"));
  CHECK(contains(error_of(FakeEnv{{{"WORLD_SIZE", "2"}}}), "WORLD_SIZE is set but RANK is not"));
  CHECK(contains(error_of(FakeEnv{{{"RANK", "x"}, {"WORLD_SIZE", "2"}}}), "RANK='x'"));
  CHECK(contains(error_of(FakeEnv{{{"RANK", "0"}, {"WORLD_SIZE", "0"}}}), "WORLD_SIZE='0'"));
  CHECK(contains(
      error_of(FakeEnv{{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "70000"}}}),
      "MASTER_PORT='70000'"));
  CHECK(contains(error_of(FakeEnv{{{"RANK", "0"},
                                   {"WORLD_SIZE", "2"},
                                   {"MASTER_ADDR", "h"},
                                   {"LOCAL_RANK", "2"},
                                   {"LOCAL_WORLD_SIZE", "2"}}}),
                 "LOCAL_RANK=2 is not below LOCAL_WORLD_SIZE=2"));
}

TEST_CASE("torchrun's run id and restart count are read") {
  FakeEnv env;
  env.vars = {{"RANK", "0"},
              {"WORLD_SIZE", "1"},
              {"TORCHELASTIC_RUN_ID", "job-7"},
              {"TORCHELASTIC_RESTART_COUNT", "2"},
              {"TORCHELASTIC_MAX_RESTARTS", "3"},
              {"SLURM_JOB_ID", "4242"}};
  const LaunchEnv e = read_launch_env(env.getter());
  CHECK(e.run_id == "job-7");
  CHECK(e.restart_count == 2);
  CHECK(e.max_restarts == 3);
  CHECK(e.slurm_job_id == "4242");
  env.vars["TORCHELASTIC_RESTART_COUNT"] = "x";
  CHECK(contains(error_of(env), "TORCHELASTIC_RESTART_COUNT='x'"));
}

TEST_CASE("GLOO_SOCKET_IFNAME takes a comma-separated list and names a bad interface") {
  using trainhook::distributed::gloo_socket_interfaces;
  FakeEnv env;
  CHECK(gloo_socket_interfaces(env.getter()).empty());
  env.vars["GLOO_SOCKET_IFNAME"] = "lo";
  CHECK(gloo_socket_interfaces(env.getter()) == std::vector<std::string>{"lo"});
  env.vars["GLOO_SOCKET_IFNAME"] = "lo, lo";
  CHECK(gloo_socket_interfaces(env.getter()) == std::vector<std::string>{"lo", "lo"});
  auto error = [&] {
    try {
      gloo_socket_interfaces(env.getter());
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  env.vars["GLOO_SOCKET_IFNAME"] = "lo,nosuchif0";
  const std::string bad = error();
  CHECK(contains(bad, "GLOO_SOCKET_IFNAME='lo,nosuchif0'"));
  CHECK(contains(bad, "interface 'nosuchif0' does not exist"));
  CHECK(contains(bad, "lo"));
  env.vars["GLOO_SOCKET_IFNAME"] = "lo,,lo";
  CHECK(contains(error(), "an empty interface name"));
}

namespace {

// A fake scontrol on PATH that records its arguments and exits with `status`.
struct FakeScontrol {
  trainhook::testkit::TempDir tmp{"trainhook_scontrol"};
  const std::filesystem::path& dir = tmp.path;
  std::string old_path;
  explicit FakeScontrol(int status) {
    std::ofstream(dir / "scontrol") << "#!/bin/sh\necho \"$@\" > \"" << (dir / "args").string()
                                    << "\"\necho 'scontrol: fake' >&2\nexit " << status << "\n";
    std::filesystem::permissions(dir / "scontrol", std::filesystem::perms::owner_all);
    const char* p = std::getenv("PATH");
    old_path = p ? p : "";
    ::setenv("PATH", (dir.string() + ":" + old_path).c_str(), 1);
  }
  ~FakeScontrol() { ::setenv("PATH", old_path.c_str(), 1); }
  std::string args() const {
    std::ifstream in(dir / "args");
    std::string line;
    std::getline(in, line);
    return line;
  }
};

}  // namespace

TEST_CASE("the requeue runs scontrol requeue on rank 0 under Slurm and reports a failure") {
  using trainhook::distributed::requeue_slurm_job;
  LaunchEnv env;
  CHECK_FALSE(requeue_slurm_job(env, 0).requeued);  // no SLURM_JOB_ID
  CHECK(contains(requeue_slurm_job(env, 0).message, "SLURM_JOB_ID is not set"));
  env.slurm_job_id = "4242";
  {
    FakeScontrol ok(0);
    const auto out = requeue_slurm_job(env, 0);
    CHECK(out.requeued);
    CHECK(ok.args() == "requeue 4242");
    CHECK(contains(out.message, "requeued Slurm job 4242"));
  }
  {
    FakeScontrol other(0);
    const auto out = requeue_slurm_job(env, 1);  // rank 1 leaves it to rank 0
    CHECK(out.requeued);
    CHECK(other.args().empty());
  }
  {
    FakeScontrol refused(1);
    const auto out = requeue_slurm_job(env, 0);
    CHECK_FALSE(out.requeued);
    CHECK(contains(out.message, "`scontrol requeue 4242` failed (exit status 1"));
  }
  const char* p = std::getenv("PATH");
  const std::string saved = p ? p : "";
  ::setenv("PATH", "/nonexistent", 1);
  const auto missing = requeue_slurm_job(env, 0);
  ::setenv("PATH", saved.c_str(), 1);
  CHECK_FALSE(missing.requeued);
  CHECK(contains(missing.message, "scontrol is not on PATH"));
}
