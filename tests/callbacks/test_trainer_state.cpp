// trainer_state.json: byte-exact HF layout, round trip, and load errors that
// name the file and the key. (hf_trainer_state_check.py checks the expected
// file itself against HF's own serialisation.)
#include <trainhook/callbacks/trainer_state_io.hpp>

#include <doctest/doctest.h>
#include <temp_dir.hpp>

#include <unistd.h>
#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace trainhook;
namespace fs = std::filesystem;
using trainhook::testkit::TempDir;
using trainhook::testkit::read_file;
using trainhook::testkit::write_file;
using nlohmann::json;

namespace {

// The state that data/trainer_state_expected.json describes.
TrainerState sample_state() {
  TrainerState s;
  s.epoch = 2.0;
  s.global_step = 20;
  s.max_steps = 30;
  s.logging_steps = 5;
  s.eval_steps = 10;
  s.save_steps = 10;
  s.train_batch_size = 8;
  s.num_train_epochs = 3;
  s.num_input_tokens_seen = 0;
  s.total_flos = 123456.0;
  s.log_history.push_back(
      json{{"loss", 0.6931}, {"grad_norm", 1.25}, {"learning_rate", 2.5e-5}, {"epoch", 0.5}, {"step", 5}});
  s.log_history.push_back(json{{"eval_loss", 0.5},
                               {"eval_accuracy", 0.75},
                               {"eval_runtime", 0.1234},
                               {"eval_samples_per_second", 810.37},
                               {"eval_steps_per_second", 16.2},
                               {"epoch", 1.0},
                               {"step", 10}});
  s.log_history.push_back(json{{"train_runtime", 1.5},
                               {"train_samples_per_second", 106.667},
                               {"train_steps_per_second", 13.333},
                               {"total_flos", 123456.0},
                               {"train_loss", 0.1 + 0.2},
                               {"epoch", 2.0},
                               {"step", 20}});
  s.best_metric = 0.5;
  s.best_global_step = 10;
  s.best_model_checkpoint = "out/checkpoint-10";
  s.trial_name = "essai-\xc3\xa9";  // non-ASCII is escaped as Python's json.dumps does
  TrainerControl c;
  c.should_save = true;
  c.should_training_stop = true;
  s.stateful_callbacks = json::object();
  s.stateful_callbacks["TrainerControl"] = control_to_stateful(c);
  s.stateful_callbacks["early_stopping"] = {
      {"args", {{"early_stopping_patience", 3}, {"early_stopping_threshold", 0.0}}},
      {"attributes", {{"early_stopping_patience_counter", 1}}}};
  // Not part of HF's JSON: must not appear in the file.
  s.process_index = 3;
  s.world_size = 4;
  s.steps_in_epoch = 10;
  return s;
}

fs::path expected_file() { return fs::path(TRAINHOOK_TEST_DATA) / "trainer_state_expected.json"; }

}  // namespace

TEST_CASE("save_trainer_state writes HF's layout byte for byte") {
  TempDir dir("th_state");
  const fs::path file = dir.path / "trainer_state.json";
  save_trainer_state(sample_state(), file);
  CHECK(read_file(file) == read_file(expected_file()));
  // No temporary file is left behind by the atomic write.
  CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);
}

TEST_CASE("a fresh state writes null for every absent optional") {
  const json j = to_json(TrainerState{});
  CHECK(j.at("best_metric").is_null());
  CHECK(j.at("best_global_step").is_null());
  CHECK(j.at("best_model_checkpoint").is_null());
  CHECK(j.at("trial_name").is_null());
  CHECK(j.at("trial_params").is_null());
  CHECK(j.at("log_history") == json::array());
  CHECK(j.at("stateful_callbacks") == json::object());
  CHECK(j.size() == 20);  // exactly HF's fields
}

TEST_CASE("fractional num_train_epochs stays a number, whole ones are written as HF's int") {
  TrainerState s;
  s.num_train_epochs = 2.5;
  CHECK(to_json(s).at("num_train_epochs").dump() == "2.5");
  s.num_train_epochs = 4;
  CHECK(to_json(s).at("num_train_epochs").dump() == "4");
}

TEST_CASE("load_trainer_state reads back what was saved") {
  const TrainerState s = load_trainer_state(expected_file());
  const TrainerState ref = sample_state();
  CHECK(s.epoch == ref.epoch);
  CHECK(s.global_step == 20);
  CHECK(s.max_steps == 30);
  CHECK(s.logging_steps == 5);
  CHECK(s.eval_steps == 10);
  CHECK(s.save_steps == 10);
  CHECK(s.train_batch_size == 8);
  CHECK(s.num_train_epochs == 3);
  CHECK(s.total_flos == 123456.0);
  CHECK(s.log_history == ref.log_history);
  CHECK(s.best_metric == ref.best_metric);
  CHECK(s.best_global_step == ref.best_global_step);
  CHECK(s.best_model_checkpoint == ref.best_model_checkpoint);
  CHECK(s.trial_name == ref.trial_name);
  CHECK(s.stateful_callbacks == ref.stateful_callbacks);
  CHECK(to_json(s) == to_json(ref));
}

TEST_CASE("an HF file from an older transformers (fewer keys) loads with defaults") {
  TempDir dir("th_state");
  const fs::path file = dir.path / "trainer_state.json";
  write_file(file, R"({"epoch": 1.0, "global_step": 4, "log_history": [{"loss": 1.0, "step": 4}],
                       "best_metric": null, "best_model_checkpoint": null, "max_steps": 4,
                       "num_train_epochs": 1, "total_flos": 10, "is_hyper_param_search": false,
                       "is_local_process_zero": true, "is_world_process_zero": true, "trial_name": null,
                       "trial_params": null})");
  const TrainerState s = load_trainer_state(file);
  CHECK(s.global_step == 4);
  CHECK_FALSE(s.best_metric.has_value());
  CHECK_FALSE(s.best_global_step.has_value());
  CHECK(s.logging_steps == 500);
  CHECK(s.stateful_callbacks == json::object());
}

TEST_CASE("load errors name the file and the key") {
  TempDir dir("th_state");
  const fs::path file = dir.path / "trainer_state.json";
  const std::string f = file.string();

  CHECK_THROWS_WITH(
      load_trainer_state(dir.path / "missing.json"),
      ((dir.path / "missing.json").string() + ": cannot be opened (missing or unreadable)").c_str());

  write_file(file, "{\"global_step\": ");
  CHECK_THROWS_WITH(load_trainer_state(file), doctest::Contains((f + ": invalid JSON").c_str()));

  write_file(file, "[1, 2]");
  CHECK_THROWS_WITH(load_trainer_state(file), (f + ": expected a JSON object, got array").c_str());

  write_file(file, R"({"global_step": "ten"})");
  CHECK_THROWS_WITH(load_trainer_state(file),
                    (f + ": key 'global_step': expected an integer, got string (\"ten\")").c_str());

  write_file(file, R"({"epoch": true})");
  CHECK_THROWS_WITH(load_trainer_state(file),
                    (f + ": key 'epoch': expected a finite number, got boolean (true)").c_str());

  write_file(file, R"({"log_history": [{"loss": 1}, 3]})");
  CHECK_THROWS_WITH(load_trainer_state(file),
                    (f + ": key 'log_history[1]': expected an object, got an integer (3)").c_str());

  write_file(file, R"({"stateful_callbacks": [1]})");
  CHECK_THROWS_WITH(
      load_trainer_state(file),
      (f + ": key 'stateful_callbacks': expected an object keyed by callback name, got array ([1])").c_str());

  write_file(file, R"({"best_model_checkpoint": 5})");
  CHECK_THROWS_WITH(
      load_trainer_state(file),
      (f + ": key 'best_model_checkpoint': expected a string or null, got an integer (5)").c_str());
}

// Every value read is range-checked (global_step -5 crashed a
// resume), nesting is bounded and duplicate keys are refused.
TEST_CASE("values out of range, deep nesting and duplicate keys are load errors naming file and key") {
  TempDir dir("th_state");
  const fs::path file = dir.path / "trainer_state.json";
  const std::string f = file.string();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"global_step": -5})", ": key 'global_step': expected a count in [0, 2^53], got an integer (-5)"},
      {R"({"max_steps": 1e300})", ": key 'max_steps': expected a count in [0, 2^53], got a number"},
      {R"({"train_batch_size": 18446744073709551615})", ": key 'train_batch_size': expected a count"},
      {R"({"logging_steps": 2.5})", ": key 'logging_steps': expected an integer, got a number (2.5)"},
      {R"({"best_global_step": -1})", ": key 'best_global_step': expected a count"},
      {R"({"epoch": -0.5})", ": key 'epoch': expected a number >= 0, got a number (-0.5)"},
      {R"({"num_train_epochs": -3})", ": key 'num_train_epochs': expected a number >= 0"},
      {R"({"total_flos": -1.0})", ": key 'total_flos': expected a number >= 0"},
      {"{\n\"global_step\": 1,\n\"global_step\": 2}", ":3: duplicate key 'global_step'"},
      {std::string(200000, '[') + std::string(200000, ']'), ":1: nested deeper than 100 levels"},
  };
  for (const auto& [text, message] : cases) {
    write_file(file, text);
    CHECK_THROWS_WITH(load_trainer_state(file), doctest::Contains((f + message).c_str()));
  }
  write_file(file, R"({"global_step": 9007199254740992, "epoch": 0, "best_metric": -2.5})");
  CHECK(load_trainer_state(file).global_step == 9007199254740992);
}

TEST_CASE("saving into a missing folder fails naming the path") {
  TempDir dir("th_state");
  const fs::path file = dir.path / "no" / "such" / "trainer_state.json";
  CHECK_THROWS_WITH(save_trainer_state(TrainerState{}, file), doctest::Contains(dir.path.string().c_str()));
}

TEST_CASE("the C mirror carries every field and borrows strings from the state") {
  TrainerState s = sample_state();
  th_state c{};
  to_c(s, c);
  CHECK(c.struct_size == TH_STATE_STRUCT_SIZE);
  CHECK(c.global_step == 20);
  CHECK(c.max_steps == 30);
  CHECK(c.logging_steps == 5);
  CHECK(c.eval_steps == 10);
  CHECK(c.save_steps == 10);
  CHECK(c.train_batch_size == 8);
  CHECK(c.num_train_epochs == 3);
  CHECK(c.total_flos == 123456.0);
  CHECK(c.has_best_metric == 1);
  CHECK(c.best_metric == 0.5);
  CHECK(c.best_global_step == 10);
  CHECK(c.best_model_checkpoint == s.best_model_checkpoint->c_str());
  CHECK(c.trial_name == s.trial_name->c_str());
  CHECK(c.is_local_process_zero == 1);
  CHECK(c.is_world_process_zero == 1);
  CHECK(c.process_index == 3);
  CHECK(c.world_size == 4);
  CHECK(c.steps_in_epoch == 10);
  s.best_metric.reset();
  s.best_model_checkpoint.reset();
  to_c(s, c);
  CHECK(c.has_best_metric == 0);
  CHECK(c.best_model_checkpoint == nullptr);

  TrainerControl ctl;
  ctl.should_evaluate = true;
  th_control cc{};
  to_c(ctl, cc);
  CHECK(cc.struct_size == TH_CONTROL_STRUCT_SIZE);
  CHECK(cc.should_evaluate == 1);
  CHECK(cc.should_log == 0);
  cc.should_log = 7;  // any non-zero is true
  cc.should_evaluate = 0;
  from_c(cc, ctl);
  CHECK(ctl.should_log);
  CHECK_FALSE(ctl.should_evaluate);
}
