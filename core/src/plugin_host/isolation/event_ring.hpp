// EventRing: a bounded ring of byte records in memory shared by two
// processes, with ONE producer (the trainer's training thread, for an isolated
// callback's observe-only events) and ONE consumer (the main thread of
// trainhook-plugin-runner, which runs the plugin). The producer copies a
// record in and returns: no lock, no system call. A sleeping consumer is woken
// (one futex wake) only once the ring is an eighth full or a record has waited
// kWakeDelay, seen at a later push; else it finds the records when its own
// wait times out (the runner's: kConsumerWait). So a burst of events costs
// one wake, not one per event, and an observer's latency stays bounded. A
// record that does not fit is dropped and counted, never waited for: the
// training thread must not stall on a slow plugin.
//
// Layout: one header page (the positions, the futex word, the time an
// announced call is due, the end of the consumer's own timed sleep) then `capacity` bytes of data. A record
// is its u32 length then its bytes, written across the end of the data area when it has to (positions only
// grow; the index is the position modulo capacity, a power of two).
//
// Ownership: the object owns its mapping and its descriptor (memfd, created
// by create(), handed to the runner, which attach()es to it). Neither side
// trusts the other's positions beyond its own mapping: a bad position reads
// as "full" to the producer and as "empty" to the consumer.
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
  // An observer's latency bound, and the wake rate of each idle helper: one
  // wake per 100 ms, not per record, so that a run with several isolated
  // loggers does not preempt the training thread at every step (20 ms still
  // left the MLP bench's training thread preempted twice as often as with
  // the integrations in process on a 2-core VM).
  static constexpr std::chrono::milliseconds kWakeDelay{100};
  static constexpr std::chrono::milliseconds kConsumerWait{100};

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

  // Producer. A call is due by `until` (the trainer announced it, e.g. a
  // step's on_step_end while the optimizer steps): wakes the consumer now, so
  // that it is awake when the call comes instead of being woken by it.
  // `until` is cut to kLongestExpectedCall from now: the consumer spends the
  // time until then looking for the call.
  void expect_call(std::chrono::steady_clock::time_point until) noexcept;
  static constexpr std::chrono::milliseconds kLongestExpectedCall{1};
  // How late a consumer's own timed wake may come: one that sleeps until at
  // least this long before an announced call is due is not woken for it.
  static constexpr std::chrono::microseconds kSelfWakeLate{50};
  // Consumer. The time the last announced call is due by (in the past when
  // none is). The consumer does not sleep before it (wait() returns at once).
  std::chrono::steady_clock::time_point call_expected_until() const noexcept;

 private:
  struct Shared;
  EventRing(int fd, Shared* shared, char* data, uint32_t capacity) noexcept
      : fd_(fd), shared_(shared), data_(data), capacity_(capacity) {}
  static EventRing map(int fd, uint32_t capacity);
  bool empty() const noexcept;
  // Announces the sleep; false when there is something to do after all.
  bool begin_sleep(std::chrono::nanoseconds timeout) noexcept;
  void sleep(std::chrono::nanoseconds timeout) noexcept;
  void end_sleep() noexcept;
  void copy_in(uint64_t pos, const void* p, size_t n) noexcept;
  void copy_out(uint64_t pos, void* p, size_t n) const noexcept;
  void release() noexcept;
  bool push(std::string_view record, bool call) noexcept;
  // Producer: whether a push that left `used` bytes wakes the sleeping consumer.
  bool wake_due(uint64_t used) noexcept;

  int fd_ = -1;
  Shared* shared_ = nullptr;
  char* data_ = nullptr;
  uint32_t capacity_ = 0;
  uint64_t dropped_ = 0;                                   // producer's own count
  bool waiting_record_ = false;                            // producer: a record the sleeper was not woken for
  std::chrono::steady_clock::time_point waiting_since_{};  // ... pushed then
};

template <class Stop>
void EventRing::wait(std::chrono::nanoseconds timeout, Stop&& stop) {
  if (!begin_sleep(timeout)) return;
  // The flag is up: a waker that set `stop` after this test sees it and wakes us.
  if (!stop()) sleep(timeout);
  end_sleep();
}

}  // namespace trainhook::detail::isolation
