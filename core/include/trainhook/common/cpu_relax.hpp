// What a thread does between two looks at a word another CPU will change
// (a bounded spin before sleeping): tells the CPU it is spinning, so the other
// hyperthread runs and the loop's exit costs no pipeline flush.
#pragma once

namespace trainhook {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace trainhook
