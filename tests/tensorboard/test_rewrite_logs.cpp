#include <tensorboard/rewrite_logs.hpp>

#include <trainhook/support/log_keys.hpp>

#include <doctest/doctest.h>

using trainhook::tensorboard::rewrite_log_key;

TEST_CASE("rewrite_log_key follows HF rewrite_logs") {
  CHECK(rewrite_log_key("eval_loss").str() == "eval/loss");
  CHECK(rewrite_log_key("test_accuracy").str() == "test/accuracy");
  CHECK(rewrite_log_key("loss").str() == "train/loss");
  CHECK(rewrite_log_key("eval").str() == "train/eval");
  CHECK(rewrite_log_key("evaluation").str() == "train/evaluation");
  CHECK(rewrite_log_key("eval_").str() == "eval/");
}

TEST_CASE("the split form agrees with plugins/support's rewrite_log_key") {
  for (const char* key : {"eval_loss", "test_f1", "loss", "learning_rate", "eval", "eval_", "test", "test_",
                          "evaluation", "", "train_runtime", "eval_eval_x", "EVAL_x"})
    CHECK(rewrite_log_key(key).str() == trainhook::support::rewrite_log_key(key));
}
