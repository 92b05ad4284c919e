// Resuming a checkpoint of another run: found automatically it is
// refused listing the differences and the two ways on; given by path the
// differences come back for a warning.
#include <trainhook/checkpoint/resume_compatibility.hpp>

#include <trainhook/args/arguments_json.hpp>

#include <trainhook/checkpoint/checkpoint_dirs.hpp>

#include <doctest/doctest.h>
#include <temp_dir.hpp>

#include <unistd.h>
#include <fstream>

using namespace trainhook;
namespace fs = std::filesystem;
using trainhook::testkit::TempDir;

TEST_CASE("the same arguments resume, other run-shaping arguments are listed") {
  TempDir d("th_resume");
  TrainingArguments saved;
  saved.max_steps = 360;
  saved.seed = 1;
  std::ofstream(d.path / kTrainingArgsFile) << to_json(saved).dump(2);
  CHECK(resume_argument_differences(d.path, to_json(saved)).empty());

  TrainingArguments now = saved;
  now.max_steps = 180;
  now.seed = 2;
  now.run_name = "renamed";  // not a run-shaping argument
  now.logging_steps = 7;
  const auto diffs = resume_argument_differences(d.path, to_json(now));
  CHECK(diffs == std::vector<std::string>{"max_steps: 360 in the checkpoint, 180 now",
                                          "seed: 1 in the checkpoint, 2 now"});

  CHECK_THROWS_WITH_AS(
      check_resume_compatibility(d.path, to_json(now), true),
      doctest::Contains("it was written by a run with other arguments (max_steps: 360 in the "
                        "checkpoint, 180 now; seed: 1 in the checkpoint, 2 now)"),
      std::runtime_error);
  CHECK_THROWS_WITH_AS(check_resume_compatibility(d.path, to_json(now), true),
                       doctest::Contains(("pass --resume_from_checkpoint " + d.path.string() +
                                          ", or to train from scratch pass --overwrite_output_dir")
                                             .c_str()),
                       std::runtime_error);
  CHECK(check_resume_compatibility(d.path, to_json(now), false) == diffs);
}

TEST_CASE("adamw_torch and adamw_torch_fused resume each other, another optimizer is listed") {
  TempDir d("th_resume");
  TrainingArguments saved;
  saved.optim = OptimizerName::adamw_torch;  // a checkpoint from before the default was the fused kernel
  std::ofstream(d.path / kTrainingArgsFile) << to_json(saved).dump(2);
  TrainingArguments now = saved;
  now.optim = OptimizerName::adamw_torch_fused;
  CHECK(check_resume_compatibility(d.path, to_json(now), true).empty());
  now.optim = OptimizerName::sgd;
  CHECK(resume_argument_differences(d.path, to_json(now)) ==
        std::vector<std::string>{"optim: \"adamw_torch\" in the checkpoint, \"sgd\" now"});
}

TEST_CASE("a checkpoint without training_args.json has nothing to compare") {
  TempDir d("th_resume");
  TrainingArguments now;
  CHECK(check_resume_compatibility(d.path, to_json(now), true).empty());
}

TEST_CASE(
    "a checkpoint's config.json against the model asked for: each differing argument named with its flag") {
  TempDir d("th_resume");
  const std::string saved = R"({"model":"mlp","hidden_size":16,"num_layers":2,"dropout":0.0})";
  std::ofstream(d.path / kModelConfigFile) << saved;
  CHECK(model_config_differences(d.path, saved).empty());
  CHECK(model_config_differences(d.path, R"({"model":"mlp","hidden_size":16.0,"num_layers":2,"dropout":0})")
            .empty());  // 16 and 16.0 are one number
  const auto diff =
      model_config_differences(d.path, R"({"model":"mlp","hidden_size":32,"num_layers":2,"dropout":0.1})");
  REQUIRE(diff.size() == 2);
  CHECK(diff[0] == "dropout: 0.0 saved, 0.1 now (--dropout)");
  CHECK(diff[1] == "hidden_size: 16 saved, 32 now (--hidden_size)");
  CHECK_THROWS_WITH_AS(check_model_config(d.path, R"({"model":"cnn","hidden_size":16})"),
                       doctest::Contains("holds a model built with other arguments (model: \"mlp\" saved, "
                                         "\"cnn\" now (--model))"),
                       std::runtime_error);
  // Nothing to compare: no config.json (an older checkpoint), or no config given (an embedding program).
  CHECK(model_config_differences(d.path, "").empty());
  TempDir empty("th_resume");
  CHECK(model_config_differences(empty.path, saved).empty());
  // A damaged config.json is an error naming it.
  std::ofstream(d.path / kModelConfigFile, std::ios::trunc) << "[1,";
  CHECK_THROWS_WITH_AS(model_config_differences(d.path, saved), doctest::Contains("config.json"),
                       std::runtime_error);
}
