// SharedMemoryAllReduce on two ranks in one process (two threads, each with its
// own mapping of one segment): sums and maxima of every size class (one
// exchange up to 64 KB, reduce-scatter in chunks above), bit for bit what the
// element-wise sum gives; the errors of a segment that cannot be opened and of
// a peer that leaves or never comes. The same path inside a ProcessGroup is
// checked by test_process_group.cpp and the data-parallel tests.
#include "two_ranks.hpp"

#include <trainhook/distributed/process_group.hpp>
#include <trainhook/distributed/shared_memory_all_reduce.hpp>

#include <torch/torch.h>

#include <doctest/doctest.h>

#include <unistd.h>

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <thread>

using trainhook::distributed::SharedMemoryAllReduce;
using Op = SharedMemoryAllReduce::Op;

namespace {

std::string segment_name() {
  static int n = 0;
  return "/trainhook-test-" + std::to_string(::getpid()) + "-" + std::to_string(n++);
}

struct Segment {
  std::unique_ptr<SharedMemoryAllReduce> zero, one;
};

// Rank 0 creates (slots of 1 MB, so 2.5 MB takes three chunks), rank 1
// attaches; the name is removed once both have it.
Segment make_segment() {
  const auto name = segment_name();
  std::string why;
  Segment s;
  s.zero = SharedMemoryAllReduce::create(name, 2, 1 << 20, why);
  REQUIRE_MESSAGE(s.zero, why);
  s.one = SharedMemoryAllReduce::attach(name, 1, 2, why);
  s.zero->unlink();
  REQUIRE_MESSAGE(s.one, why);
  return s;
}

// `body` runs on both ranks at once.
void on_segment(const std::function<void(int, SharedMemoryAllReduce&)>& body) {
  Segment seg = make_segment();
  SharedMemoryAllReduce& zero = *seg.zero;
  SharedMemoryAllReduce& one = *seg.one;
  std::exception_ptr failed;
  std::thread t([&] {
    try {
      body(1, one);
    } catch (...) {
      failed = std::current_exception();
    }
  });
  body(0, zero);
  t.join();
  if (failed) std::rethrow_exception(failed);
}

constexpr std::chrono::milliseconds kTimeout{20000};

}  // namespace

TEST_CASE("sums and maxima over two ranks equal the element-wise ones, bit for bit, at every size") {
  for (const int64_t n : {int64_t{1}, int64_t{5}, int64_t{1000}, int64_t{16384}, int64_t{16385},
                          int64_t{300000}, int64_t{655360}}) {
    CAPTURE(n);
    torch::manual_seed(7);
    const torch::Tensor in[2] = {torch::randn({n}), torch::randn({n}) * 1e-3};
    torch::Tensor sum[2], max[2];
    on_segment([&](int rank, SharedMemoryAllReduce& shm) {
      sum[rank] = in[rank].clone();
      shm.all_reduce(sum[rank], Op::sum, kTimeout);
      max[rank] = in[rank].clone();
      shm.all_reduce(max[rank], Op::max, kTimeout);
    });
    for (int r = 0; r < 2; ++r) {
      CHECK(torch::equal(sum[r], in[0] + in[1]));
      CHECK(torch::equal(max[r], torch::maximum(in[0], in[1])));
    }
  }
}

TEST_CASE("integers and doubles, and many all-reduces in a row, reuse the areas safely") {
  torch::Tensor ints[2], doubles[2];
  on_segment([&](int rank, SharedMemoryAllReduce& shm) {
    ints[rank] = torch::zeros({3}, torch::kLong);
    doubles[rank] = torch::zeros({200000}, torch::kDouble);
    for (int i = 0; i < 50; ++i) {
      auto step = torch::tensor({int64_t{1}, int64_t{rank}, int64_t{i}}, torch::kLong);
      shm.all_reduce(step, Op::sum, kTimeout);
      ints[rank] += step;
      auto d = torch::full({200000}, static_cast<double>(rank + i), torch::kDouble);
      shm.all_reduce(d, Op::sum, kTimeout);
      doubles[rank] += d;
    }
  });
  // Per round: {2, 1, 2i}; doubles: (0+i) + (1+i) = 2i + 1.
  for (int r = 0; r < 2; ++r) {
    CHECK(torch::equal(ints[r], torch::tensor({int64_t{100}, int64_t{50}, int64_t{2450}}, torch::kLong)));
    CHECK(torch::equal(doubles[r], torch::full({200000}, 2500.0, torch::kDouble)));
  }
}

TEST_CASE("a segment that does not exist is refused with the reason") {
  std::string why;
  CHECK_FALSE(
      SharedMemoryAllReduce::attach("/trainhook-test-missing-" + std::to_string(::getpid()), 1, 2, why));
  CHECK(why.find("shm_open") != std::string::npos);
}

TEST_CASE("a peer that never comes ends the wait after the timeout, naming the rank") {
  Segment seg = make_segment();  // rank 1 attached, silent
  auto& zero = seg.zero;
  auto t = torch::ones({4});
  const auto start = std::chrono::steady_clock::now();
  std::string message;
  try {
    zero->all_reduce(t, Op::sum, std::chrono::milliseconds(300));
  } catch (const std::runtime_error& e) {
    message = e.what();
  }
  CHECK(message.find("no answer from rank 1") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  // The segment is unusable after a failure.
  CHECK_THROWS_AS(zero->all_reduce(t, Op::sum, std::chrono::milliseconds(300)), std::runtime_error);
}

TEST_CASE("a peer that leaves fails the wait at once, long before the timeout") {
  Segment seg = make_segment();
  auto& zero = seg.zero;
  seg.one.reset();  // rank 1 leaves
  auto t = torch::ones({300000});
  const auto start = std::chrono::steady_clock::now();
  std::string message;
  try {
    zero->all_reduce(t, Op::sum, std::chrono::minutes(10));
  } catch (const std::runtime_error& e) {
    message = e.what();
  }
  CHECK(message.find("rank 1 left the group") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(60));
}

TEST_CASE(
    "a ProcessGroup of ranks on one machine all-reduces through shared memory unless TRAINHOOK_DDP_SHM=0") {
  bool shm[2] = {false, false};
  trainhook::test::on_two_ranks(
      [&](int rank, const std::shared_ptr<trainhook::distributed::ProcessGroup>& g) {
        shm[rank] = g->all_reduces_in_shared_memory();
      });
  CHECK(shm[0]);
  CHECK(shm[1]);
  ::setenv("TRAINHOOK_DDP_SHM", "0", 1);
  torch::Tensor sums[2];
  trainhook::test::on_two_ranks(
      [&](int rank, const std::shared_ptr<trainhook::distributed::ProcessGroup>& g) {
        shm[rank] = g->all_reduces_in_shared_memory();
        std::vector<torch::Tensor> t{torch::full({3}, 1.0f + static_cast<float>(rank))};
        g->all_reduce_sum(t, "through Gloo");
        sums[rank] = t[0];
      });
  ::unsetenv("TRAINHOOK_DDP_SHM");
  CHECK_FALSE(shm[0]);
  CHECK_FALSE(shm[1]);
  for (const auto& s : sums) CHECK(torch::equal(s, torch::full({3}, 3.0f)));
}
