// How the C allocator hands out the big, short-lived buffers of a training
// step (activations, gradients, batches). The `trainhook` program sets this
// once at start; a library never changes process-wide allocator settings, so
// programs that embed the Trainer (or Python, through the bridge) keep theirs.
#pragma once

#include <string>

namespace trainhook {

struct AllocatorPolicy {
  // glibc's own ceiling for its adaptive threshold on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX).
  static constexpr long kMmapThreshold = 32L << 20;
  // What glibc's adaptive rule pairs with that threshold (twice it).
  static constexpr long kTrimThreshold = 64L << 20;
};

// Keeps buffers below AllocatorPolicy::kMmapThreshold in the heap, and up to
// kTrimThreshold of freed heap in the process, instead of an mmap/munmap pair
// (a page fault and a zeroed page per 4 KiB) for every buffer over 128 KiB,
// at every step.
//
// glibc adapts to this by itself, but only after the program frees one large
// mmapped block: a run that read its data into memory did so and stepped fast,
// a run over memory-mapped data did not and stepped slower on the same model
// (docs/benchmarks.md, memory-mapped data). Setting it up front makes the step
// time independent of how the data was loaded.
//
// Returns "" when applied, else why not: another allocator than glibc's, or
// the user's own MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_ or
// GLIBC_TUNABLES (which win).
std::string apply_allocator_policy();

}  // namespace trainhook
