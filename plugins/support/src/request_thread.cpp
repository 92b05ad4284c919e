#include <trainhook/support/request_thread.hpp>

#include <utility>

namespace trainhook::support {

RequestThread::RequestThread() : thread_([this] { loop(); }) {}

RequestThread::~RequestThread() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    quit_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void RequestThread::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return quit_ || has_job_; });
    if (quit_) return;
    has_job_ = false;
    HttpClient* http = http_;
    const HttpRequest* request = request_;
    lock.unlock();
    HttpResponse got = http->perform(*request);
    lock.lock();
    response_ = std::move(got);
    done_ = true;
    cv_.notify_all();
  }
}

HttpResponse RequestThread::perform(HttpClient& http, const HttpRequest& request,
                                    const std::function<void()>& while_waiting,
                                    std::chrono::milliseconds poll) {
  if (poll.count() <= 0) poll = std::chrono::milliseconds(1);
  {
    std::lock_guard<std::mutex> lock(mu_);
    http_ = &http;
    request_ = &request;
    done_ = false;
    has_job_ = true;
  }
  cv_.notify_all();
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, poll, [&] { return done_; })) {
    if (!while_waiting) continue;
    // Not under the lock: the caller's work (taking in queued records,
    // writing them to disk) must not hold up the request's completion.
    lock.unlock();
    while_waiting();
    lock.lock();
  }
  http_ = nullptr;
  request_ = nullptr;
  return std::move(response_);
}

}  // namespace trainhook::support
