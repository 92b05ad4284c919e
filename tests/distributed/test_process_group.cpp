// ProcessGroup: the collectives the trainer needs, on two ranks in one process
// (two threads, a TCPStore and Gloo on 127.0.0.1), and the error a rank gets
// when its peer has gone.
#include "two_ranks.hpp"

#include <trainhook/distributed/process_group.hpp>

#include <torch/torch.h>

#include <doctest/doctest.h>

#include <string>
#include <vector>

using trainhook::distributed::ProcessGroup;
using trainhook::test::on_two_ranks;

TEST_CASE("ranks and size come from the launch environment") {
  int ranks[2] = {-1, -1};
  int sizes[2] = {0, 0};
  on_two_ranks([&](int rank, const std::shared_ptr<ProcessGroup>& g) {
    ranks[rank] = g->rank();
    sizes[rank] = g->size();
  });
  CHECK(ranks[0] == 0);
  CHECK(ranks[1] == 1);
  CHECK(sizes[0] == 2);
  CHECK(sizes[1] == 2);
}

TEST_CASE("all_reduce_sum and all_reduce_max combine element-wise over ranks") {
  torch::Tensor sums[2], maxes[2];
  on_two_ranks([&](int rank, const std::shared_ptr<ProcessGroup>& g) {
    std::vector<torch::Tensor> s{torch::tensor({1.0 + rank, 10.0 * rank}, torch::kDouble)};
    g->all_reduce_sum(s, "test sum");
    std::vector<torch::Tensor> m{torch::tensor({rank, 1 - rank, 0}, torch::kInt)};
    g->all_reduce_max(m, "test max");
    sums[rank] = s[0];
    maxes[rank] = m[0];
  });
  for (int r = 0; r < 2; ++r) {
    CHECK(torch::equal(sums[r], torch::tensor({3.0, 10.0}, torch::kDouble)));
    CHECK(torch::equal(maxes[r], torch::tensor({1, 1, 0}, torch::kInt)));
  }
}

TEST_CASE("start_all_reduce_sum returns at once and wait() leaves the sum in place") {
  torch::Tensor out[2];
  on_two_ranks([&](int rank, const std::shared_ptr<ProcessGroup>& g) {
    auto flat = torch::full({4}, static_cast<float>(rank + 1));
    auto first = g->start_all_reduce_sum(flat, "test bucket 0");
    auto other = torch::full({2}, 5.0f);
    auto second = g->start_all_reduce_sum(other, "test bucket 1");
    first.wait();
    second.wait();
    second.wait();  // a second wait is harmless
    out[rank] = torch::cat({flat, other});
  });
  for (int r = 0; r < 2; ++r) CHECK(torch::equal(out[r], torch::tensor({3.f, 3.f, 3.f, 3.f, 10.f, 10.f})));
}

TEST_CASE("gather_rows concatenates every rank's rows in rank order, whatever their count") {
  torch::Tensor out[2];
  on_two_ranks([&](int rank, const std::shared_ptr<ProcessGroup>& g) {
    // Rank 0 holds two rows, rank 1 one; then rank 1 none at all.
    const auto local =
        rank == 0 ? torch::tensor({{1, 2}, {3, 4}}, torch::kLong) : torch::tensor({{5, 6}}, torch::kLong);
    out[rank] = g->gather_rows(local, "test rows");
    const auto none = rank == 0 ? torch::tensor({{7, 8}}, torch::kLong) : torch::zeros({0, 2}, torch::kLong);
    out[rank] = torch::cat({out[rank], g->gather_rows(none, "test rows 2")});
  });
  const auto want = torch::tensor({{1, 2}, {3, 4}, {5, 6}, {7, 8}}, torch::kLong);
  CHECK(torch::equal(out[0], want));
  CHECK(torch::equal(out[1], want));
}

TEST_CASE("broadcast_from_rank0 gives every rank rank 0's tensors, also non-contiguous ones") {
  torch::Tensor got[2], column[2];
  on_two_ranks([&](int rank, const std::shared_ptr<ProcessGroup>& g) {
    auto a = torch::full({3}, static_cast<float>(rank == 0 ? 7 : -1));
    auto m = torch::arange(6, torch::kFloat).reshape({2, 3}) * (rank == 0 ? 1 : 100);
    auto col = m.t();  // a non-contiguous view
    trainhook::distributed::broadcast_from_rank0(*g, {a, col});
    got[rank] = a;
    column[rank] = m;
  });
  CHECK(torch::equal(got[1], torch::full({3}, 7.0f)));
  CHECK(torch::equal(column[1], torch::arange(6, torch::kFloat).reshape({2, 3})));
  CHECK(torch::equal(column[0], column[1]));
}

TEST_CASE("a rank whose peer has gone gets a CollectiveError naming this rank, the operation and the peer") {
  std::string message;
  CHECK_THROWS_AS(on_two_ranks(
                      [&](int rank, const std::shared_ptr<ProcessGroup>& g) {
                        g->barrier("both alive");
                        if (rank == 1) return;  // rank 1 leaves; its group closes its connections
                        std::vector<torch::Tensor> t{torch::ones({2})};
                        try {
                          g->all_reduce_sum(t, "after the peer left");
                        } catch (const trainhook::distributed::CollectiveError& e) {
                          message = e.what();
                          throw;
                        }
                      },
                      std::chrono::seconds(10)),
                  trainhook::distributed::CollectiveError);
  CHECK(message.find("rank 0 of 2") != std::string::npos);
  CHECK(message.find("after the peer left") != std::string::npos);
  CHECK(message.find("rank 1 (the only other rank)") != std::string::npos);
}
