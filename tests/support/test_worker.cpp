#include <doctest/doctest.h>
#include <thread_wakeups.hpp>
#include <trainhook/support/worker.hpp>
#include <wait_until.hpp>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace trainhook::support;
using namespace std::chrono_literals;

TEST_CASE("items are handed over in order and counted as delivered") {
  std::vector<int> seen;  // touched by the worker thread only until flush/stop
  Worker<int> w([&](std::vector<int>& batch, WorkerContext&) {
    seen.insert(seen.end(), batch.begin(), batch.end());
    return BatchResult{batch.size(), 0};
  });
  for (int i = 0; i < 1000; ++i) CHECK(w.enqueue(i));
  REQUIRE(w.flush(60s));
  auto s = w.stats();
  CHECK(s.enqueued == 1000);
  CHECK(s.delivered == 1000);
  CHECK(s.queued == 0);
  CHECK(w.stop().empty());
  REQUIRE(seen.size() == 1000);
  for (int i = 0; i < 1000; ++i) CHECK(seen[static_cast<size_t>(i)] == i);
}

TEST_CASE("items coalesce while the handler is busy and batches respect max_batch") {
  std::atomic<bool> release{false};
  std::vector<size_t> sizes;
  WorkerOptions opts;
  opts.max_batch = 50;
  Worker<int> w(
      [&](std::vector<int>& batch, WorkerContext& ctx) {
        sizes.push_back(batch.size());
        while (!release && !ctx.stopping()) ctx.sleep_for(1ms);
        return BatchResult{batch.size(), 0};
      },
      opts);
  w.enqueue(0);
  // The first call holds the worker; everything below queues up behind it.
  while (w.stats().queued != 0) std::this_thread::yield();
  for (int i = 1; i <= 120; ++i) w.enqueue(i);
  release = true;
  REQUIRE(w.flush(60s));
  w.stop();
  REQUIRE(sizes.size() == 4);
  CHECK(sizes[0] == 1);
  CHECK(sizes[1] == 50);
  CHECK(sizes[2] == 50);
  CHECK(sizes[3] == 20);
}

TEST_CASE("a full queue refuses items without blocking and counts them as dropped") {
  std::atomic<bool> release{false};
  WorkerOptions opts;
  opts.capacity = 10;
  Worker<int> w(
      [&](std::vector<int>& batch, WorkerContext& ctx) {
        while (!release && !ctx.stopping()) ctx.sleep_for(1ms);
        return BatchResult{batch.size(), 0};
      },
      opts);
  w.enqueue(-1);
  while (w.stats().queued != 0) std::this_thread::yield();
  int accepted = 0;
  for (int i = 0; i < 25; ++i) accepted += w.enqueue(i) ? 1 : 0;
  CHECK(accepted == 10);
  CHECK(w.stats().dropped == 15);
  CHECK_FALSE(w.flush(20ms));  // still held by the handler
  release = true;
  CHECK(w.flush(60s));
  CHECK(w.stats().delivered == 11);
}

TEST_CASE("enqueue_all queues in order under one lock and drops what does not fit") {
  std::atomic<bool> release{false};
  std::mutex mu;
  std::vector<int> seen;
  WorkerOptions opts;
  opts.capacity = 5;
  Worker<int> w(
      [&](std::vector<int>& batch, WorkerContext& ctx) {
        while (!release && !ctx.stopping()) ctx.sleep_for(1ms);
        std::lock_guard<std::mutex> lock(mu);
        seen.insert(seen.end(), batch.begin(), batch.end());
        return BatchResult{batch.size(), 0};
      },
      opts);
  w.enqueue(-1);
  while (w.stats().queued != 0) std::this_thread::yield();  // held by the handler from here
  std::vector<int> first{0, 1, 2};
  CHECK(w.enqueue_all(first) == 3);
  std::vector<int> second{3, 4, 5, 6};
  CHECK(w.enqueue_all(second) == 2);  // two places left
  CHECK(w.stats().dropped == 2);
  CHECK(w.stats().enqueued == 6);
  release = true;
  REQUIRE(w.flush(60s));
  {
    std::lock_guard<std::mutex> lock(mu);
    CHECK(seen == std::vector<int>{-1, 0, 1, 2, 3, 4});
  }
  w.stop();
  std::vector<int> late{7, 8};
  CHECK(w.enqueue_all(late) == 0);  // stopped: all dropped
  CHECK(w.stats().dropped == 4);
}

TEST_CASE("wake_at: enqueue_all wakes the thread when its records cross the mark") {
  std::atomic<size_t> delivered{0};
  WorkerOptions opts;
  opts.wake_at = 5;
  opts.wake_interval = 600s;  // the timer never fires during this test
  Worker<int> w(
      [&](std::vector<int>& batch, WorkerContext&) {
        delivered += batch.size();
        return BatchResult{batch.size(), 0};
      },
      opts);
  std::vector<int> below{0, 1, 2};
  w.enqueue_all(below);
  CHECK(testkit::stays_false_for([&] { return w.stats().queued != 3; }, 200ms));
  std::vector<int> across{3, 4, 5};  // the queue goes 4, 5 (the mark), 6
  w.enqueue_all(across);
  CHECK(testkit::wait_until([&] { return delivered.load() == 6; }));
}

TEST_CASE("a backlog makes the worker call again without new items and flush waits for it") {
  int calls = 0;
  std::vector<int> held;
  Worker<int> w([&](std::vector<int>& batch, WorkerContext&) {
    ++calls;
    held.insert(held.end(), batch.begin(), batch.end());
    if (calls < 4) return BatchResult::again_in(5ms);  // "server down": keep the items
    BatchResult r{held.size(), 0};
    held.clear();
    return r;
  });
  w.enqueue(1);
  w.enqueue(2);
  CHECK(w.flush(60s));
  CHECK(calls >= 4);
  CHECK(w.stats().delivered == 2);
  CHECK_FALSE(w.stats().backlog);
}

TEST_CASE("during a backlog enqueues below a full batch do not wake the thread and a full batch does") {
  // A handler that keeps everything for an hour (the wandb uploader between
  // two sends): each record the training thread queues meanwhile must not
  // wake the worker only for it to sleep again.
  WorkerOptions opts;
  opts.max_batch = 50;
  opts.thread_name = "th-test-backlog";
  std::atomic<int> calls{0};
  std::atomic<size_t> last_batch{0};
  Worker<int> w(
      [&](std::vector<int>& batch, WorkerContext&) {
        last_batch = batch.size();
        ++calls;
        batch.clear();
        return BatchResult::again_in(std::chrono::hours(1));
      },
      opts);
  w.enqueue(0);
  REQUIRE(testkit::wait_until([&] { return calls.load() == 1 && w.stats().backlog; }));
  const int64_t before = testkit::thread_wakeups("th-test-backlog");
  REQUIRE(before >= 0);
  for (int i = 1; i <= 49; ++i) {
    w.enqueue(i);
    // Paced like a training loop's steps, so that an enqueue that woke the
    // thread would find it asleep each time.
    std::this_thread::sleep_for(1ms);
  }
  CHECK(calls.load() == 1);
  // At most the one sleep the thread may not have begun before `before`.
  CHECK(testkit::thread_wakeups("th-test-backlog") - before <= 2);
  w.enqueue(50);  // the 50th queued item: a full batch
  CHECK(testkit::wait_until([&] { return calls.load() == 2; }));
  CHECK(last_batch.load() == 50);
  w.stop();
}

TEST_CASE("flush hands queued items over at once during a backlog, not after its delay") {
  // The wandb uploader's end-of-run mark: the handler holds lines until its
  // next transmit interval (a one-hour backlog delay here); the mark enqueued
  // before flush() must reach it now. Before, the worker slept out the delay.
  std::atomic<int> calls{0};
  std::vector<int> seen;
  Worker<int> w([&](std::vector<int>& batch, WorkerContext&) {
    ++calls;
    seen.insert(seen.end(), batch.begin(), batch.end());
    if (std::find(seen.begin(), seen.end(), 99) != seen.end()) return BatchResult{seen.size(), 0};
    return BatchResult::again_in(std::chrono::hours(1));
  });
  w.enqueue(1);
  while (!w.stats().backlog) std::this_thread::yield();
  w.enqueue(99);
  CHECK(w.flush(30s));  // never reached with the old wake rule (the delay is an hour)
  CHECK(calls == 2);
  CHECK(seen == std::vector<int>{1, 99});
}

TEST_CASE("take_queued: a handler busy with slow I/O takes the items queued meanwhile, in order") {
  Worker<int>* self = nullptr;
  std::atomic<bool> go{false};
  std::vector<int> seen;
  Worker<int> w([&](std::vector<int>& batch, WorkerContext&) {
    seen.insert(seen.end(), batch.begin(), batch.end());
    if (batch.front() == 0) {
      while (!go) std::this_thread::yield();  // "a request in flight"
      auto more = self->take_queued(2);
      seen.insert(seen.end(), more.begin(), more.end());
    }
    return BatchResult{batch.size(), 0};
  });
  self = &w;
  w.enqueue(0);
  while (w.stats().queued != 0) std::this_thread::yield();
  for (int i = 1; i <= 3; ++i) w.enqueue(i);
  go = true;
  REQUIRE(w.flush(30s));
  CHECK(seen == std::vector<int>{0, 1, 2, 3});  // 1, 2 taken early; 3 in the next batch
}

TEST_CASE("stop interrupts a handler's waits and returns what it never received") {
  std::atomic<int> calls{0};
  Worker<int> w([&](std::vector<int>& batch, WorkerContext& ctx) {
    ++calls;
    ctx.sleep_for(std::chrono::hours(1));  // interrupted by stop()
    return BatchResult{0, batch.size()};
  });
  w.enqueue(1);
  while (calls == 0) std::this_thread::yield();
  for (int i = 2; i <= 5; ++i) w.enqueue(i);
  CHECK_FALSE(w.flush(10ms));
  std::vector<int> rest = w.stop();
  CHECK(rest == std::vector<int>{2, 3, 4, 5});
  CHECK(w.stats().failed == 1);
  CHECK_FALSE(w.enqueue(6));
  CHECK(w.stop().empty());  // idempotent
}

TEST_CASE("a throwing handler fails its batch but the worker keeps going") {
  Worker<int> w([&](std::vector<int>& batch, WorkerContext&) -> BatchResult {
    if (batch.front() == 0) throw std::runtime_error("boom");
    return BatchResult{batch.size(), 0};
  });
  w.enqueue(0);
  REQUIRE(w.flush(60s));
  w.enqueue(1);
  REQUIRE(w.flush(60s));
  CHECK(w.stats().failed == 1);
  CHECK(w.stats().delivered == 1);
}

// ---- opt-in batched wake-ups (WorkerOptions::wake_at / wake_interval) ------

TEST_CASE("wake_at: enqueues below the mark do not wake the thread, reaching it hands over one batch") {
  std::mutex mu;
  std::vector<size_t> sizes;
  WorkerOptions opts;
  opts.wake_at = 5;
  opts.wake_interval = 600s;  // the timer never fires during this test
  Worker<int> w(
      [&](std::vector<int>& batch, WorkerContext&) {
        std::lock_guard<std::mutex> lock(mu);
        sizes.push_back(batch.size());
        return BatchResult{batch.size(), 0};
      },
      opts);
  for (int i = 0; i < 4; ++i) w.enqueue(i);
  // A woken thread would take them within microseconds; none does in 200 ms.
  CHECK(testkit::stays_false_for([&] { return w.stats().queued != 4; }, 200ms));
  w.enqueue(4);
  CHECK(testkit::wait_until([&] { return w.stats().delivered >= 5; }));
  CHECK(w.stats().delivered == 5);
  w.stop();
  std::lock_guard<std::mutex> lock(mu);
  REQUIRE(sizes.size() == 1);
  CHECK(sizes[0] == 5);
}

TEST_CASE("wake_at: below the mark, the timer picks the items up") {
  WorkerOptions opts;
  opts.wake_at = 1000;
  opts.wake_interval = 20ms;
  Worker<int> w([](std::vector<int>& batch, WorkerContext&) { return BatchResult{batch.size(), 0}; }, opts);
  for (int i = 0; i < 3; ++i) w.enqueue(i);
  // No flush: only the timer can hand them over.
  CHECK(testkit::wait_until([&] { return w.stats().delivered >= 3; }));
  CHECK(w.stats().delivered == 3);
  CHECK(w.stats().queued == 0);
}

TEST_CASE("wake_at: flush wakes the thread at once instead of waiting for the timer") {
  WorkerOptions opts;
  opts.wake_at = 1000;
  opts.wake_interval = 600s;
  std::vector<int> seen;
  Worker<int> w(
      [&](std::vector<int>& batch, WorkerContext&) {
        seen.insert(seen.end(), batch.begin(), batch.end());
        return BatchResult{batch.size(), 0};
      },
      opts);
  for (int i = 0; i < 10; ++i) w.enqueue(i);
  // Far below wake_interval: only the flush's wake-up can drain in time.
  REQUIRE(w.flush(60s));
  CHECK(w.stop().empty());
  CHECK(seen == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
}

TEST_CASE("wake_at: stop returns what the sleeping thread never took, a zero interval is refused") {
  WorkerOptions opts;
  opts.wake_at = 1000;
  opts.wake_interval = 600s;
  Worker<int> w([](std::vector<int>& batch, WorkerContext&) { return BatchResult{batch.size(), 0}; }, opts);
  for (int i = 0; i < 3; ++i) w.enqueue(i);
  CHECK(w.stop() == std::vector<int>{0, 1, 2});

  WorkerOptions bad;
  bad.wake_at = 10;
  bad.wake_interval = 0ms;
  CHECK_THROWS_AS(Worker<int>(
                      [](std::vector<int>& b, WorkerContext&) {
                        return BatchResult{b.size(), 0};
                      },
                      bad),
                  std::invalid_argument);
}

// ---- opt-in superseding (Worker::Supersede) ------------------------------------

namespace {
// Items are group * 100 + sequence; a newer item of the same group supersedes.
bool same_group(const int& newer, int& waiting) { return newer / 100 == waiting / 100; }
}  // namespace

TEST_CASE("supersede: while the handler is busy a newer item replaces the waiting one of its group") {
  std::atomic<bool> release{false};
  std::atomic<int> calls{0};
  std::vector<int> seen;
  WorkerOptions opts;
  opts.max_batch = 1;
  Worker<int> w(
      [&](std::vector<int>& batch, WorkerContext& ctx) {
        ++calls;
        seen.insert(seen.end(), batch.begin(), batch.end());
        while (!release && !ctx.stopping()) ctx.sleep_for(1ms);
        return BatchResult{batch.size(), 0};
      },
      opts, same_group);
  std::optional<int> replaced;
  CHECK(w.enqueue(101, &replaced));
  while (calls == 0) std::this_thread::yield();  // 101 is being handled
  CHECK(w.enqueue(102, &replaced));
  CHECK_FALSE(replaced);
  CHECK(w.enqueue(201, &replaced));  // another group: nothing to replace
  CHECK_FALSE(replaced);
  CHECK(w.enqueue(103, &replaced));
  REQUIRE(replaced);
  CHECK(*replaced == 102);
  replaced.reset();
  CHECK(w.enqueue(104));  // without a place for the replaced item nothing is replaced
  release = true;
  REQUIRE(w.flush(60s));
  CHECK(seen == std::vector<int>{101, 201, 103, 104});
  CHECK(w.stats().superseded == 1);
  CHECK(w.stats().delivered == 4);
}

TEST_CASE("supersede: items waiting for an idle thread that has not woken up are never replaced") {
  WorkerOptions opts;
  opts.wake_at = 1000;  // the thread sleeps through these enqueues
  opts.wake_interval = std::chrono::hours(1);
  std::vector<int> seen;
  Worker<int> w(
      [&](std::vector<int>& batch, WorkerContext&) {
        seen.insert(seen.end(), batch.begin(), batch.end());
        return BatchResult{batch.size(), 0};
      },
      opts, same_group);
  std::optional<int> replaced;
  for (int i : {101, 102, 103}) {
    CHECK(w.enqueue(i, &replaced));
    CHECK_FALSE(replaced);
  }
  REQUIRE(w.flush(60s));
  CHECK(seen == std::vector<int>{101, 102, 103});
  CHECK(w.stats().superseded == 0);
}

TEST_CASE("on_stop: a hook runs when the stop flag goes up and at once when it is up already") {
  std::atomic<int> stopped{0};
  std::atomic<bool> hooked{false};
  Worker<int> w([&](std::vector<int>& batch, WorkerContext& ctx) {
    ctx.on_stop([&] { ++stopped; });
    hooked = true;
    ctx.sleep_for(std::chrono::hours(1));  // interrupted by stop()
    return BatchResult{batch.size(), 0};
  });
  w.enqueue(1);
  while (!hooked) std::this_thread::yield();
  CHECK(stopped == 0);
  w.stop();
  CHECK(stopped == 1);
  WorkerContext ctx;
  ctx.request_stop();
  int late = 0;
  ctx.on_stop([&] { ++late; });
  CHECK(late == 1);
  ctx.request_stop();  // hooks run once
  CHECK(late == 1);
}
