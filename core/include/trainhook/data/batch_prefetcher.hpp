// Background batch preparation (--dataloader_num_workers): worker threads build
// the batches of an epoch (gather, widen, the dataset's hooks, pinning) up to
// `depth` ahead of the one the training thread takes, which gets them in the
// sampler's order. The batches are the ones 0 workers would build: a batch
// depends only on its indices, never on which thread or when.
#pragma once

#include <trainhook/data/tensor_dataset.hpp>

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace trainhook {

class BatchPrefetcher {
 public:
  // Prepares batches[first..] with `workers` threads, at most `depth` batches
  // ahead of the one taken. `finish` (may be empty) runs on each batch after
  // the dataset built it (e.g. pinning). workers 0: next() builds on the caller.
  BatchPrefetcher(const TensorDataset& dataset, const std::vector<torch::Tensor>& batches, int64_t first,
                  int64_t workers, int64_t depth, std::function<void(Batch&)> finish = {});
  // Stops the workers (a batch being built is finished and dropped) and joins them.
  ~BatchPrefetcher();
  BatchPrefetcher(const BatchPrefetcher&) = delete;
  BatchPrefetcher& operator=(const BatchPrefetcher&) = delete;

  // Batch `i` (i = first, first + 1, ... in turn). An error raised while
  // building it is thrown here, on the caller's thread, as std::runtime_error
  // naming the batch, its first sample index and where that sample is
  // (file and sample), then the error.
  Batch take(int64_t i);

 private:
  Batch build(int64_t i) const;
  void work();

  const TensorDataset& dataset_;
  const std::vector<torch::Tensor>& batches_;
  std::function<void(Batch&)> finish_;
  int64_t depth_;
  std::mutex mutex_;
  std::condition_variable ready_;  // a batch was built (the consumer waits)
  std::condition_variable room_;   // a batch was taken (workers wait for room)
  int64_t next_claim_;             // the next batch a worker builds
  int64_t taken_;                  // batches before this one were taken
  bool stop_ = false;
  std::map<int64_t, Batch> done_;
  std::map<int64_t, std::exception_ptr> failed_;
  std::vector<std::thread> threads_;
};

}  // namespace trainhook
