// EventRing (see event_ring.hpp).
#include "event_ring.hpp"

#include "wake_policy.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>
#include <new>
#include <stdexcept>
#include <utility>

namespace trainhook::detail::isolation {

// The header page. Each position on its own cache line: the producer writes
// head_, the consumer tail_, and neither should bounce the other's line.
// `sleeping` is the futex word: 1 while the consumer sleeps or is about to.
// `unasked`: bumped by the consumer when it sent a message nobody asked for.
struct EventRing::Shared {
  alignas(64) std::atomic<uint64_t> head;
  alignas(64) std::atomic<uint64_t> tail;
  alignas(64) std::atomic<uint32_t> sleeping;
  std::atomic<uint32_t> unasked;
};

namespace {

constexpr size_t kHeaderBytes = 4096;
static_assert(sizeof(std::atomic<uint64_t>) == 8 && std::atomic<uint64_t>::is_always_lock_free,
              "the ring's positions cross processes: they must be plain lock-free words");
static_assert(std::atomic<uint32_t>::is_always_lock_free, "the futex word must be a plain word");

bool power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// Not FUTEX_PRIVATE: the word lives in memory shared by two processes.
long futex(std::atomic<uint32_t>* word, int op, uint32_t value, const timespec* timeout) {
  return ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, timeout, nullptr, 0);
}

}  // namespace

EventRing EventRing::create(uint32_t capacity) {
  uint64_t cap = kMinCapacity;
  while (cap < capacity) cap <<= 1;
  if (cap > (1u << 30))
    throw std::runtime_error("event ring: " + std::to_string(capacity) + " bytes is too large");
  const int fd = ::memfd_create("trainhook-events", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) throw std::runtime_error(std::string("event ring: memfd_create: ") + std::strerror(errno));
  // Sealed before anyone else holds it: a helper that shrank the memory would
  // make the trainer's next write into it raise SIGBUS.
  if (::ftruncate(fd, static_cast<off_t>(kHeaderBytes + cap)) != 0 ||
      ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    const int e = errno;
    ::close(fd);
    throw std::runtime_error(std::string("event ring: sizing and sealing the shared memory: ") +
                             std::strerror(e));
  }
  EventRing ring = map(fd, static_cast<uint32_t>(cap));
  new (static_cast<void*>(ring.shared_)) Shared();  // positions 0, nobody sleeping
  return ring;
}

EventRing EventRing::attach(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size <= static_cast<off_t>(kHeaderBytes)) {
    ::close(fd);
    throw std::runtime_error("event ring: descriptor " + std::to_string(fd) + " is not a ring");
  }
  const uint64_t cap = static_cast<uint64_t>(st.st_size) - kHeaderBytes;
  if (!power_of_two(cap) || cap < kMinCapacity || cap > (1u << 30)) {
    ::close(fd);
    throw std::runtime_error("event ring: a ring of " + std::to_string(cap) + " bytes is malformed");
  }
  return map(fd, static_cast<uint32_t>(cap));
}

EventRing EventRing::map(int fd, uint32_t capacity) {
  // MAP_POPULATE: the pages are mapped now, at setup, not one fault at a time
  // on the training thread's first pass through the ring.
  void* p =
      ::mmap(nullptr, kHeaderBytes + capacity, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (p == MAP_FAILED) {
    const int e = errno;
    ::close(fd);
    throw std::runtime_error(std::string("event ring: mmap: ") + std::strerror(e));
  }
  auto* shared = static_cast<Shared*>(p);
  return EventRing(fd, shared, static_cast<char*>(p) + kHeaderBytes, capacity);
}

EventRing::EventRing(EventRing&& other) noexcept { *this = std::move(other); }

EventRing& EventRing::operator=(EventRing&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = std::exchange(other.fd_, -1);
    shared_ = std::exchange(other.shared_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
    head_ = std::exchange(other.head_, 0);
    dropped_ = std::exchange(other.dropped_, 0);
  }
  return *this;
}

EventRing::~EventRing() { release(); }

void EventRing::release() noexcept {
  if (shared_ != nullptr) ::munmap(shared_, kHeaderBytes + capacity_);
  if (fd_ >= 0) ::close(fd_);
  shared_ = nullptr;
  data_ = nullptr;
  fd_ = -1;
}

void EventRing::copy_in(uint64_t pos, const void* p, size_t n) noexcept {
  if (n == 0) return;  // an empty record's data() may be NULL
  const size_t at = static_cast<size_t>(pos & (capacity_ - 1));
  const size_t first = std::min(n, capacity_ - at);
  std::memcpy(data_ + at, p, first);
  std::memcpy(data_, static_cast<const char*>(p) + first, n - first);
}

void EventRing::copy_out(uint64_t pos, void* p, size_t n) const noexcept {
  const size_t at = static_cast<size_t>(pos & (capacity_ - 1));
  const size_t first = std::min(n, capacity_ - at);
  std::memcpy(p, data_ + at, first);
  std::memcpy(static_cast<char*>(p) + first, data_, n - first);
}

bool EventRing::try_push(std::string_view record) noexcept { return push(record, false); }

bool EventRing::try_push_call(std::string_view record) noexcept { return push(record, true); }

bool EventRing::push(std::string_view record, bool call) noexcept {
  const uint64_t need = sizeof(uint32_t) + static_cast<uint64_t>(record.size());
  const uint64_t head = head_;  // never read back from the page the consumer can write
  const uint64_t tail = shared_->tail.load(std::memory_order_acquire);
  const uint64_t used = head - tail;
  if (tail > head || used > capacity_ || capacity_ - used < need) {
    if (!call) ++dropped_;
    return false;
  }
  const auto length = static_cast<uint32_t>(record.size());
  copy_in(head, &length, sizeof length);
  copy_in(head + sizeof length, record.data(), record.size());
  // seq_cst store then seq_cst load: either the consumer sees this record
  // before it sleeps, or we see it sleeping and wake it (begin_sleep's mirror).
  head_ = head + need;
  shared_->head.store(head_, std::memory_order_seq_cst);
  if (shared_->sleeping.load(std::memory_order_seq_cst) == 0)
    waiting_record_ = false;  // it is awake: it will see this one
  else if (call || wake_due(used + need))
    wake();
  return true;
}

bool EventRing::wake_due(uint64_t used) noexcept {
  const auto now = std::chrono::steady_clock::now();  // the vDSO: no system call
  const std::optional<std::chrono::steady_clock::duration> oldest =
      waiting_record_ ? std::optional(now - waiting_since_) : std::nullopt;
  if (wake_policy::wake_for_records(used, capacity_, oldest)) {
    waiting_record_ = false;
    return true;
  }
  if (!waiting_record_) {
    waiting_record_ = true;
    waiting_since_ = now;
  }
  return false;
}

bool EventRing::consumer_sleeping() const noexcept {
  return shared_->sleeping.load(std::memory_order_seq_cst) != 0;
}

bool EventRing::drained() const noexcept {
  return shared_->tail.load(std::memory_order_acquire) == shared_->head.load(std::memory_order_acquire);
}

void EventRing::note_unasked() noexcept { shared_->unasked.fetch_add(1, std::memory_order_release); }

uint32_t EventRing::unasked() const noexcept { return shared_->unasked.load(std::memory_order_acquire); }

bool EventRing::empty() const noexcept {
  return shared_->head.load(std::memory_order_seq_cst) == shared_->tail.load(std::memory_order_relaxed);
}

bool EventRing::pop(std::string& out) {
  const uint64_t tail = shared_->tail.load(std::memory_order_relaxed);  // ours alone
  const uint64_t head = shared_->head.load(std::memory_order_acquire);
  const uint64_t avail = head - tail;
  if (head == tail || head < tail || avail > capacity_ || avail < sizeof(uint32_t)) return false;
  uint32_t length = 0;
  copy_out(tail, &length, sizeof length);
  if (length > avail - sizeof length) return false;
  out.resize(length);
  copy_out(tail + sizeof length, out.data(), length);
  shared_->tail.store(tail + sizeof length + length, std::memory_order_release);
  return true;
}

bool EventRing::begin_sleep() noexcept {
  shared_->sleeping.store(1, std::memory_order_seq_cst);
  // seq_cst with push's store then load: either we see its record here, or
  // it sees the flag up and wakes us.
  if (!empty()) {
    shared_->sleeping.store(0, std::memory_order_relaxed);
    return false;
  }
  return true;
}

void EventRing::sleep(std::chrono::nanoseconds timeout) noexcept {
  const auto ns = std::max<int64_t>(0, timeout.count());
  const timespec t{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
  // Returns at once when a waker already cleared the word (EAGAIN).
  futex(&shared_->sleeping, FUTEX_WAIT, 1, &t);
}

void EventRing::end_sleep() noexcept { shared_->sleeping.store(0, std::memory_order_relaxed); }

void EventRing::wake() noexcept {
  if (shared_->sleeping.exchange(0, std::memory_order_seq_cst) != 0)
    futex(&shared_->sleeping, FUTEX_WAKE, INT_MAX, nullptr);
}

}  // namespace trainhook::detail::isolation
