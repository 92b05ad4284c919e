// Where the time of a data-parallel step goes: two ranks (this program forks
// itself; Gloo and the store on 127.0.0.1) train bench_ddp.py's MLP
// (64-1024-1024-10, batch 64 per rank, AdamW, one thread per process) with the
// trainer's pieces (ProcessGroup, GradientReducer), and time each phase of a
// step, once with the all-reduces through Gloo (TRAINHOOK_DDP_SHM=0) and once
// through shared memory (the default on one machine). Also: each collective
// alone (the TrainerControl flags, the logged loss, each gradient bucket), the
// copies the reducer made before its gradients lived in their buckets, and a
// local step with no communication run by both processes at once (what the
// step costs without data parallelism on the same two busy cores).
//
// usage: bench_ddp_breakdown [--steps N] [--repeats R]
// Prints medians in microseconds or milliseconds, rank 0's view.
#include <free_port.hpp>

#include <trainhook/distributed/gradient_reducer.hpp>
#include <trainhook/distributed/launch_env.hpp>
#include <trainhook/distributed/process_group.hpp>

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/torch.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace td = trainhook::distributed;
using Clock = std::chrono::steady_clock;

namespace {

double us_since(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Model {
  torch::nn::Sequential net;
  std::vector<torch::Tensor> params;
  torch::Tensor x, y;
  explicit Model(int rank)
      : net(torch::nn::Linear(64, 1024), torch::nn::ReLU(), torch::nn::Linear(1024, 1024), torch::nn::ReLU(),
            torch::nn::Linear(1024, 10)) {
    torch::manual_seed(rank + 1);
    params = net->parameters();
    x = torch::rand({64, 64});
    y = torch::randint(0, 10, {64}, torch::kLong);
  }
};

// The median time of `body` in microseconds.
double time_us(int reps, const std::function<void()>& body) {
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto start = Clock::now();
    body();
    t.push_back(us_since(start));
  }
  return median(t);
}

void report(int rank, const std::string& line) {
  if (rank == 0) std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, v);
  return buf;
}

void run_transport(int rank, uint16_t port, bool shm, int steps) {
  if (!shm)
    ::setenv("TRAINHOOK_DDP_SHM", "0", 1);
  else
    ::unsetenv("TRAINHOOK_DDP_SHM");
  td::LaunchEnv env;
  env.rank = rank;
  env.world_size = 2;
  env.local_rank = rank;
  env.local_world_size = 2;
  env.master_addr = "127.0.0.1";
  env.master_port = port;
  auto group = td::ProcessGroup::create(env, trainhook::DdpBackend::gloo, std::chrono::seconds(120));
  const std::string name = shm ? "shared memory" : "Gloo";
  Model m(rank);
  torch::optim::AdamW opt(m.params, torch::optim::AdamWOptions(5e-5).weight_decay(0));

  // Each collective alone.
  const int reps = 200;
  auto flags = torch::zeros({5}, torch::kInt);
  auto loss = torch::zeros({1}, torch::kDouble);
  std::vector<torch::Tensor> one;
  auto all_reduce_max = [&](torch::Tensor& t) {
    one = {t};
    group->all_reduce_max(one, "bench");
  };
  auto all_reduce_sum = [&](torch::Tensor& t) {
    one = {t};
    group->all_reduce_sum(one, "bench");
  };
  group->barrier("bench");
  report(rank, "== all-reduces through " + name + " ==");
  report(rank, "  TrainerControl flags (5 x int32): " +
                   fmt("%.1f", time_us(reps, [&] { all_reduce_max(flags); })) + " us");
  report(rank,
         "  logged loss (1 x double): " + fmt("%.1f", time_us(reps, [&] { all_reduce_sum(loss); })) + " us");
  std::vector<int64_t> sizes;
  {
    td::GradientReducer probe(group, m.params);
    sizes = probe.bucket_bytes();
  }
  for (size_t b = 0; b < sizes.size(); ++b) {
    auto flat = torch::zeros({sizes[b] / 4});
    group->barrier("bench");
    report(rank, "  gradient bucket " + std::to_string(b) + " (" + std::to_string(sizes[b]) +
                     " bytes): " + fmt("%.1f", time_us(reps / 4, [&] { all_reduce_sum(flat); })) + " us");
  }

  // Training steps, each phase timed.
  for (const bool overlap : {true, false}) {
    td::GradientReducer reducer(group, m.params, 25LL * 1024 * 1024, overlap);
    Clock::time_point ready_w2;
    // When the hidden layer's weight gradient is ready (bucket 0 complete):
    // what backward has left after it is all an overlap can hide.
    auto acc = torch::autograd::impl::grad_accumulator(m.params[2]);
    const auto hook = acc->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
        [&](const torch::autograd::variable_list& out, const torch::autograd::variable_list&) {
          ready_w2 = Clock::now();
          return out;
        }));
    std::map<std::string, std::vector<double>> t;
    group->barrier("bench");
    for (int s = 0; s < steps; ++s) {
      auto t0 = Clock::now();
      auto l = torch::nn::functional::cross_entropy(m.net->forward(m.x), m.y);
      t["forward"].push_back(us_since(t0));
      auto t1 = Clock::now();
      reducer.arm(true);
      l.backward();
      const auto end_backward = Clock::now();
      t["backward"].push_back(us_since(t1));
      t["backward left after bucket 0 is ready"].push_back(
          std::chrono::duration<double, std::micro>(end_backward - ready_w2).count());
      auto t2 = Clock::now();
      reducer.finish();
      t["wait for the gradient all-reduces, divide"].push_back(us_since(t2));
      auto t3 = Clock::now();
      l.item<double>();
      torch::nn::utils::clip_grad_norm_(m.params, 1.0);
      opt.step();
      opt.zero_grad();
      t["optimizer (clip, AdamW, zero_grad)"].push_back(us_since(t3));
      auto t4 = Clock::now();
      all_reduce_max(flags);
      t["TrainerControl agreement"].push_back(us_since(t4));
      t["step"].push_back(us_since(t0));
    }
    acc->del_post_hook(hook);
    report(rank, std::string("== steps through ") + name + ", all-reduce " +
                     (overlap ? "overlapping backward" : "after backward") + " (medians) ==");
    for (const auto& [k, v] : t) report(rank, "  " + k + ": " + fmt("%.3f", median(v) / 1000) + " ms");
  }
  group->barrier("bench end");
}

// Both processes at once, no communication: a step's compute on the same busy cores.
void run_local(int rank, int steps) {
  Model m(rank);
  torch::optim::AdamW opt(m.params, torch::optim::AdamWOptions(5e-5).weight_decay(0));
  std::vector<double> t;
  for (int s = 0; s < steps; ++s) {
    auto t0 = Clock::now();
    auto l = torch::nn::functional::cross_entropy(m.net->forward(m.x), m.y);
    l.backward();
    l.item<double>();
    torch::nn::utils::clip_grad_norm_(m.params, 1.0);
    opt.step();
    opt.zero_grad();
    t.push_back(us_since(t0));
  }
  report(rank, "== no communication, both processes at once ==");
  report(rank, "  step: " + fmt("%.3f", median(t) / 1000) + " ms");
  // What the reducer copied per step before .grad lived in its bucket: the
  // gradient into the bucket (added to what .grad held), the average back.
  int64_t n = 0;
  for (const auto& p : m.params) n += p.numel();
  auto bucket = torch::zeros({n});
  auto grad = torch::rand({n});
  auto held = torch::zeros({n});
  report(rank, "  copies the bucket views removed per step (gradient into bucket, average out; " +
                   std::to_string(n * 4) + " bytes): " +
                   fmt("%.1f", time_us(50,
                                       [&] {
                                         torch::add_out(bucket, held, grad);
                                         held.copy_(bucket);
                                       })) +
                   " us");
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 200;
  int repeats = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--steps") == 0)
      steps = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--repeats") == 0)
      repeats = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: bench_ddp_breakdown [--steps N] [--repeats R]\n");
      return 2;
    }
  }
  std::vector<uint16_t> ports;
  for (int i = 0; i < 2 * repeats; ++i) ports.push_back(trainhook::testkit::free_port());
  std::fflush(stdout);
  const pid_t child = ::fork();
  if (child < 0) return 1;
  const int rank = child == 0 ? 1 : 0;
  int rc = 0;
  try {
    torch::set_num_threads(1);
    for (int r = 0; r < repeats; ++r) {
      run_local(rank, steps);
      run_transport(rank, ports[2 * r], false, steps);
      run_transport(rank, ports[2 * r + 1], true, steps);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    rc = 1;
  }
  if (child == 0) std::_Exit(rc);
  int status = 0;
  ::waitpid(child, &status, 0);
  return rc != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ? 1 : 0;
}
