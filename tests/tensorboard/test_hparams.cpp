#include <trainhook/tensorboard/hparams.hpp>

#include "event_reader.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <stdexcept>

using namespace trainhook::tensorboard;

namespace {
double as_double(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}
}  // namespace

TEST_CASE("hparams_from_json keeps numbers, strings, booleans, dumps arrays, skips null") {
  const auto hp = hparams_from_json(
      R"({"learning_rate": 0.001, "output_dir": "out", "fp16": false, "report_to": ["tensorboard"], "seed": 42,
          "run_name": null})");
  REQUIRE(hp.size() == 5);
  // nlohmann keeps keys sorted
  CHECK(hp[0].name == "fp16");
  CHECK(std::get<bool>(hp[0].value) == false);
  CHECK(hp[1].name == "learning_rate");
  CHECK(std::get<double>(hp[1].value) == 0.001);
  CHECK(hp[2].name == "output_dir");
  CHECK(std::get<std::string>(hp[2].value) == "out");
  CHECK(hp[3].name == "report_to");
  CHECK(std::get<std::string>(hp[3].value) == "[\"tensorboard\"]");
  CHECK(std::get<double>(hp[4].value) == 42.0);
  CHECK_THROWS_AS(hparams_from_json("[1,2]"), std::invalid_argument);
  CHECK_THROWS_AS(hparams_from_json("{not json"), std::invalid_argument);
}

TEST_CASE("session_start_content encodes HParamsPluginData{session_start_info=3}") {
  std::vector<HParam> hp = {{"lr", 0.5}, {"name", std::string("x")}, {"flag", true}};
  const auto data = tbtest::decode_message(session_start_content(hp, "grp", 100.0));
  REQUIRE(data.size() == 1);
  CHECK(data[0].number == 3);
  const auto ssi = tbtest::decode_message(data[0].bytes);
  REQUIRE(ssi.size() == 5);  // 3 map entries, group_name, start_time_secs
  const auto lr = tbtest::decode_message(ssi[0].bytes);
  CHECK(lr[0].bytes == "lr");
  const auto lr_value = tbtest::decode_message(lr[1].bytes);
  CHECK(lr_value[0].number == 2);  // number_value
  CHECK(as_double(lr_value[0].varint) == 0.5);
  const auto name_value = tbtest::decode_message(tbtest::decode_message(ssi[1].bytes)[1].bytes);
  CHECK(name_value[0].number == 3);  // string_value
  CHECK(name_value[0].bytes == "x");
  const auto flag_value = tbtest::decode_message(tbtest::decode_message(ssi[2].bytes)[1].bytes);
  CHECK(flag_value[0].number == 4);  // bool_value
  CHECK(flag_value[0].varint == 1);
  CHECK(ssi[3].number == 4);
  CHECK(ssi[3].bytes == "grp");
  CHECK(ssi[4].number == 5);
  CHECK(as_double(ssi[4].varint) == 100.0);
}

TEST_CASE("session_end_content and experiment_content") {
  const auto end = tbtest::decode_message(session_end_content(SessionStatus::success, 5.0));
  REQUIRE(end.size() == 1);
  CHECK(end[0].number == 4);
  const auto sei = tbtest::decode_message(end[0].bytes);
  CHECK(sei[0].number == 1);
  CHECK(sei[0].varint == 1);
  CHECK(as_double(sei[1].varint) == 5.0);

  std::vector<HParam> hp = {{"lr", 0.5}, {"name", std::string("x")}, {"flag", true}};
  const auto exp = tbtest::decode_message(experiment_content(hp, {"eval/loss", "train/loss"}, 9.0));
  REQUIRE(exp.size() == 1);
  CHECK(exp[0].number == 2);
  const auto fields = tbtest::decode_message(exp[0].bytes);
  REQUIRE(fields.size() == 6);
  CHECK(fields[0].number == 3);
  const int64_t types[] = {3, 1, 2};  // FLOAT64, STRING, BOOL
  for (int i = 0; i < 3; ++i) {
    CHECK(fields[1 + i].number == 4);
    const auto info = tbtest::decode_message(fields[1 + i].bytes);
    CHECK(info[0].bytes == hp[i].name);
    CHECK(info[1].number == 4);
    CHECK(static_cast<int64_t>(info[1].varint) == types[i]);
  }
  const auto m0 = tbtest::decode_message(fields[4].bytes);
  CHECK(tbtest::decode_message(m0[0].bytes)[0].number == 2);
  CHECK(tbtest::decode_message(m0[0].bytes)[0].bytes == "eval/loss");
  CHECK(m0[1].varint == 2);  // DATASET_VALIDATION
  const auto m1 = tbtest::decode_message(fields[5].bytes);
  CHECK(tbtest::decode_message(m1[0].bytes)[0].bytes == "train/loss");
  CHECK(m1[1].varint == 1);  // DATASET_TRAINING
}
