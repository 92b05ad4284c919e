// Test-side reader of event files: splits TFRecord framing (checking both
// CRCs) and decodes the few Event/Summary fields the tests look at with a
// generic protobuf wire decoder written independently of the plugin's encoder.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tbtest {

struct WireField {
  uint32_t number = 0;
  uint32_t wire_type = 0;
  uint64_t varint = 0;  // varint, fixed64 and fixed32 values (raw bits)
  std::string bytes;    // length-delimited
};

// Throws std::runtime_error on malformed input.
std::vector<WireField> decode_message(const std::string& bytes);

struct DecodedValue {
  std::string tag;
  std::optional<float> simple_value;
  std::string plugin_name;
  std::string plugin_content;
  std::vector<std::string> string_val;
};

struct DecodedEvent {
  double wall_time = 0;
  int64_t step = 0;
  std::string file_version;
  std::vector<DecodedValue> values;
};

// Every record's data; throws naming the file and offset on a bad length or CRC.
std::vector<std::string> read_records(const std::string& path);
DecodedEvent decode_event(const std::string& data);
std::vector<DecodedEvent> read_events(const std::string& path);

}  // namespace tbtest
