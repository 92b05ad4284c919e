#include <trainhook/tensorboard/event_builder.hpp>

#include "event_reader.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace trainhook::tensorboard;

TEST_CASE("a scalar event is Event{wall_time, step, summary{value{tag, simple_value}}}") {
  std::string event;
  encode_summary_event(event, 1.0, 7, [](ProtoWriter& s) { write_scalar_value(s, "train/", "loss", 0.5f); });
  // 09 <1.0> 10 07 2a 13 (summary) 0a 11 (value) 0a 0a "train/loss" 15 <0.5f>
  const std::string expected =
      std::string("\x09\x00\x00\x00\x00\x00\x00\xf0\x3f\x10\x07\x2a\x13\x0a\x11\x0a\x0a", 17) + "train/loss" +
      std::string("\x15\x00\x00\x00\x3f", 5);
  CHECK(event == expected);
  const auto e = tbtest::decode_event(event);
  CHECK(e.step == 7);
  REQUIRE(e.values.size() == 1);
  CHECK(e.values[0].tag == "train/loss");
  CHECK(e.values[0].simple_value == 0.5f);
  CHECK(e.values[0].plugin_name.empty());
}

TEST_CASE("a text value carries the text plugin and a DT_STRING tensor") {
  std::string event;
  encode_summary_event(event, 3.0, 0, [](ProtoWriter& s) { write_text_value(s, "", "args", "{\"a\": 1}"); });
  const auto e = tbtest::decode_event(event);
  REQUIRE(e.values.size() == 1);
  CHECK(e.values[0].tag == "args");
  CHECK(e.values[0].plugin_name == "text");
  CHECK_FALSE(e.values[0].simple_value.has_value());
  REQUIRE(e.values[0].string_val.size() == 1);
  CHECK(e.values[0].string_val[0] == "{\"a\": 1}");
  // dtype DT_STRING (7) and shape [1]
  for (const auto& f : tbtest::decode_message(
           tbtest::decode_message(tbtest::decode_message(tbtest::decode_message(event)[2].bytes)[0].bytes)[2]
               .bytes)) {
    if (f.number == 1) CHECK(f.varint == 7);
    if (f.number == 2) CHECK(f.bytes == std::string("\x12\x02\x08\x01", 4));
  }
}

TEST_CASE("an hparams value carries the plugin content and the plugin's null tensor") {
  std::string event;
  encode_summary_event(event, 3.0, 0,
                       [](ProtoWriter& s) { write_hparams_value(s, "_hparams_/x", "CONTENT"); });
  const auto e = tbtest::decode_event(event);
  REQUIRE(e.values.size() == 1);
  CHECK(e.values[0].tag == "_hparams_/x");
  CHECK(e.values[0].plugin_name == "hparams");
  CHECK(e.values[0].plugin_content == "CONTENT");
  // The value ends with tensor (field 8) = exactly tensorboard.plugins.hparams.metadata.NULL_TENSOR
  // (080112021200).
  CHECK(event.substr(event.size() - 8) == std::string("\x42\x06\x08\x01\x12\x02\x12\x00", 8));
}
