// The HF-shaped checkpoint files through LibTorch: optimizer.pt in
// torch.optim's layout round-trips every state of AdamW, SGD, Adagrad and
// RMSprop; a mismatched model is refused naming the tensor; optimizer.pt and
// rng_state_<rank>.pth files of older checkpoints (LibTorch archives) still
// load; scheduler.pt carries the step; the Python and NumPy generator states
// of rng_state.pth are the ones random.seed / np.random.seed give. What HF's
// Trainer makes of these files: tests/trainer/hf_resume_check.py.
#include <trainhook/checkpoint/checkpoint_io.hpp>
#include <trainhook/checkpoint/hf_optimizer_file.hpp>
#include <trainhook/checkpoint/hf_rng_state_file.hpp>
#include <trainhook/checkpoint/hf_scheduler_file.hpp>
#include <trainhook/checkpoint/reproducibility.hpp>
#include <trainhook/checkpoint/torch_pickle_io.hpp>

#include <doctest/doctest.h>
#include <temp_dir.hpp>

#include <torch/torch.h>

#include <functional>

using namespace trainhook;
using trainhook::testkit::TempDir;

namespace {

struct Net : torch::nn::Module {
  Net(int64_t in, int64_t hidden) {
    fc1 = register_module("fc1", torch::nn::Linear(in, hidden));
    fc2 = register_module("fc2", torch::nn::Linear(hidden, 3));
  }
  torch::Tensor forward(const torch::Tensor& x) { return fc2->forward(torch::relu(fc1->forward(x))); }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};

// HF's two groups: weights, then biases.
template <class Options>
std::vector<torch::optim::OptimizerParamGroup> groups(Net& net, const Options& o) {
  std::vector<torch::Tensor> decay{net.fc1->weight, net.fc2->weight}, rest{net.fc1->bias, net.fc2->bias};
  auto wd = std::make_unique<Options>(o);
  wd->weight_decay(0.1);
  auto none = std::make_unique<Options>(o);
  none->weight_decay(0.0);
  std::vector<torch::optim::OptimizerParamGroup> g;
  g.emplace_back(decay, std::move(wd));
  g.emplace_back(rest, std::move(none));
  return g;
}

void train(Net& net, torch::optim::Optimizer& opt, int steps) {
  torch::manual_seed(3);
  for (int i = 0; i < steps; ++i) {
    opt.zero_grad();
    net.forward(torch::randn({8, 5})).pow(2).mean().backward();
    opt.step();
  }
}

using MakeOptimizer = std::function<std::unique_ptr<torch::optim::Optimizer>(Net&)>;

std::vector<std::pair<const char*, MakeOptimizer>> optimizers() {
  return {{"AdamW",
           [](Net& n) {
             return std::make_unique<torch::optim::AdamW>(
                 groups(n, torch::optim::AdamWOptions(1e-2).amsgrad(true)));
           }},
          {"SGD",
           [](Net& n) {
             const auto o = torch::optim::SGDOptions(1e-2).momentum(0.9);
             return std::make_unique<torch::optim::SGD>(groups(n, o), o);
           }},
          {"Adagrad",
           [](Net& n) {
             return std::make_unique<torch::optim::Adagrad>(groups(n, torch::optim::AdagradOptions(1e-2)));
           }},
          {"RMSprop", [](Net& n) {
             return std::make_unique<torch::optim::RMSprop>(
                 groups(n, torch::optim::RMSpropOptions(1e-2).momentum(0.5).centered(true)));
           }}};
}

}  // namespace

TEST_CASE("optimizer.pt in torch.optim's layout resumes every optimizer exactly") {
  for (const auto& [name, make] : optimizers()) {
    CAPTURE(name);
    TempDir dir("th_hf_optim");
    torch::manual_seed(0);
    Net a(5, 4);
    auto opt_a = make(a);
    train(a, *opt_a, 3);
    save_hf_optimizer(*opt_a, 1e-2, 1e-2, dir.path / "optimizer.pt");

    Net b(5, 4);
    {
      torch::NoGradGuard no_grad;
      for (size_t i = 0; i < a.parameters().size(); ++i) b.parameters()[i].copy_(a.parameters()[i]);
    }
    auto opt_b = make(b);
    load_hf_optimizer(*opt_b, dir.path / "optimizer.pt");
    train(a, *opt_a, 2);
    train(b, *opt_b, 2);
    for (size_t i = 0; i < a.parameters().size(); ++i)
      CHECK(torch::equal(a.parameters()[i], b.parameters()[i]));
  }
}

TEST_CASE("optimizer.pt of another model is refused naming the file and the tensor") {
  TempDir dir("th_hf_optim_bad");
  Net small(5, 4), wide(5, 6);
  auto opt_small = std::make_unique<torch::optim::AdamW>(groups(small, torch::optim::AdamWOptions(1e-2)));
  train(small, *opt_small, 1);
  save_hf_optimizer(*opt_small, 1e-2, 1e-2, dir.path / "optimizer.pt");
  auto opt_wide = std::make_unique<torch::optim::AdamW>(groups(wide, torch::optim::AdamWOptions(1e-2)));
  CHECK_THROWS_WITH_AS(
      load_hf_optimizer(*opt_wide, dir.path / "optimizer.pt"),
      doctest::Contains("optimizer.pt: state[0]'s 'exp_avg' has shape [4, 5] but the parameter has [6, 5]"),
      std::runtime_error);
  const auto sgd_options = torch::optim::SGDOptions(1e-2);
  auto sgd = std::make_unique<torch::optim::SGD>(groups(small, sgd_options), sgd_options);
  CHECK_THROWS_WITH_AS(load_hf_optimizer(*sgd, dir.path / "optimizer.pt"),
                       doctest::Contains("param_groups[0] has no 'momentum'"), std::runtime_error);
}

TEST_CASE("an optimizer.pt of an older checkpoint (a LibTorch archive) still resumes") {
  TempDir dir("th_hf_optim_old");
  torch::manual_seed(0);
  Net a(5, 4);
  auto opt = std::make_unique<torch::optim::AdamW>(groups(a, torch::optim::AdamWOptions(1e-2)));
  train(a, *opt, 2);
  torch::serialize::OutputArchive archive;
  opt->save(archive);
  save_archive_atomically(archive, dir.path / "optimizer.pt");
  CHECK(is_torchscript_archive(dir.path / "optimizer.pt"));
  save_hf_optimizer(*opt, 1e-2, 1e-2, dir.path / "hf.pt");
  CHECK_FALSE(is_torchscript_archive(dir.path / "hf.pt"));
}

TEST_CASE("scheduler.pt carries the schedule's step, and another base rate is refused") {
  TempDir dir("th_hf_sched");
  LrScheduler s(SchedulerType::linear, 1e-3, 10, 100);
  for (int i = 0; i < 37; ++i) s.step();
  save_hf_scheduler(s, 2, dir.path / "scheduler.pt");
  LrScheduler r(SchedulerType::linear, 1e-3, 10, 100);
  load_hf_scheduler(r, dir.path / "scheduler.pt");
  CHECK(r.last_step() == 37);
  CHECK(r.lr() == s.lr());
  LrScheduler other(SchedulerType::linear, 2e-3, 10, 100);
  CHECK_THROWS_WITH_AS(load_hf_scheduler(other, dir.path / "scheduler.pt"),
                       doctest::Contains("scheduler.pt: the schedule's base rate"), std::runtime_error);
}

TEST_CASE("rng_state.pth: the CPU generator, and Python's and NumPy's states of set_seed") {
  const auto py = python_seeded_mt19937(42);  // random.seed(42); random.getstate()[1]
  REQUIRE(py.size() == 625);
  CHECK(py[0] == 2147483648u);
  CHECK(py[1] == 3564348608u);
  CHECK(py[2] == 1266698288u);
  CHECK(py[623] == 3831079317u);
  CHECK(py[624] == 624u);
  CHECK(python_seeded_mt19937((uint64_t{1} << 40) + 5)[1] == 550267540u);  // a seed of two words
  const auto np = numpy_seeded_mt19937(42);  // np.random.seed(42); np.random.get_state()[1]
  CHECK(np[0] == 42u);
  CHECK(np[1] == 3107752595u);
  CHECK(np[623] == 26719530u);

  TempDir dir("th_hf_rng");
  torch::manual_seed(11);
  const torch::Tensor state = cpu_rng_state();
  const torch::Tensor expected = torch::rand({4});
  save_hf_rng_state(state, 42, dir.path / "rng_state_0.pth");
  torch::manual_seed(99);
  load_rng_state(dir.path / "rng_state_0.pth");
  CHECK(torch::equal(torch::rand({4}), expected));
  // an HF checkpoint of one process has rng_state.pth where ours has rng_state.pt
  save_hf_rng_state(state, 42, dir.path / kHfRngStateFile);
  torch::manual_seed(99);
  load_rng_state(dir.path / kRngStateFile);
  CHECK(torch::equal(torch::rand({4}), expected));
  // rng_state_<rank>.pth of older checkpoints: LibTorch archives
  torch::serialize::OutputArchive archive;
  archive.write("cpu_rng_state", state);
  save_archive_atomically(archive, dir.path / "rng_state_1.pth");
  torch::manual_seed(99);
  load_rng_state(dir.path / "rng_state_1.pth");
  CHECK(torch::equal(torch::rand({4}), expected));
}
