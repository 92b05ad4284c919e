// Helpers shared by the LibTorch trainer tests: a tiny classifier, synthetic
// data, a recording callback and a temporary output folder.
#pragma once

#include <trainhook/callbacks/callback_handler.hpp>
#include <trainhook/data/tensor_dataset.hpp>
#include <trainhook/models/model.hpp>
#include <trainhook/trainer/trainer.hpp>

#include <temp_dir.hpp>

#include <torch/torch.h>

#include <ATen/CPUGeneratorImpl.h>

#include <filesystem>
#include <string>
#include <vector>

namespace trainhook::test {

// A two-layer classifier with optional dropout (so RNG state matters).
inline std::shared_ptr<Model> tiny_model(int64_t seed, double dropout = 0.0, int64_t in = 4,
                                         int64_t classes = 3) {
  torch::manual_seed(static_cast<uint64_t>(seed));
  torch::nn::Sequential net(torch::nn::Linear(in, 16), torch::nn::ReLU(), torch::nn::Dropout(dropout),
                            torch::nn::Linear(16, classes));
  return make_model(net, [](const torch::Tensor& out, const torch::Tensor& labels) {
    return torch::nn::functional::cross_entropy(out, labels);
  });
}

// n samples of `in` features; the label is a function of the features.
inline std::shared_ptr<TensorDataset> synthetic_data(int64_t n, int64_t seed = 7, int64_t in = 4) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(static_cast<uint64_t>(seed));
  auto x = torch::randn({n, in}, gen);
  auto y = (x.select(1, 0) > 0).to(torch::kLong) + (x.select(1, 1) > 0.5).to(torch::kLong);
  return std::make_shared<TensorDataset>(x, y);
}

inline std::vector<torch::Tensor> parameters_of(Model& m) {
  std::vector<torch::Tensor> out;
  for (const auto& p : m.module().parameters()) out.push_back(p.detach().clone());
  return out;
}

struct Recorded {
  std::string event;
  int64_t step;
};

// Records every event with the global step; optionally stops training at a
// step. A trainhook::Callback, as an embedder writes one (see make_callback).
class RecordingCallback final : public trainhook::Callback {
 public:
  explicit RecordingCallback(std::vector<Recorded>* out, int64_t stop_at = -1)
      : out_(out), stop_at_(stop_at) {}
  void on_init_end(Event& e) override { record(e); }
  void on_train_begin(Event& e) override { record(e); }
  void on_train_end(Event& e) override { record(e); }
  void on_epoch_begin(Event& e) override { record(e); }
  void on_epoch_end(Event& e) override { record(e); }
  void on_step_begin(Event& e) override { record(e); }
  void on_substep_end(Event& e) override { record(e); }
  void on_pre_optimizer_step(Event& e) override { record(e); }
  void on_optimizer_step(Event& e) override { record(e); }
  void on_step_end(Event& e) override {
    record(e);
    if (e.state().global_step == stop_at_) e.control().should_training_stop = 1;
  }
  void on_evaluate(Event& e) override { record(e); }
  void on_predict(Event& e) override { record(e); }
  void on_prediction_step(Event& e) override { record(e); }
  void on_log(Event& e) override { record(e); }
  void on_save(Event& e) override { record(e); }

 private:
  void record(const Event& e) { out_->push_back({event_name(e.id()), e.state().global_step}); }
  std::vector<Recorded>* out_;
  int64_t stop_at_;
};

inline NamedCallback recording_callback(std::vector<Recorded>* out, int64_t stop_at = -1) {
  return make_callback<RecordingCallback>("recorder", out, stop_at);
}

// A stateful callback: counts step ends; its count survives checkpoints.
class CountingCallback final : public trainhook::Callback {
 public:
  explicit CountingCallback(int64_t* observed_after_load = nullptr) : observed_(observed_after_load) {}
  void on_step_end(Event&) override { ++count_; }
  std::string save_state() override {
    return nlohmann::json{{"args", nlohmann::json::object()}, {"attributes", {{"count", count_}}}}.dump();
  }
  void load_state(const std::string& state) override {
    count_ = nlohmann::json::parse(state).at("attributes").at("count").get<int64_t>();
    if (observed_ != nullptr) *observed_ = count_;
  }
  int64_t count() const { return count_; }

 private:
  int64_t count_ = 0;
  int64_t* observed_;
};

inline NamedCallback counting_callback(int64_t* observed_after_load = nullptr) {
  return make_callback<CountingCallback>("StepCounter", observed_after_load);
}

// The tests' output folders (testkit/temp_dir.hpp).
using trainhook::testkit::TempDir;

// Arguments for small, fast, plugin-free runs.
inline TrainingArguments small_args(const std::string& output_dir) {
  TrainingArguments a;
  a.output_dir = output_dir;
  a.per_device_train_batch_size = 4;
  a.per_device_eval_batch_size = 8;
  a.learning_rate = 1e-2;
  a.logging_steps = 1000;
  a.save_strategy = trainhook::SaveStrategy::no;
  a.report_to = {"none"};
  a.disable_tqdm = true;
  return a;
}

inline TrainerOptions plugin_free(std::vector<NamedCallback> callbacks = {}) {
  TrainerOptions o;
  o.use_plugins = false;
  o.callbacks = std::move(callbacks);
  return o;
}

}  // namespace trainhook::test
