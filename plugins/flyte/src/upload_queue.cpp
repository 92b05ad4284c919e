#include <trainhook/flyte/upload_queue.hpp>

#include <exception>

namespace trainhook::flyte {

const char* to_string(UploadOutcome::Status s) noexcept {
  switch (s) {
    case UploadOutcome::Status::uploaded:
      return "uploaded";
    case UploadOutcome::Status::failed:
      return "failed";
    case UploadOutcome::Status::superseded:
      return "superseded";
    case UploadOutcome::Status::not_started:
      return "not started";
    case UploadOutcome::Status::in_progress:
      return "in progress";
  }
  return "?";
}

UploadQueue::UploadQueue(support::Logger log) : log_(std::move(log)) {}

UploadQueue::~UploadQueue() { shutdown(); }

size_t UploadQueue::enqueue(UploadJob job) {
  std::function<void()> superseded_cleanup;
  size_t index = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      outcomes_.push_back({job.name, UploadOutcome::Status::not_started, "the uploader was already stopped"});
      index = outcomes_.size() - 1;
      superseded_cleanup = std::move(job.cleanup);
    } else {
      // Only while a job runs: a job waiting for an idle worker that has not
      // woken up yet is not "behind".
      for (auto it = waiting_.begin(); running_ && it != waiting_.end(); ++it) {
        if (it->job.group != job.group) continue;
        outcomes_[it->outcome].status = UploadOutcome::Status::superseded;
        outcomes_[it->outcome].detail = "replaced by " + job.name + " before its upload started";
        log_(LogLevel::warn, "uploads are behind training: " + it->job.name + " is skipped, " + job.name +
                                 " will be uploaded instead");
        superseded_cleanup = std::move(it->job.cleanup);
        waiting_.erase(it);
        break;
      }
      outcomes_.push_back({job.name, UploadOutcome::Status::in_progress, "waiting"});
      index = outcomes_.size() - 1;
      waiting_.push_back({std::move(job), index});
      if (!thread_.joinable()) thread_ = std::thread([this] { worker(); });
    }
  }
  cv_.notify_all();
  if (superseded_cleanup) superseded_cleanup();
  return index;
}

void UploadQueue::finish(Entry& e, UploadOutcome::Status s, const std::string& detail) {
  if (e.job.cleanup) {
    try {
      e.job.cleanup();
    } catch (...) {  // cleanup is best effort; the upload result stands
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  outcomes_[e.outcome].status = s;
  outcomes_[e.outcome].detail = detail;
  running_ = false;
}

void UploadQueue::worker() {
  for (;;) {
    Entry e;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !waiting_.empty(); });
      if (stopping_) return;
      e = std::move(waiting_.front());
      waiting_.pop_front();
      running_ = true;
    }
    try {
      e.job.run(cancel_);
      finish(e, UploadOutcome::Status::uploaded, "");
    } catch (const std::exception& ex) {
      log_(LogLevel::error, "upload of " + e.job.name + " failed: " + ex.what());
      finish(e, UploadOutcome::Status::failed, ex.what());
    } catch (...) {
      finish(e, UploadOutcome::Status::failed, "unknown error");
    }
    cv_.notify_all();
  }
}

bool UploadQueue::wait_idle(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return !running_ && waiting_.empty(); });
}

void UploadQueue::shutdown() {
  std::deque<Entry> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
    dropped.swap(waiting_);
    for (auto& e : dropped) {
      outcomes_[e.outcome].status = UploadOutcome::Status::not_started;
      outcomes_[e.outcome].detail = "the uploader stopped before it started";
    }
  }
  cancel_.cancel();
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  for (auto& e : dropped)
    if (e.job.cleanup) e.job.cleanup();
}

std::vector<UploadOutcome> UploadQueue::outcomes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return outcomes_;
}

}  // namespace trainhook::flyte
