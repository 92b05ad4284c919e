// A YAML --config file (yaml-cpp + our typing, merge keys, duplicate keys).
#include "yaml_config.hpp"

#include <trainhook/args/argument_parser.hpp>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto doc = trainhook::detail::parse_yaml_config(text, "fuzz.yaml");
    (void)doc.root.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const trainhook::ArgumentError&) {
  }
  return 0;
}
