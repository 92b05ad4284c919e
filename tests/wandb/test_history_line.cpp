// History lines and the summary, as HF WandbCallback + the W&B client make them.
#include <trainhook/wandb/history_line.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

using namespace trainhook::wandb;

TEST_CASE("numbers are written as W&B's client writes them") {
  CHECK(json_number(3) == "3");
  CHECK(json_number(-2) == "-2");
  CHECK(json_number(0.1) == "0.1");
  CHECK(json_number(1e-3) == "0.001");
  CHECK(json_number(std::nan("")) == "NaN");
  CHECK(json_number(std::numeric_limits<double>::infinity()) == "Infinity");
  CHECK(json_number(-std::numeric_limits<double>::infinity()) == "-Infinity");
  CHECK(std::stod(json_number(1.0 / 3)) == 1.0 / 3);
  CHECK(json_string("a\"b\n") == "\"a\\\"b\\n\"");
}

TEST_CASE("HF's split: summary-only keys, rewrite_logs, train/global_step") {
  LogRecord r = make_log_record(
      {{"loss", 0.5}, {"eval_acc", 0.9}, {"test_f1", 0.7}, {"train_runtime", 3.0}, {"total_flos", 10}},
      {{"note", "hi"}}, 7, 1000.5);
  std::vector<std::pair<std::string, std::string>> hist = {{"train/loss", "0.5"},
                                                           {"eval/acc", "0.9"},
                                                           {"test/f1", "0.7"},
                                                           {"train/note", "\"hi\""},
                                                           {"train/global_step", "7"}};
  CHECK(r.history == hist);
  CHECK(r.summary ==
        std::vector<std::pair<std::string, std::string>>{{"train_runtime", "3"}, {"total_flos", "10"}});
  CHECK(make_log_record({{"test_loss", 1}}, {}, std::nullopt, 0).history ==
        std::vector<std::pair<std::string, std::string>>{{"test/loss", "1"}});
}

TEST_CASE("a history line carries _step, _runtime, _timestamp after the fields") {
  LogRecord r = make_log_record({{"loss", 0.25}, {"loss", 0.125}}, {}, 3, 1700000000.5);
  const std::string line = history_line(r, 4, 2.5);
  CHECK(line ==
        R"({"train/loss":0.125,"train/global_step":3,"_step":4,"_runtime":2.5,"_timestamp":1700000000.5})");
  CHECK(nlohmann::json::parse(line)["_step"] == 4);
}

TEST_CASE("summary keeps last values, summary-only keys and W&B's fields") {
  Summary s;
  s.update(make_log_record({{"loss", 1}}, {}, 1, 10), 0, 0.5);
  s.update(make_log_record({{"loss", 0.5}, {"train_loss", 0.7}}, {}, 2, 11), 1, 1.5);
  auto j = nlohmann::json::parse(s.line());
  CHECK(j["train/loss"] == 0.5);
  CHECK(j["train_loss"] == 0.7);
  CHECK(j["train/global_step"] == 2);
  CHECK(j["_step"] == 1);
  CHECK(j["_runtime"] == 1.5);
  CHECK(j["_wandb"]["runtime"] == 1);

  Summary resumed;
  resumed.load(R"({"train/loss":0.1,"_step":9,"_runtime":40.5,"_wandb":{"runtime":40}})");
  auto k = nlohmann::json::parse(resumed.line());
  CHECK(k["train/loss"] == 0.1);
  CHECK(k["_wandb"]["runtime"] == 40);
}
