// apply_allocator_policy: buffers of a step's size come from the heap and stay
// there, and the user's MALLOC_* settings win.
#include <trainhook/common/allocator_policy.hpp>

#include <doctest/doctest.h>

#include <cstdlib>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

using trainhook::apply_allocator_policy;

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
TEST_CASE("a step-sized buffer comes from the heap and freeing it keeps the pages") {
  ::unsetenv("MALLOC_MMAP_THRESHOLD_");
  ::unsetenv("MALLOC_TRIM_THRESHOLD_");
  ::unsetenv("GLIBC_TUNABLES");
  REQUIRE(apply_allocator_policy() == "");
  // 2 MiB: the logits of a batch of 32 windows of 64 tokens over 256 ids,
  // which glibc's default puts in a fresh mmap every step.
  const size_t size = 2u << 20;
  const auto before = mallinfo2();
  std::vector<void*> blocks;
  for (int i = 0; i < 4; ++i) blocks.push_back(std::malloc(size));
  const auto during = mallinfo2();
  CHECK(during.hblks == before.hblks);  // no mmapped chunk
  for (void* p : blocks) std::free(p);
  const auto after = mallinfo2();
  // The freed 8 MiB stay in the arena (below the trim threshold) for the next step.
  CHECK(after.arena >= during.arena);
  CHECK(after.fordblks >= 4 * size);
}
#endif

TEST_CASE("the user's MALLOC_MMAP_THRESHOLD_ wins and the reason names it") {
  ::setenv("MALLOC_MMAP_THRESHOLD_", "131072", 1);
  const std::string why = apply_allocator_policy();
  ::unsetenv("MALLOC_MMAP_THRESHOLD_");
  CHECK(why != "");
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
  CHECK(why.find("MALLOC_MMAP_THRESHOLD_") != std::string::npos);
#endif
}
