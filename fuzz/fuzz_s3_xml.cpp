// The flyte plugin's reader of S3's XML answers (listings, errors, uploads).
#include <trainhook/flyte/s3_xml.hpp>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view xml(reinterpret_cast<const char*>(data), size);
  namespace x = trainhook::flyte::s3xml;
  (void)x::error_of(xml);
  for (const auto block : x::blocks(xml, "Contents")) {
    (void)x::first(block, "Key");
    (void)x::first(block, "Size");
  }
  (void)x::all(xml, "UploadId");
  (void)x::decode_entities(xml);
  return 0;
}
