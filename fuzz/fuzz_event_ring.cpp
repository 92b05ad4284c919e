// The trainer's side of an isolated plugin's event ring, with the helper's
// side played by the input: the helper shares the ring's memory and holds its
// descriptor, so it can write any bytes into the header page and the data, at
// any moment, and try to resize the memory. Whatever it does, the producer's
// calls (push, push of a call, wake, the looks at the consumer) must neither
// crash, hang nor touch memory outside the mapping, and the memory's size
// must not change (it is sealed).
//
// Input: a sequence of operations, each one byte of kind then its arguments.
#include "isolation/event_ring.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace iso = trainhook::detail::isolation;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  iso::EventRing ring = iso::EventRing::create(iso::EventRing::kMinCapacity);
  const int fd = ring.fd();
  struct stat st {};
  if (::fstat(fd, &st) != 0) __builtin_trap();
  const size_t bytes = static_cast<size_t>(st.st_size);
  // The helper's own mapping of the same memory.
  auto* helper = static_cast<uint8_t*>(::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  if (helper == MAP_FAILED) return 0;
  std::string record;
  size_t i = 0;
  auto take = [&](size_t n) -> const uint8_t* {
    if (size - i < n) return nullptr;
    const uint8_t* p = data + i;
    i += n;
    return p;
  };
  while (i < size) {
    const uint8_t kind = data[i++] % 6;
    switch (kind) {
      case 0: {  // the helper writes bytes at an offset of its mapping
        const uint8_t* h = take(3);
        if (h == nullptr) break;
        const size_t at = (static_cast<size_t>(h[0]) | (static_cast<size_t>(h[1]) << 8)) % bytes;
        const size_t n = std::min<size_t>(h[2], size - i);
        const uint8_t* p = take(n);
        if (p != nullptr) std::memcpy(helper + at, p, std::min(n, bytes - at));
        break;
      }
      case 1:    // an observed event of the given length
      case 2: {  // a call of the given length
        const uint8_t* h = take(2);
        if (h == nullptr) break;
        record.assign((static_cast<size_t>(h[0]) | (static_cast<size_t>(h[1]) << 8)) % 8192, 'x');
        if (kind == 1)
          (void)ring.try_push(record);
        else
          (void)ring.try_push_call(record);
        break;
      }
      case 3:
        ring.wake();
        break;
      case 4:
        (void)ring.consumer_sleeping();
        (void)ring.drained();
        (void)ring.unasked();
        break;
      case 5:  // the helper tries to change the memory's size: sealed
        if (::ftruncate(fd, 0) == 0 || ::ftruncate(fd, static_cast<off_t>(bytes) * 2) == 0) __builtin_trap();
        break;
    }
  }
  ::munmap(helper, bytes);
  return 0;
}
