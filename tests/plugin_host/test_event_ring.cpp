// EventRing, torch-free: records in order across the wrap-around, a full ring
// that drops and counts without blocking, a producer and a consumer on two
// threads (in order, nothing lost but what was counted), a sleeping consumer
// woken by a push or by wake(), calls (woken at once, never counted as
// drops), the same ring mapped from its descriptor, and a helper that attacks
// it: its memory cannot be resized (sealed), and positions it writes into the
// shared page neither crash the producer nor make it write outside the ring.
#include "isolation/event_ring.hpp"
#include "isolation/wake_policy.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <thread>

namespace iso = trainhook::detail::isolation;
using Clock = std::chrono::steady_clock;

namespace {

// A record whose bytes say which one it is: "<n>:" then filler up to `size`.
std::string record(uint64_t n, size_t size) {
  std::string r = std::to_string(n) + ":";
  while (r.size() < size) r.push_back(static_cast<char>('a' + (n + r.size()) % 26));
  return r;
}

// The scheduler state of thread `tid` of this process ('R', 'S', ...; '?' when unknown).
char thread_state(pid_t tid) {
  if (tid <= 0) return '?';
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t paren = stat.rfind(')');  // the name may hold spaces and parentheses
  return paren != std::string::npos && paren + 2 < stat.size() ? stat[paren + 2] : '?';
}

// A consumer thread running `body` (which waits in the ring); asleep()
// returns once it is blocked in the ring's futex, its flag up.
class Sleeper {
 public:
  template <class Body>
  Sleeper(const iso::EventRing& ring, Body body)
      : ring_(ring), thread_([this, body] {
          tid_.store(static_cast<pid_t>(::syscall(SYS_gettid)));
          body();
          done_.store(true);
        }) {}
  ~Sleeper() {
    if (thread_.joinable()) thread_.join();
  }
  // True once seen asleep; false when `body` returned first or 20 s passed.
  bool asleep() const {
    const auto give_up = Clock::now() + std::chrono::seconds(20);
    while (Clock::now() < give_up && !done_.load()) {
      if (ring_.consumer_sleeping() && thread_state(tid_.load()) == 'S') return true;
      std::this_thread::yield();
    }
    return false;
  }
  void join() { thread_.join(); }

 private:
  const iso::EventRing& ring_;
  std::atomic<pid_t> tid_{0};
  std::atomic<bool> done_{false};
  std::thread thread_;  // last: started once the rest exists
};

}  // namespace

TEST_CASE("event ring: records come out whole and in order across many wrap-arounds") {
  iso::EventRing ring = iso::EventRing::create(4096);
  REQUIRE(ring.capacity() == 4096);
  std::string out;
  uint64_t pushed = 0, popped = 0;
  // Lengths that do not divide the capacity: records and length words straddle the end.
  for (int round = 0; round < 400; ++round) {
    for (int i = 0; i < 3; ++i, ++pushed) REQUIRE(ring.try_push(record(pushed, 37 + (pushed * 53) % 300)));
    for (int i = 0; i < 3; ++i) {
      REQUIRE(ring.pop(out));
      CHECK(out == record(popped, 37 + (popped * 53) % 300));
      ++popped;
    }
  }
  CHECK_FALSE(ring.pop(out));
  CHECK(ring.drained());
  CHECK(ring.dropped() == 0);
}

TEST_CASE("event ring: a full ring drops and counts the record and takes again once read") {
  iso::EventRing ring = iso::EventRing::create(4096);
  const std::string r(100, 'x');
  int fitted = 0;
  while (ring.try_push(r)) ++fitted;
  CHECK(fitted == 4096 / 104);  // each record is its length word and its bytes
  CHECK(ring.dropped() == 1);
  CHECK_FALSE(ring.try_push(r));
  CHECK(ring.dropped() == 2);
  CHECK_FALSE(ring.drained());
  std::string out;
  REQUIRE(ring.pop(out));
  CHECK(ring.try_push(r));
  CHECK(ring.dropped() == 2);
  // Larger than the whole ring: dropped at once, never waited for.
  CHECK_FALSE(ring.try_push(std::string(5000, 'y')));
  CHECK(ring.dropped() == 3);
  int left = 0;
  while (ring.pop(out)) ++left;
  CHECK(left == fitted);
  CHECK(ring.drained());
}

TEST_CASE(
    "event ring: a producer and a consumer on two threads keep the order and lose only what was counted") {
  iso::EventRing ring = iso::EventRing::create(4096);
  constexpr uint64_t kRecords = 200000;
  std::atomic<bool> done{false};
  uint64_t received = 0, last = 0;
  bool in_order = true;
  std::thread consumer([&] {
    std::string out;
    auto take = [&] {
      const uint64_t n = std::stoull(out.substr(0, out.find(':')));
      if (received > 0 && n <= last) in_order = false;
      if (out != record(n, 24 + n % 40)) in_order = false;
      last = n;
      ++received;
    };
    for (;;) {
      if (ring.pop(out)) {
        take();
        continue;
      }
      if (done.load()) {  // set after the last push: what is left is all there
        while (ring.pop(out)) take();
        break;
      }
      ring.wait(std::chrono::milliseconds(50), [&] { return done.load(); });
    }
  });
  for (uint64_t n = 0; n < kRecords; ++n) ring.try_push(record(n, 24 + n % 40));
  done.store(true);
  ring.wake();
  consumer.join();
  CHECK(in_order);
  CHECK(received + ring.dropped() == kRecords);
  CHECK(received > 0);
}

TEST_CASE(
    "event ring: a sleeping consumer is woken by a ring an eighth full, by a record that waited, and by "
    "wake()") {
  iso::EventRing ring = iso::EventRing::create(4096);
  // The consumer sleeps with a long timeout and must come back well before it.
  std::atomic<int> woke{0};
  auto sleeper = [&] {
    ring.wait(std::chrono::milliseconds(60000), [] { return false; });
    ++woke;
  };
  std::string out;
  {
    Sleeper consumer(ring, sleeper);
    REQUIRE(consumer.asleep());
    const auto t0 = Clock::now();
    // Small records do not wake it one by one; the one that fills an eighth does.
    for (int i = 0; i < 4096 / 8 / 20; ++i) REQUIRE(ring.try_push(std::string(16, 'a')));
    REQUIRE(ring.try_push(std::string(16, 'b')));
    consumer.join();
    CHECK(woke.load() == 1);
    CHECK(Clock::now() - t0 < std::chrono::seconds(20));
    while (ring.pop(out)) {
    }
    CHECK(out == std::string(16, 'b'));
  }
  {
    // One record, then another after kObserverLatency: the second push wakes it for both.
    Sleeper consumer(ring, sleeper);
    REQUIRE(consumer.asleep());
    REQUIRE(ring.try_push("first"));
    std::this_thread::sleep_for(iso::wake_policy::kObserverLatency + std::chrono::milliseconds(5));
    const auto t0 = Clock::now();
    REQUIRE(ring.try_push("second"));
    consumer.join();
    CHECK(woke.load() == 2);
    CHECK(Clock::now() - t0 < std::chrono::seconds(20));
    REQUIRE(ring.pop(out));
    CHECK(out == "first");
    REQUIRE(ring.pop(out));
    CHECK(out == "second");
  }

  // wake(): what the runner's reader thread does when a call arrives.
  std::atomic<bool> call{false};
  Sleeper caller(ring, [&] { ring.wait(std::chrono::milliseconds(60000), [&] { return call.load(); }); });
  REQUIRE(caller.asleep());
  const auto t1 = Clock::now();
  call.store(true);
  ring.wake();
  caller.join();
  CHECK(Clock::now() - t1 < std::chrono::seconds(20));

  // Something to do already: no sleep at all.
  REQUIRE(ring.try_push("x"));
  const auto t2 = Clock::now();
  ring.wait(std::chrono::milliseconds(60000), [] { return false; });
  CHECK(Clock::now() - t2 < std::chrono::seconds(20));
}

TEST_CASE("event ring: the other process's side maps the same ring from its descriptor") {
  iso::EventRing producer = iso::EventRing::create(5000);
  CHECK(producer.capacity() == 8192);  // rounded up to a power of two
  iso::EventRing consumer = iso::EventRing::attach(::dup(producer.fd()));
  CHECK(consumer.capacity() == 8192);
  REQUIRE(producer.try_push("first"));
  REQUIRE(producer.try_push("second"));
  std::string out;
  REQUIRE(consumer.pop(out));
  CHECK(out == "first");
  REQUIRE(consumer.pop(out));
  CHECK(out == "second");
  CHECK(producer.drained());

  // A descriptor that is not a ring is refused, with its reason.
  const int odd = ::memfd_create("not-a-ring", MFD_CLOEXEC);
  REQUIRE(odd >= 0);
  REQUIRE(::ftruncate(odd, 4096 + 5000) == 0);
  CHECK_THROWS_WITH_AS(iso::EventRing::attach(odd), doctest::Contains("malformed"), std::runtime_error);
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  ::close(pipe_fds[1]);
  CHECK_THROWS_WITH_AS(iso::EventRing::attach(pipe_fds[0]), doctest::Contains("not a ring"),
                       std::runtime_error);
}

TEST_CASE("event ring: a call wakes the consumer at once and, when it does not fit, is refused uncounted") {
  iso::EventRing ring = iso::EventRing::create(4096);
  std::atomic<bool> woke{false};
  Sleeper consumer(ring, [&] {
    ring.wait(std::chrono::milliseconds(60000), [] { return false; });
    woke.store(true);
  });
  consumer.asleep();
  const auto t0 = Clock::now();
  REQUIRE(ring.try_push_call("call"));  // one small record: no eighth, no wait, still woken
  consumer.join();
  CHECK(woke.load());
  CHECK(Clock::now() - t0 < std::chrono::seconds(20));
  while (ring.try_push(std::string(200, 'o'))) {
  }
  const uint64_t dropped = ring.dropped();
  CHECK_FALSE(ring.try_push_call(std::string(200, 'c')));
  CHECK(ring.dropped() == dropped);  // the caller sends it another way: nothing was lost
  std::string out;
  REQUIRE(ring.pop(out));
  CHECK(out == "call");
}

TEST_CASE("event ring: a helper cannot resize the shared memory, whatever descriptor it holds") {
  iso::EventRing ring = iso::EventRing::create(4096);
  iso::EventRing helper = iso::EventRing::attach(::dup(ring.fd()));
  // Shrunk, the trainer's next write into the lost pages would raise SIGBUS.
  CHECK(::ftruncate(helper.fd(), 0) != 0);
  CHECK(errno == EPERM);
  CHECK(::ftruncate(helper.fd(), 1 << 20) != 0);
  // Nor can the seals be taken off or changed.
  CHECK(::fcntl(helper.fd(), F_ADD_SEALS, F_SEAL_WRITE) != 0);
  CHECK((::fcntl(ring.fd(), F_GET_SEALS) & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) ==
        (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL));
  REQUIRE(ring.try_push("still fine"));
  std::string out;
  REQUIRE(helper.pop(out));
  CHECK(out == "still fine");
}

TEST_CASE("event ring: positions a helper writes into the shared page do not move the producer") {
  iso::EventRing ring = iso::EventRing::create(4096);
  REQUIRE(ring.try_push("one"));
  // The helper's own mapping: it overwrites the whole header page with bytes of its choice.
  void* page = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, ring.fd(), 0);
  REQUIRE(page != MAP_FAILED);
  for (const unsigned char fill : {0x00, 0xff, 0x7f, 0x41}) {
    std::memset(page, fill, 4096);
    // Every push either fits between the producer's own position and a
    // plausible consumer position, or is dropped as "full"; never a crash.
    for (int i = 0; i < 100; ++i) (void)ring.try_push(std::string(100, 'r'));
    (void)ring.try_push_call("call");
    ring.wake();
  }
  ::munmap(page, 4096);
}

