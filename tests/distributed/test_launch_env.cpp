// The launch contract read from the environment (torchrun's variables, Slurm's
// as the fallback) and its errors, through an injected getenv.
#include <trainhook/distributed/launch_env.hpp>
#include <trainhook/args/training_arguments.hpp>

#include <doctest/doctest.h>

#include <map>
#include <stdexcept>
#include <string>

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
