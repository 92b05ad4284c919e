#include <trainhook/tensorboard/proto_writer.hpp>

#include <doctest/doctest.h>

#include <string>

using namespace trainhook::tensorboard;

namespace {
std::string hex(const std::string& s) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}
}  // namespace

TEST_CASE("varints encode as protobuf does") {
  std::string out;
  append_varint(out, 0);
  append_varint(out, 1);
  append_varint(out, 127);
  append_varint(out, 128);
  append_varint(out, 300);
  CHECK(hex(out) == "00017f8001ac02");
  CHECK(varint_size(0) == 1);
  CHECK(varint_size(127) == 1);
  CHECK(varint_size(128) == 2);
  CHECK(varint_size(UINT64_MAX) == 10);
}

TEST_CASE("scalar fields: int (negative is 10 bytes), bool, double, float, bytes") {
  std::string out;
  ProtoWriter w(out);
  w.int_field(2, 150);
  CHECK(hex(out) == "109601");
  out.clear();
  w.int_field(2, -1);
  CHECK(hex(out) == "10ffffffffffffffffff01");
  out.clear();
  w.bool_field(4, true);
  CHECK(hex(out) == "2001");
  out.clear();
  w.double_field(1, 1.0);
  CHECK(hex(out) == "09000000000000f03f");
  out.clear();
  w.float_field(2, 1.0f);
  CHECK(hex(out) == "150000803f");
  out.clear();
  w.bytes_field(1, "testing");
  CHECK(hex(out) == "0a0774657374696e67");
  out.clear();
  w.bytes_field(1, "test", "ing");
  CHECK(hex(out) == "0a0774657374696e67");
}

TEST_CASE("nested messages get the right length prefix, short and long") {
  std::string out;
  ProtoWriter w(out);
  w.message_field(3, [](ProtoWriter& m) { m.int_field(1, 150); });
  CHECK(hex(out) == "1a03089601");

  out.assign("xy");  // appends after existing bytes
  const std::string big(200, 'a');
  w.message_field(5, [&](ProtoWriter& m) { m.bytes_field(1, big); });
  // body = 0a c8 01 + 200 bytes = 203 bytes -> length varint cb 01
  REQUIRE(out.size() == 2 + 1 + 2 + 203);
  CHECK(hex(out.substr(0, 8)) == "78792acb010ac801");
  CHECK(out.substr(8) == big);

  out.clear();
  w.message_field(1, [](ProtoWriter& m) {
    m.message_field(2, [](ProtoWriter& inner) { inner.message_field(3, [](ProtoWriter&) {}); });
  });
  CHECK(hex(out) == "0a0412021a00");
}
