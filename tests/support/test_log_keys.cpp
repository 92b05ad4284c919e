#include <doctest/doctest.h>
#include <trainhook/support/log_keys.hpp>

#include <string>

using trainhook::support::rewrite_log_key;
using trainhook::support::sanitize_key;
using trainhook::support::split_log_key;

TEST_CASE("rewrite_log_key groups by phase like HF rewrite_logs") {
  CHECK(rewrite_log_key("eval_loss") == "eval/loss");
  CHECK(rewrite_log_key("eval_accuracy_top1") == "eval/accuracy_top1");
  CHECK(rewrite_log_key("test_f1") == "test/f1");
  CHECK(rewrite_log_key("loss") == "train/loss");
  CHECK(rewrite_log_key("learning_rate") == "train/learning_rate");
  CHECK(rewrite_log_key("evaluation") == "train/evaluation");  // no underscore after "eval"
  CHECK(rewrite_log_key("eval_") == "eval/");
}

TEST_CASE("sanitize_key replaces characters outside the allowed set") {
  CHECK(sanitize_key("eval/loss (avg)", "_-. :/") == "eval/loss _avg_");
  CHECK(sanitize_key("a+b=c", "_-. :/") == "a_b_c");
  CHECK(sanitize_key("Zz09", "") == "Zz09");
  CHECK(sanitize_key("é", "_") == "__");  // two UTF-8 bytes
}

TEST_CASE("split_log_key gives the same mapping as prefix and a view into the key") {
  const std::string key = "eval_loss";
  auto p = split_log_key(key);
  CHECK(p.prefix == "eval/");
  CHECK(p.name == "loss");
  CHECK(p.name.data() == key.data() + 5);  // no copy
  for (const char* k : {"eval_loss", "test_f1", "loss", "evaluation", "eval_", "test", ""}) {
    auto q = split_log_key(k);
    CHECK(std::string(q.prefix).append(q.name) == rewrite_log_key(k));
  }
}
