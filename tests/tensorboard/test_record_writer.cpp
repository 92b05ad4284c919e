#include <trainhook/tensorboard/event_builder.hpp>
#include <trainhook/tensorboard/record_writer.hpp>

#include "event_reader.hpp"
#include "file_size_limit.hpp"

#include <doctest/doctest.h>
#include <temp_dir.hpp>

#include <filesystem>
#include <string>

using namespace trainhook::tensorboard;
using trainhook::testkit::TempDir;

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

TEST_CASE("the file_version record matches the reference bytes") {
  std::string event;
  encode_file_version_event(event, 1.0);
  std::string record;
  append_record(record, event);
  CHECK(hex(record) ==
        "1800000000000000a37f4b22"
        "09000000000000f03f1a0d627261696e2e4576656e743a32"
        "86bf577a");
  CHECK(record.size() == record_size(event.size()));
}

TEST_CASE("EventFile appends whole records, refuses an existing file, reads back") {
  const TempDir tmp("tb_unit_file");
  const auto& dir = tmp.path;
  const auto path = dir / "events.out.tfevents.test";
  {
    EventFile f(path);
    std::string records;
    std::string event;
    encode_file_version_event(event, 2.5);
    append_record(records, event);
    append_record(records, std::string(300, 'z'));
    CHECK(f.append(records));
    CHECK(f.size() == records.size());
    CHECK(f.close());
    CHECK_FALSE(f.append("x"));
    CHECK(f.error().find(path.string()) != std::string::npos);
  }
  const auto recs = tbtest::read_records(path.string());
  REQUIRE(recs.size() == 2);
  CHECK(tbtest::decode_event(recs[0]).file_version == "brain.Event:2");
  CHECK(tbtest::decode_event(recs[0]).wall_time == 2.5);
  CHECK(recs[1] == std::string(300, 'z'));
  CHECK_THROWS_WITH_AS(EventFile{path}, doctest::Contains(path.string().c_str()), std::runtime_error);
}

TEST_CASE("a corrupted byte is caught by the reader's CRC check") {
  const TempDir tmp("tb_unit_crc");
  const auto& dir = tmp.path;
  const auto path = dir / "events.out.tfevents.bad";
  {
    EventFile f(path);
    std::string records;
    append_record(records, "hello");
    records[14] = 'j';  // inside the data
    CHECK(f.append(records));
  }
  CHECK_THROWS_WITH_AS(tbtest::read_records(path.string()), doctest::Contains("bad data CRC"),
                       std::runtime_error);
}

TEST_CASE("a failed write cuts the file back to its last whole record") {
  const TempDir tmp("tb_unit_full");
  const auto& dir = tmp.path;
  const auto path = dir / "events.out.tfevents.full";
  {
    tbtest::FileSizeLimit limit(1000);
    EventFile f(path);
    std::string batch;
    for (int i = 0; i < 3; ++i) append_record(batch, std::string(100, static_cast<char>('a' + i)));
    REQUIRE(f.append(batch));  // 348 bytes
    batch.clear();
    for (int i = 0; i < 10; ++i) append_record(batch, std::string(100, 'x'));
    CHECK_FALSE(f.append(batch));  // 1160 more bytes: only part fits under the limit
    CHECK(f.error().find(path.string()) != std::string::npos);
    CHECK(f.size() == 348);
  }
  CHECK(std::filesystem::file_size(path) == 348);
  const auto recs = tbtest::read_records(path.string());
  REQUIRE(recs.size() == 3);
  CHECK(recs[2] == std::string(100, 'c'));
}
