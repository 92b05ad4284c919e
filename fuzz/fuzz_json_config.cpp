// A JSON --config file: the checked parse (depth, duplicate keys), then the
// arguments it sets and their validation. Errors are ArgumentError /
// JsonInputError, never a crash.
#include <trainhook/args/argument_parser.hpp>
#include <trainhook/common/checked_json.hpp>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  nlohmann::json j;
  try {
    j = trainhook::parse_checked_json(text, "fuzz.json");
  } catch (const trainhook::JsonInputError&) {
    return 0;
  }
  try {
    (void)trainhook::training_arguments_from_json(j, "fuzz.json");
  } catch (const trainhook::ArgumentError&) {
  }
  return 0;
}
