// EventRing (see event_ring.hpp).
#include "event_ring.hpp"

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
// `call_due_ns`: the steady clock (CLOCK_MONOTONIC, one clock for both
// processes) by which an announced call is due; 0 when none was announced.
struct EventRing::Shared {
  alignas(64) std::atomic<uint64_t> head;
  alignas(64) std::atomic<uint64_t> tail;
  alignas(64) std::atomic<uint32_t> sleeping;
  uint32_t capacity;
  std::atomic<int64_t> call_due_ns;
  std::atomic<int64_t> wakes_at_ns;  // while it sleeps: when the consumer's own timeout ends it
};

namespace {

constexpr size_t kHeaderBytes = 4096;
static_assert(sizeof(std::atomic<uint64_t>) == 8 && std::atomic<uint64_t>::is_always_lock_free,
              "the ring's positions cross processes: they must be plain lock-free words");
static_assert(std::atomic<uint32_t>::is_always_lock_free, "the futex word must be a plain word");

int64_t steady_ns(std::chrono::steady_clock::time_point t) {
  return static_cast<int64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
}

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
  const int fd = ::memfd_create("trainhook-events", MFD_CLOEXEC);
  if (fd < 0) throw std::runtime_error(std::string("event ring: memfd_create: ") + std::strerror(errno));
  if (::ftruncate(fd, static_cast<off_t>(kHeaderBytes + cap)) != 0) {
    const int e = errno;
    ::close(fd);
    throw std::runtime_error(std::string("event ring: ftruncate: ") + std::strerror(e));
  }
  EventRing ring = map(fd, static_cast<uint32_t>(cap));
  new (static_cast<void*>(ring.shared_)) Shared();  // positions 0, nobody sleeping
  ring.shared_->capacity = static_cast<uint32_t>(cap);
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
  const uint64_t head = shared_->head.load(std::memory_order_relaxed);  // ours alone
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
  shared_->head.store(head + need, std::memory_order_seq_cst);
  if (shared_->sleeping.load(std::memory_order_seq_cst) == 0)
    waiting_record_ = false;  // it is awake: it will see this one
  else if (call || wake_due(used + need))
    wake();
  return true;
}

bool EventRing::wake_due(uint64_t used) noexcept {
  const auto now = std::chrono::steady_clock::now();  // the vDSO: no system call
  if (used >= capacity_ / 8 || (waiting_record_ && now - waiting_since_ >= kWakeDelay)) {
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

bool EventRing::begin_sleep(std::chrono::nanoseconds timeout) noexcept {
  // Written before the flag: a producer that sees the flag up sees this sleep's end.
  shared_->wakes_at_ns.store(steady_ns(std::chrono::steady_clock::now() + timeout),
                             std::memory_order_seq_cst);
  shared_->sleeping.store(1, std::memory_order_seq_cst);
  // seq_cst with expect_call's store then wake: either we see the announced
  // call here, or its wake finds the flag up and wakes us.
  if (!empty() || call_expected_until() > std::chrono::steady_clock::now()) {
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

void EventRing::expect_call(std::chrono::steady_clock::time_point until) noexcept {
  until = std::min(until, std::chrono::steady_clock::now() + kLongestExpectedCall);
  const int64_t until_ns = steady_ns(until);
  shared_->call_due_ns.store(until_ns, std::memory_order_seq_cst);
  // A consumer asleep only until well before the call is due wakes by itself
  // in time (its runner expects calls that come at a steady beat): waking it
  // would cost this thread a system call, and on a VM the resume of an idle
  // vCPU, for nothing. If its timer is later than that after all, the call
  // itself wakes it, as an unannounced one.
  if (shared_->sleeping.load(std::memory_order_seq_cst) != 0 &&
      shared_->wakes_at_ns.load(std::memory_order_seq_cst) +
              static_cast<int64_t>(std::chrono::nanoseconds(kSelfWakeLate).count()) <=
          until_ns)
    return;
  wake();
}

std::chrono::steady_clock::time_point EventRing::call_expected_until() const noexcept {
  const int64_t ns = shared_->call_due_ns.load(std::memory_order_seq_cst);
  return std::chrono::steady_clock::time_point(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::nanoseconds(ns)));
}

}  // namespace trainhook::detail::isolation
