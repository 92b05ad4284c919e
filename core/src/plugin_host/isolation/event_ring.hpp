// EventRing: a bounded ring of byte records in memory shared by two
// processes, with ONE producer (the trainer's training thread, for an isolated
// callback's observe-only events and its calls) and ONE consumer (the main
// thread of trainhook-plugin-runner, which runs the plugin). The producer
// copies a record in and returns: no lock, no system call unless the consumer
// sleeps and the policy says to wake it (wake_policy.hpp). A record that does
// not fit is dropped and counted, never waited for: the training thread must
// not stall on a slow plugin.
//
// Layout: one header page (the positions, the futex word, the helper's notice
// count) then `capacity` bytes of data. A record is its u32 length then its
// bytes, written across the end of the data area when it has to (positions
// only grow; the index is the position modulo capacity, a power of two).
//
// The consumer runs a plugin the trainer may not trust, so the producer's side
// believes nothing in the shared page: its write position is its own copy, the
// consumer's position is only a bound (a bad one reads as "full"), its own
// capacity never comes from the page, and the memory is sealed against a
// change of size (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) before the helper
// gets the descriptor, so no helper can make the trainer's mapping fault.
//
// Ownership: the object owns its mapping and its descriptor (memfd, created
// by create(), handed to the runner, which attach()es to it).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace trainhook::detail::isolation {

class EventRing {
 public:
  static constexpr uint32_t kDefaultCapacity = 1u << 20;  // 1 MiB: thousands of log records
  static constexpr uint32_t kMinCapacity = 4096;
  // A new ring of `capacity` data bytes (rounded up to a power of two, at least
  // kMinCapacity). Throws std::runtime_error when the memory cannot be had.
  static EventRing create(uint32_t capacity);
  // The ring whose descriptor the other process created (takes `fd`).
  static EventRing attach(int fd);

  EventRing() = default;
  EventRing(EventRing&& other) noexcept;
  EventRing& operator=(EventRing&& other) noexcept;
  EventRing(const EventRing&) = delete;
  EventRing& operator=(const EventRing&) = delete;
  ~EventRing();

  bool valid() const noexcept { return shared_ != nullptr; }
  int fd() const noexcept { return fd_; }
  uint32_t capacity() const noexcept { return capacity_; }

  // Producer. Copies `record` in; false when it does not fit (counted in
  // dropped()). Wakes a sleeping consumer as the top says.
  bool try_push(std::string_view record) noexcept;
  // Producer. A record the producer then waits for (a call): woken at once,
  // and when it does not fit, false without counting (the caller sends it
  // another way).
  bool try_push_call(std::string_view record) noexcept;
  uint64_t dropped() const noexcept { return dropped_; }
  // Producer or tests: the consumer sleeps (or is about to).
  bool consumer_sleeping() const noexcept;
  // Producer or tests: every record pushed has been taken by the consumer.
  bool drained() const noexcept;

  // Consumer. The oldest record into `out` (keeps its capacity); false when
  // there is none.
  bool pop(std::string& out);
  // Consumer. Sleeps until a record is there, `stop()` turns true after a
  // wake(), or `timeout` passes; returns at once when either holds already.
  template <class Stop>
  void wait(std::chrono::nanoseconds timeout, Stop&& stop);
  // Any thread of either process: wakes the consumer if it sleeps (the
  // runner's reader thread calls it when a call arrives on the socket).
  void wake() noexcept;

  // Consumer: the helper has sent a message that nobody asked for (a plugin
  // thread's log or stop request); the producer serves it at its next push.
  void note_unasked() noexcept;
  // Producer: the consumer's count of such messages (any value; only a change matters).
  uint32_t unasked() const noexcept;

 private:
  struct Shared;
  EventRing(int fd, Shared* shared, char* data, uint32_t capacity) noexcept
      : fd_(fd), shared_(shared), data_(data), capacity_(capacity) {}
  static EventRing map(int fd, uint32_t capacity);
  bool empty() const noexcept;
  // Announces the sleep; false when there is something to do after all.
  bool begin_sleep() noexcept;
  void sleep(std::chrono::nanoseconds timeout) noexcept;
  void end_sleep() noexcept;
  void copy_in(uint64_t pos, const void* p, size_t n) noexcept;
  void copy_out(uint64_t pos, void* p, size_t n) const noexcept;
  void release() noexcept;
  bool push(std::string_view record, bool call) noexcept;
  // Producer: whether a push that left `used` bytes wakes the sleeping consumer.
  bool wake_due(uint64_t used) noexcept;

  int fd_ = -1;
  uint64_t head_ = 0;  // producer: its own write position (the shared one is only published)
  Shared* shared_ = nullptr;
  char* data_ = nullptr;
  uint32_t capacity_ = 0;
  uint64_t dropped_ = 0;                                   // producer's own count
  bool waiting_record_ = false;                            // producer: a record the sleeper was not woken for
  std::chrono::steady_clock::time_point waiting_since_{};  // ... pushed then
};

template <class Stop>
void EventRing::wait(std::chrono::nanoseconds timeout, Stop&& stop) {
  if (!begin_sleep()) return;
  // The flag is up: a waker that set `stop` after this test sees it and wakes us.
  if (!stop()) sleep(timeout);
  end_sleep();
}

}  // namespace trainhook::detail::isolation
