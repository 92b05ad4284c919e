// Prints what trainhook computes, as JSON, for tests/trainer/hf_reference_check.py
// to compare with transformers 4.47.1 / torch.optim / torch.nn.functional of the
// HF venv (python3-torch 1.13):
//   hf_reference_tool lr <type> <learning_rate> <warmup_steps> <max_steps> <kwargs JSON> <steps>
//       the learning rate after 0..steps optimizer steps
//   hf_reference_tool lr-cases <file>
//       the same for each [type, learning_rate, warmup, max_steps, kwargs, steps] of
//       a JSON array in <file> (one process for many cases: LibTorch loads once)
//   hf_reference_tool plateau-cases <file>
//       reduce_lr_on_plateau: for each [learning_rate, kwargs, [metric, ...]] of a
//       JSON array in <file>, the learning rate after each metric is fed (a
//       metric may be "nan", "inf" or "-inf")
//   hf_reference_tool optim <optim> <optim_args or -> <learning_rate> <weight_decay> <steps>
//       a Linear(4, 3) trained <steps> steps on batches drawn here: the batches,
//       the initial and the final weights
//   hf_reference_tool smooth <label_smoothing_factor>
//       logits, labels and our label-smoothed loss, for [N, C] and [B, S, C]
// A bad input prints the error on stderr and exits 2 (the error tests read it).
#include <trainhook/optim/lr_schedule.hpp>
#include <trainhook/optim/optimizer_factory.hpp>
#include <trainhook/trainer/training_loss.hpp>

#include <torch/torch.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using trainhook::parse_enum;

nlohmann::json tensor_json(const torch::Tensor& t) {
  const auto c = t.detach().to(torch::kDouble).contiguous();
  std::vector<double> flat(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
  return {{"shape", c.sizes().vec()}, {"values", flat}};
}

nlohmann::json lr_values(const std::string& name, double lr, int64_t warmup, int64_t total,
                         const nlohmann::json& kwargs, int64_t steps) {
  const auto type = parse_enum<trainhook::SchedulerType>(name);
  if (!type) throw std::invalid_argument("unknown lr_scheduler_type " + name);
  trainhook::LrScheduler s(*type, lr, warmup, total, kwargs);
  nlohmann::json lrs = nlohmann::json::array();
  for (int64_t i = 0; i <= steps; ++i, s.step()) lrs.push_back(s.lr());
  return lrs;
}

int lr_command(const std::vector<std::string>& a) {
  if (a.size() != 6)
    throw std::invalid_argument("usage: lr <type> <lr> <warmup> <max_steps> <kwargs> <steps>");
  std::cout << lr_values(a[0], std::stod(a[1]), std::stoll(a[2]), std::stoll(a[3]),
                         nlohmann::json::parse(a[4]), std::stoll(a[5]))
                   .dump()
            << "\n";
  return 0;
}

int lr_cases_command(const std::vector<std::string>& a) {
  if (a.size() != 1) throw std::invalid_argument("usage: lr-cases <file>");
  std::ifstream in(a[0]);
  const auto cases = nlohmann::json::parse(in);
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : cases)
    out.push_back(lr_values(c[0].get<std::string>(), c[1].get<double>(), c[2].get<int64_t>(),
                            c[3].get<int64_t>(), c[4], c[5].get<int64_t>()));
  std::cout << out.dump() << "\n";
  return 0;
}

int plateau_cases_command(const std::vector<std::string>& a) {
  if (a.size() != 1) throw std::invalid_argument("usage: plateau-cases <file>");
  std::ifstream in(a[0]);
  const auto cases = nlohmann::json::parse(in);
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : cases) {
    trainhook::LrScheduler s(trainhook::SchedulerType::reduce_lr_on_plateau, c[0].get<double>(), 0, 0, c[1]);
    nlohmann::json lrs = nlohmann::json::array();
    for (const auto& v : c[2]) {
      s.step_metric(v.is_number() ? v.get<double>() : std::stod(v.get<std::string>()));
      lrs.push_back(s.lr());
    }
    out.push_back(lrs);
  }
  std::cout << out.dump() << "\n";
  return 0;
}

int optim_command(const std::vector<std::string>& a) {
  if (a.size() != 5)
    throw std::invalid_argument("usage: optim <optim> <optim_args|-> <lr> <weight_decay> <steps>");
  trainhook::OptimizerOptions options;
  const auto name = parse_enum<trainhook::OptimizerName>(a[0]);
  if (!name) throw std::invalid_argument("unknown optim " + a[0]);
  options.optim(*name).learning_rate(std::stod(a[2])).weight_decay(std::stod(a[3]));
  if (a[1] != "-") options.optim_args(a[1]);
  torch::manual_seed(7);
  torch::nn::Linear model(4, 3);
  nlohmann::json out;
  out["initial"] = {{"weight", tensor_json(model->weight)}, {"bias", tensor_json(model->bias)}};
  auto optimizer = trainhook::make_optimizer(options, *model);
  nlohmann::json batches = nlohmann::json::array();
  for (int64_t step = 0, n = std::stoll(a[4]); step < n; ++step) {
    const auto x = torch::randn({5, 4});
    const auto y = torch::randint(0, 3, {5}, torch::kLong);
    batches.push_back({{"x", tensor_json(x)}, {"y", tensor_json(y)}});
    optimizer->zero_grad();
    torch::nn::functional::cross_entropy(model->forward(x), y).backward();
    optimizer->step();
  }
  out["batches"] = batches;
  out["final"] = {{"weight", tensor_json(model->weight)}, {"bias", tensor_json(model->bias)}};
  std::cout << out.dump() << "\n";
  return 0;
}

int smooth_command(const std::vector<std::string>& a) {
  if (a.size() != 1) throw std::invalid_argument("usage: smooth <factor>");
  const double f = std::stod(a[0]);
  torch::manual_seed(3);
  nlohmann::json out = nlohmann::json::array();
  for (const auto& shape : std::vector<std::vector<int64_t>>{{6, 5}, {2, 4, 7}}) {
    const auto logits = torch::randn(shape) * 3.0;
    auto label_shape = shape;
    label_shape.pop_back();
    auto labels = torch::randint(0, shape.back(), label_shape, torch::kLong);
    labels.view({-1})[1].fill_(-100);  // HF's padding label is left out of the mean
    const auto loss = trainhook::label_smoothed_cross_entropy(logits, labels, f);
    out.push_back(
        {{"logits", tensor_json(logits)}, {"labels", tensor_json(labels)}, {"loss", loss.item<double>()}});
  }
  std::cout << out.dump() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc < 2) throw std::invalid_argument("usage: hf_reference_tool lr|optim|smooth ...");
    const std::string command = argv[1];
    const std::vector<std::string> rest(argv + 2, argv + argc);
    if (command == "lr") return lr_command(rest);
    if (command == "lr-cases") return lr_cases_command(rest);
    if (command == "plateau-cases") return plateau_cases_command(rest);
    if (command == "optim") return optim_command(rest);
    if (command == "smooth") return smooth_command(rest);
    throw std::invalid_argument("unknown command " + command);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
}
