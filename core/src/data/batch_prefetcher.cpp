#include <trainhook/data/batch_prefetcher.hpp>

#include <stdexcept>

namespace trainhook {

BatchPrefetcher::BatchPrefetcher(const TensorDataset& dataset, const std::vector<torch::Tensor>& batches,
                                 int64_t first, int64_t workers, int64_t depth,
                                 std::function<void(Batch&)> finish)
    : dataset_(dataset),
      batches_(batches),
      finish_(std::move(finish)),
      depth_(std::max<int64_t>(depth, 1)),
      next_claim_(first),
      taken_(first) {
  for (int64_t w = 0; w < workers; ++w) threads_.emplace_back([this] { work(); });
}

BatchPrefetcher::~BatchPrefetcher() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  room_.notify_all();
  for (auto& t : threads_) t.join();
}

Batch BatchPrefetcher::build(int64_t i) const {
  const auto& indices = batches_[static_cast<size_t>(i)];
  try {
    Batch b = dataset_.get(indices);
    if (finish_) finish_(b);
    return b;
  } catch (const std::exception& e) {
    const int64_t sample = indices.numel() > 0 ? indices[0].item<int64_t>() : -1;
    throw std::runtime_error(
        "data batch " + std::to_string(i) + " (first sample index " + std::to_string(sample) +
        (sample >= 0 ? ", " + dataset_.locate(sample) : std::string()) + "): " + e.what());
  }
}

void BatchPrefetcher::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    room_.wait(lock, [&] {
      return stop_ || (next_claim_ < static_cast<int64_t>(batches_.size()) && next_claim_ < taken_ + depth_);
    });
    if (stop_) return;
    const int64_t i = next_claim_++;
    lock.unlock();
    Batch b;
    std::exception_ptr error;
    try {
      b = build(i);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (error) {
      failed_.emplace(i, error);
    } else {
      done_.emplace(i, std::move(b));
    }
    ready_.notify_all();
  }
}

Batch BatchPrefetcher::take(int64_t i) {
  if (threads_.empty()) {
    taken_ = i + 1;
    return build(i);
  }
  std::unique_lock<std::mutex> lock(mutex_);
  ready_.wait(lock, [&] { return done_.count(i) > 0 || failed_.count(i) > 0; });
  taken_ = i + 1;
  room_.notify_all();
  if (const auto f = failed_.find(i); f != failed_.end()) {
    const auto error = f->second;
    failed_.erase(f);
    std::rethrow_exception(error);
  }
  Batch b = std::move(done_.at(i));
  done_.erase(i);
  return b;
}

}  // namespace trainhook
