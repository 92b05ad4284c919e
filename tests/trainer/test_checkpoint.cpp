// Checkpoints: contents, atomic writes under an injected crash, rotation that
// keeps the best, best model at end, and bit-identical resume (stateful
// callbacks and data order included).
#include "trainer_test_support.hpp"

#include <trainhook/callbacks/trainer_state_io.hpp>
#include <trainhook/checkpoint/checkpoint_dirs.hpp>
#include <trainhook/checkpoint/checkpoint_io.hpp>
#include <trainhook/checkpoint/checkpoint_manifest.hpp>
#include <trainhook/trainer/eval_prediction.hpp>

#include <doctest/doctest.h>

#include <fstream>

using namespace trainhook;
using namespace trainhook::test;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> checkpoint_names(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& p : sorted_checkpoints(dir)) names.push_back(p.filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// A run of max_steps that saves every save_steps.
TrainingArguments saving_args(const std::string& out, int64_t max_steps, double save_steps) {
  auto a = small_args(out);
  a.max_steps = max_steps;
  a.save_strategy = trainhook::SaveStrategy::steps;
  a.save_steps = save_steps;
  return a;
}

// Resume scenario: 24 samples / batch 4 = 6 batches, accumulation 2 -> 3
// optimizer steps per epoch; 8 steps in all, so step 4 is inside epoch 2.
TrainingArguments resume_args(const std::string& out) {
  auto a = saving_args(out, 8, 4);
  a.gradient_accumulation_steps = 2;
  a.warmup_steps = 2;
  a.logging_steps = 1;
  return a;
}

}  // namespace

TEST_CASE("a checkpoint holds every part and a complete trainer state") {
  TempDir dir("trainhook-ckpt-contents");
  auto args = saving_args(dir.path.string(), 2, 2);
  Trainer trainer(tiny_model(1), args, synthetic_data(8), nullptr, plugin_free());
  trainer.train();
  const fs::path ckpt = dir.path / "checkpoint-2";
  for (const char* f :
       {kModelFile, kOptimizerFile, kSchedulerFile, kRngStateFile, kTrainerStateFile, kTrainingArgsFile}) {
    CAPTURE(f);
    CHECK(fs::exists(ckpt / f));
  }
  const auto state = load_trainer_state(ckpt / kTrainerStateFile);
  CHECK(state.global_step == 2);
  CHECK(state.max_steps == 2);
  CHECK(state.stateful_callbacks.contains("TrainerControl"));
  CHECK_FALSE(fs::exists(dir.path / "tmp-checkpoint-2"));
}

TEST_CASE("a crash in the middle of a save leaves the previous checkpoint usable") {
  TempDir dir("trainhook-ckpt-crash");
  auto args = saving_args(dir.path.string(), 4, 2);
  auto options = plugin_free();
  options.on_checkpoint_file = [](const fs::path& file) {
    if (file.parent_path().filename() == "tmp-checkpoint-4" && file.filename() == kOptimizerFile) {
      throw std::runtime_error("injected crash while writing " + file.string());
    }
  };
  {
    Trainer trainer(tiny_model(2), args, synthetic_data(16), nullptr, std::move(options));
    CHECK_THROWS_WITH_AS(trainer.train(), doctest::Contains("injected crash"), std::runtime_error);
  }
  CHECK(checkpoint_names(dir.path) == std::vector<std::string>{"checkpoint-2"});
  CHECK_FALSE(fs::exists(dir.path / "checkpoint-4"));
  CHECK_FALSE(fs::exists(dir.path / "tmp-checkpoint-4"));
  REQUIRE(latest_checkpoint(dir.path) == dir.path / "checkpoint-2");

  // The surviving checkpoint resumes to the end.
  Trainer resumed(tiny_model(2), args, synthetic_data(16), nullptr, plugin_free());
  const auto out = resumed.train(std::string("true"));
  CHECK(out.global_step == 4);
  CHECK(checkpoint_names(dir.path) == std::vector<std::string>{"checkpoint-2", "checkpoint-4"});
}

TEST_CASE("save_total_limit rotates old checkpoints but keeps the best") {
  TempDir dir("trainhook-ckpt-rotate");
  auto args = saving_args(dir.path.string(), 6, 1);
  args.eval_strategy = trainhook::IntervalStrategy::steps;
  args.eval_steps = 1;
  args.save_total_limit = 2;
  args.metric_for_best_model = "score";
  auto options = plugin_free();
  auto calls = std::make_shared<int>(0);
  // The evaluation at step 2 is the best of the run.
  options.compute_metrics = [calls](const EvalPrediction&) {
    return Metrics{{"score", ++*calls == 2 ? 1.0 : 0.1 * *calls / 10.0}};
  };
  Trainer trainer(tiny_model(3), args, synthetic_data(8), synthetic_data(8, 5), std::move(options));
  trainer.train();
  CHECK(trainer.state().best_global_step == 2);
  CHECK(*trainer.state().best_model_checkpoint == (dir.path / "checkpoint-2").string());
  CHECK(checkpoint_names(dir.path) == std::vector<std::string>{"checkpoint-2", "checkpoint-6"});
}

TEST_CASE("load_best_model_at_end restores the weights of the best checkpoint") {
  TempDir dir("trainhook-ckpt-best");
  auto args = saving_args(dir.path.string(), 4, 1);
  args.eval_strategy = trainhook::IntervalStrategy::steps;
  args.eval_steps = 1;
  args.load_best_model_at_end = true;
  args.metric_for_best_model = "score";
  auto options = plugin_free();
  auto calls = std::make_shared<int>(0);
  options.compute_metrics = [calls](const EvalPrediction&) {
    return Metrics{{"score", ++*calls == 3 ? 1.0 : 0.0}};
  };
  auto model = tiny_model(4);
  Trainer trainer(model, args, synthetic_data(16), synthetic_data(8, 5), std::move(options));
  trainer.train();
  REQUIRE(trainer.state().best_model_checkpoint);
  CHECK(*trainer.state().best_model_checkpoint == (dir.path / "checkpoint-3").string());
  auto expected = tiny_model(99);
  load_model_weights(expected->module(), dir.path / "checkpoint-3" / kModelFile);
  const auto got = parameters_of(*model);
  const auto want = parameters_of(*expected);
  for (size_t i = 0; i < got.size(); ++i) CHECK(torch::equal(got[i], want[i]));
  // And they are not the last step's weights.
  auto last = tiny_model(99);
  load_model_weights(last->module(), dir.path / "checkpoint-4" / kModelFile);
  bool differs = false;
  for (size_t i = 0; i < got.size(); ++i) differs = differs || !torch::equal(got[i], parameters_of(*last)[i]);
  CHECK(differs);
}

TEST_CASE("N steps equal N/2 steps plus a resume for N/2, bit for bit") {
  TempDir full_dir("trainhook-ckpt-resume-full");
  TempDir half_dir("trainhook-ckpt-resume-half");
  const double dropout = 0.25;  // the RNG state must be restored too

  auto full_model = tiny_model(21, dropout);
  std::vector<NamedCallback> full_cbs;
  full_cbs.push_back(counting_callback());
  Trainer full(full_model, resume_args(full_dir.path.string()), synthetic_data(24), nullptr,
               plugin_free(std::move(full_cbs)));
  full.train();

  {
    std::vector<Recorded> events;
    std::vector<NamedCallback> cbs;
    cbs.push_back(recording_callback(&events, 4));  // stop after step 4 (saved)
    cbs.push_back(counting_callback());
    Trainer first(tiny_model(21, dropout), resume_args(half_dir.path.string()), synthetic_data(24), nullptr,
                  plugin_free(std::move(cbs)));
    CHECK(first.train().global_step == 4);
  }
  REQUIRE(fs::exists(half_dir.path / "checkpoint-4" / kTrainerStateFile));

  int64_t restored_count = -1;
  auto resumed_model = tiny_model(77, dropout);  // other initial weights: all must come from the checkpoint
  std::vector<Recorded> events;
  std::vector<NamedCallback> cbs;
  cbs.push_back(recording_callback(&events));
  cbs.push_back(counting_callback(&restored_count));
  auto args = resume_args(half_dir.path.string());
  args.resume_from_checkpoint = (half_dir.path / "checkpoint-4").string();
  Trainer second(resumed_model, args, synthetic_data(24), nullptr, plugin_free(std::move(cbs)));
  const auto out = second.train();
  CHECK(out.global_step == 8);
  CHECK(restored_count == 4);
  // Step 5 starts with the second window of epoch 2 (2 of its 6 batches skipped).
  REQUIRE(events.size() > 3);
  CHECK(events[1].event == "on_train_begin");
  CHECK(events[2].event == "on_epoch_begin");
  CHECK(second.state().epoch == doctest::Approx(full.state().epoch));

  const auto a = parameters_of(*full_model);
  const auto b = parameters_of(*resumed_model);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK(torch::equal(a[i], b[i]));

  // The logged training losses of steps 5..8 match too.
  auto losses_from = [](const TrainerState& s, int64_t first_step) {
    std::vector<double> l;
    for (const auto& e : s.log_history) {
      if (e.contains("loss") && e["step"].get<int64_t>() >= first_step) l.push_back(e["loss"].get<double>());
    }
    return l;
  };
  CHECK(losses_from(full.state(), 5) == losses_from(second.state(), 5));
}

TEST_CASE("resume_from_checkpoint errors name the folder") {
  TempDir dir("trainhook-ckpt-resume-errors");
  auto args = small_args(dir.path.string());
  args.max_steps = 1;
  Trainer trainer(tiny_model(5), args, synthetic_data(8), nullptr, plugin_free());
  CHECK_THROWS_WITH_AS(trainer.train(std::string("true")), doctest::Contains("no complete checkpoint"),
                       std::runtime_error);
  fs::create_directories(dir.path / "checkpoint-9");
  CHECK_THROWS_WITH_AS(trainer.train((dir.path / "checkpoint-9").string()),
                       doctest::Contains("has no trainer_state.json"), std::runtime_error);
}

TEST_CASE("a bad scheduler.json in a checkpoint without a manifest is named, not half-read") {
  TempDir dir("trainhook-ckpt-bad-scheduler");
  auto args = saving_args(dir.path.string(), 2, 2);
  Trainer(tiny_model(6), args, synthetic_data(8), nullptr, plugin_free()).train();
  const fs::path ckpt = dir.path / "checkpoint-2";
  fs::remove(ckpt / trainhook::kCheckpointManifestFile);  // as written before manifests existed
  std::ofstream(ckpt / kSchedulerFile) << R"({"last_epoch": 2, "last_epoch": 0})";
  args.max_steps = 4;
  Trainer resumed(tiny_model(6), args, synthetic_data(8), nullptr, plugin_free());
  CHECK_THROWS_WITH_AS(resumed.train(ckpt.string()),
                       doctest::Contains(((ckpt / kSchedulerFile).string() + ":1: duplicate key").c_str()),
                       std::runtime_error);
}
