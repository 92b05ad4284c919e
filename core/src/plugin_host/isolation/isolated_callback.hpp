// IsolatedCallback: the trainer's side of a plugin callback that runs in its
// own process (trainhook-plugin-runner, see plugin_runner.cpp). Each call
// (event, save_state, load_state) crosses a socket pair (isolation_protocol);
// while it waits for the answer it serves what the plugin asks of the host
// (logs, stop requests, metrics, learning rates, trainer state) from the real
// HostServices. The plugin's library is never loaded in this process.
// Events the plugin declared it only observes (th_host.set_observe_only) do
// not wait: on_event copies them into the event ring shared with the helper
// and returns (a full ring drops the event, counted and reported at train end
// and destruction, naming the callback). The helper runs them before the
// next call, so a call that waits (an event that may steer, save_state, train
// end, destroy) waits for them too, within the same timeout. What the helper
// sent unasked meanwhile (logs, stop requests, a failed observed event, a
// plugin thread's request) is served at the next push once the helper flagged
// it in the ring, and at least every wake_policy::kServeInterval.
// Calls after create go into the ring as well when they fit (a futex wake is
// cheaper than a socket write and the runner's reader thread hand-over); the
// answer and everything the helper sends still come over the socket.
//
// The helper is not trusted. Each call carries a number its answer must carry
// back; an answer with another number, or one when none is due, kills it. The
// process itself is watched (a pidfd), not only the socket, so its death is
// seen at once with its cause even when a child of it holds the socket.
//
// Failure: when the helper dies (a signal, exit()), closes its end, breaks
// the protocol or does not answer within the timeout, the call throws a
// message naming the file, the callback, the call and the cause; the helper
// is then killed and reaped, and every later call fails at once with the same
// cause (no second wait).
//
// Ownership: the object owns the helper process and its socket; destroying it
// asks the helper to destroy the plugin instance, then reaps it (killing it
// after the timeout). `host` must outlive the object, as for PluginCallback.
#pragma once

#include "event_ring.hpp"
#include "isolation_protocol.hpp"

#include <trainhook/callbacks/callback.hpp>
#include <trainhook/plugin_host/host/host_services.hpp>

#include <sys/types.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <string>

namespace trainhook::detail {

class IsolatedCallback final : public InternalCallback {
 public:
  // Throws PluginError naming the file when the helper cannot be started or
  // the plugin's create() fails there.
  IsolatedCallback(std::filesystem::path library, std::string callback, HostServices& host,
                   const std::string& config_json, double timeout_seconds);
  ~IsolatedCallback() override;
  IsolatedCallback(const IsolatedCallback&) = delete;
  IsolatedCallback& operator=(const IsolatedCallback&) = delete;

  std::string name() const override { return name_; }
  // The plugin's events, and on_step_end besides: at every step end what a
  // plugin thread sent unasked (a stop request, a log) is served, also for a
  // plugin that has no event there, so it reaches the trainer by the next
  // step boundary as in process.
  uint64_t event_mask() const override { return mask_ | TH_EVENT_BIT(TH_EVENT_STEP_END); }
  bool critical() const override { return critical_; }
  bool isolated() const noexcept override { return true; }
  void on_event(EventId event, const th_event_args& args) override;
  // The waited events the plugin declared side by side (th_host.set_side_by_side):
  // begin_event sends the call, end_event takes its answer.
  uint64_t deferred_events() const noexcept override { return side_by_side_; }
  void begin_event(EventId event, const th_event_args& args) override;
  void end_event(EventId event) override;
  std::optional<nlohmann::json> save_state() override;
  void load_state(const nlohmann::json& state) override;

  pid_t helper_pid() const noexcept { return pid_; }
  // The events that go through the ring (what the plugin declared, less
  // TRAIN_END and EXCEPTION, which are always waited for).
  uint64_t observed_mask() const noexcept { return observed_; }
  // Observe-only events dropped so far because the ring was full.
  uint64_t dropped_events() const noexcept { return ring_.dropped(); }

 private:
  void spawn();
  // out_ begins call `type` under the next call number.
  void begin_call(isolation::Msg type);
  // Sends out_'s message, then serves the helper's notices and requests until
  // its answer `expected` arrives (left in channel_). Throws on failure.
  void exchange(isolation::Msg expected, const char* what);
  // The two halves of exchange.
  void send(isolation::Msg expected, const char* what);
  void await_answer(isolation::Msg expected, const char* what);
  // A waited event's call, and its answer: the flags the plugin set.
  void send_event(EventId event, const th_event_args& args);
  th_control await_event(EventId event);
  void serve_request();
  // An observe-only event: into the ring, no wait.
  void push_observed(EventId event, const th_event_args& args);
  // Serves what the helper sent without waiting for anything more.
  void serve_waiting(const char* what);
  // Throws the failure of an observed event the helper reported, once.
  void throw_observed_failure();
  // Warns of the drops not reported yet, by event.
  void report_drops() noexcept;
  [[noreturn]] void fail(const char* what, const std::string& cause);
  // Waits for the helper to end (after EOF) and describes how it ended.
  std::string reap();
  void kill_and_reap() noexcept;
  // Reads the number, status + message that start a Done; throws the plugin's error.
  void check_done();
  // Serves what the helper sent unasked when it flagged some, or when it is time.
  void serve_unasked(EventId event);

  std::filesystem::path library_;
  std::string name_;
  HostServices& host_;
  std::chrono::steady_clock::duration timeout_;
  double timeout_seconds_;
  pid_t pid_ = -1;
  int pidfd_ = -1;  // watched with the socket: the helper's death, whoever holds its socket
  int fd_ = -1;
  isolation::Channel channel_{-1};
  isolation::Writer out_;    // the call being sent
  isolation::Writer reply_;  // answers to the helper's requests
  std::string dead_;         // set once the helper is gone: why
  std::chrono::steady_clock::time_point sent_at_{};  // of the call being answered
  uint64_t calls_ = 0;        // the number of the last call sent
  uint32_t unasked_seen_ = 0;  // the helper's unasked count served so far
  bool end_now_sent_ = false;
  int stop_signal_sent_ = 0;  // the th_host.stop_signal the runner was last told
  uint64_t mask_ = 0;
  uint64_t observed_ = 0;
  uint64_t side_by_side_ = 0;  // waited events whose call may overlap the next callbacks'
  th_control sent_control_{};  // the flags a side-by-side call was sent with
  bool ring_calls_ = false;   // the runner reads calls from the ring (after Create)
  bool socket_next_ = false;  // the next call crosses the socket (after a StopSignal notice)
  isolation::EventRing ring_;
  isolation::Writer observed_out_;  // the observed event being pushed
  std::chrono::steady_clock::time_point next_serve_{};
  std::array<uint64_t, TH_EVENT_COUNT> dropped_by_event_{};
  uint64_t drops_reported_ = 0;
  std::string observed_failure_;  // from the helper's Failed notice, not thrown yet
  bool critical_ = false;
  bool has_save_state_ = false;
  bool has_load_state_ = false;
};

}  // namespace trainhook::detail
