// What the in-process trainer benchmarks share (bench/trainer_overhead,
// bench/model_access, bench/all_plugins): the bench MLP and data set, the base
// training arguments, a stopwatch callback that times the steps from inside
// the run, and the median of the repeats. Benchmarks only; never in the library.
#pragma once

#include <trainhook/args/training_arguments.hpp>
#include <trainhook/common/allocator_policy.hpp>
#include <trainhook/data/tensor_dataset.hpp>
#include <trainhook/models/mlp.hpp>
#include <trainhook/plugin.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace trainhook::bench {

// Each benchmark's main() first calls apply_allocator_policy()
// (common/allocator_policy.hpp), as the `trainhook` program does. Without it,
// glibc mmaps and page-faults every activation buffer over 128 KiB until
// something frees a large block, so one configuration of an interleaved pair
// could run with the raised threshold and the other without it.

using Clock = std::chrono::steady_clock;
constexpr int64_t kFeatures = 64, kClasses = 10, kBatch = 64, kSamples = 4096;

// A 64-hidden-hidden-10 MLP with the same weights every call (seeded).
std::shared_ptr<MlpModel> make_mlp(int64_t hidden);
// kSamples random 64-feature rows with labels in [0, 10), the same every call (seeded).
std::shared_ptr<TensorDataset> make_data();
// max_steps steps of batch kBatch at learning rate 1e-3, no checkpoints, no
// integrations, into output_dir.
TrainingArguments bench_args(int64_t max_steps, const std::string& output_dir);
// <temporary directory>/<name>: the output_dir of a benchmark's runs (each run overwrites it).
std::string temp_output_dir(const std::string& name);

// Times train begin to train end from inside the run, so the trainer's setup
// is excluded as it is for a hand-written loop; the final log and every
// on_train_end are inside the window (part of the trainer's cost).
class Stopwatch : public trainhook::Callback {
 public:
  explicit Stopwatch(double* seconds) : seconds_(seconds) {}
  void on_train_begin(trainhook::Event&) override { start_ = Clock::now(); }
  void on_train_end(trainhook::Event&) override {
    *seconds_ = std::chrono::duration<double>(Clock::now() - start_).count();
  }

 private:
  double* seconds_;
  Clock::time_point start_;
};

// The median of the repeats (the upper one of an even count).
double median(std::vector<double> v);

}  // namespace trainhook::bench
