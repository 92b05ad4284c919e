// One long-lived thread that performs a plugin worker's HTTP requests, so the
// worker keeps taking in what the training thread queues while a request is
// in flight (and can spill it to disk) instead of letting the queue grow with
// the length of the request. Used by the wandb file stream and the mlflow
// sender (memory flat in the number of metrics logged).
//
// Bounded: one request at a time (perform() waits for it); one thread for the
// owner's lifetime, not one per request, since each new thread may get a
// malloc arena of its own and grow the RSS with the run.
//
// Stopping: a request in flight ends when its HttpClient's abort_flag is set
// (e.g. WorkerContext::abort_flag()); the destructor waits for it to end.
// Ownership: the owner's thread calls perform(); the client and request must
// outlive that call. Not for use from several threads at once.
#pragma once

#include <trainhook/support/http_client.hpp>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace trainhook::support {

class RequestThread {
 public:
  RequestThread();  // starts the thread
  ~RequestThread();
  RequestThread(const RequestThread&) = delete;
  RequestThread& operator=(const RequestThread&) = delete;

  // Performs `request` with `http` on the thread and returns its response.
  // Meanwhile calls while_waiting (if set) on the calling thread every `poll`
  // until the request ends; it must not use `http`. The default is short
  // enough that a bounded queue of a step's records does not fill during a
  // slow request, and long enough that a waiting worker does not wake (and
  // preempt the training thread) many times per step.
  HttpResponse perform(HttpClient& http, const HttpRequest& request,
                       const std::function<void()>& while_waiting,
                       std::chrono::milliseconds poll = std::chrono::milliseconds(50));

 private:
  void loop();

  std::mutex mu_;
  std::condition_variable cv_;
  bool has_job_ = false;
  bool done_ = false;
  bool quit_ = false;
  HttpClient* http_ = nullptr;
  const HttpRequest* request_ = nullptr;
  HttpResponse response_;
  std::thread thread_;  // last: started once the rest exists
};

}  // namespace trainhook::support
