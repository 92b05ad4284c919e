// The W&B plugin's readers of GraphQL answers (upsertBucket, resume status).
#include <trainhook/wandb/graphql.hpp>

#include <cstddef>
#include <cstdint>
#include <exception>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  try {
    (void)trainhook::wandb::parse_upsert_response(body);
  } catch (const std::exception&) {
  }
  try {
    (void)trainhook::wandb::parse_resume_status(body);
  } catch (const std::exception&) {
  }
  return 0;
}
