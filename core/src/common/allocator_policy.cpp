// glibc's mallopt, once per process; see allocator_policy.hpp for why.
#include <trainhook/common/allocator_policy.hpp>

#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace trainhook {

std::string apply_allocator_policy() {
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
  for (const char* name : {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES"}) {
    if (std::getenv(name) != nullptr) return std::string(name) + " is set; the allocator is left as it says";
  }
  // mallopt returns 1 on success, 0 on a value it refuses.
  if (mallopt(M_MMAP_THRESHOLD, static_cast<int>(AllocatorPolicy::kMmapThreshold)) != 1 ||
      mallopt(M_TRIM_THRESHOLD, static_cast<int>(AllocatorPolicy::kTrimThreshold)) != 1) {
    return "mallopt refused the thresholds";
  }
  return "";
#else
  return "not glibc's allocator (or a sanitizer's)";
#endif
}

}  // namespace trainhook
