// The wire protocol between the trainer (IsolatedCallback) and
// trainhook-plugin-runner, the helper process that runs an isolated plugin
// callback. Both ends are built from the same sources, so fixed-size ABI
// structs (th_state, th_control, th_step_values) cross as their bytes; what
// they point to (strings, th_values arrays) crosses as length-prefixed data.
//
// A message is: u32 payload length | u8 type | payload. The trainer sends a
// call (Create, Event, SaveState, LoadState, Shutdown) whose payload starts
// with its number (u64, counting from 1), and reads until the Done (Created)
// that starts with the same number: an answer with another number, or one
// when none is due, is a breach, and the helper is killed. In between the runner may send notices (Log, Stop, Failed), which
// need no answer, and requests (Req*), each answered by one Reply before the
// runner sends anything else for that requester.
//
// Events the plugin only observes (th_host.set_observe_only) do not cross the
// socket: the trainer writes the same message as Observed into an EventRing
// (event_ring.hpp) shared on descriptor kRingFd, and the runner runs them
// before the next call it reads, so the plugin sees every event in order.
// Calls after Create go through the ring too when they fit (a futex wake
// instead of a socket write and the reader thread's hand-over); their Done
// and everything else the runner sends still cross the socket. An Observed
// record carries call number 0 (nothing answers it).
//
// Buffers (Writer, Channel's input) keep their capacity from one message to
// the next: the per-event path allocates nothing once warm.
#pragma once

#include <trainhook/abi.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trainhook::detail::isolation {

// Bumped whenever a message or the event ring's shared header changes; the
// runner refuses another version.
constexpr uint32_t kProtocolVersion = 6;
// The descriptor the runner finds its end of the socket pair on.
constexpr int kRunnerFd = 3;
// The descriptor the runner finds the event ring on.
constexpr int kRingFd = 4;

enum class Msg : uint8_t {
  // trainer -> runner
  // Every call's payload starts with its number (u64), and so do Created and Done.
  Create = 1,      // version, library, callback, config, output_dir, args json, run name, model description
  Event = 2,       // th_event_args (see write_event)
  SaveState = 3,   //
  LoadState = 4,   // state json
  Shutdown = 5,    //
  EndNow = 6,      // the trainer must end now (th_host.end_requested); no answer
  Reply = 7,       // the answer to a runner's request
  StopSignal = 8,  // i32 signal: a first signal stopped the run (th_host.stop_signal); no answer
  Observed = 9,    // ring only: an observe-only event (as Event), no answer
  // runner -> trainer
  Created = 20,  // ok, event_mask, critical, has save/load state, error, observe_only mask, reads ring,
                 // side_by_side mask
  Done = 21,     // status, message, [control | state text]
  Log = 22,      // level, message
  Stop = 23,     // reason
  Failed = 24,   // i32 event, message: an observed event failed (it had no Done to say so)
  ReqTrainerState = 30,
  ReqSetResume = 31,      // path -> refusal
  ReqLearningRates = 32,  // capacity -> refusal, count, values
  ReqSetLrFactor = 33,    // factor -> refusal
  ReqLrFactor = 34,       // -> factor
  ReqAddMetric = 35,      // name, value -> refusal
  ReqSkipStep = 36,       // -> refusal
};

const char* msg_name(Msg m) noexcept;

// Appends one message to a buffer that keeps its capacity.
class Writer {
 public:
  void begin(Msg type);
  // A call or its answer: begin(type), then the call's number.
  void begin_call(Msg type, uint64_t call) {
    begin(type);
    u64(call);
  }
  void u8(uint8_t v) { raw(&v, 1); }
  void u32(uint32_t v) { raw(&v, sizeof v); }
  void i32(int32_t v) { raw(&v, sizeof v); }
  void i64(int64_t v) { raw(&v, sizeof v); }
  void u64(uint64_t v) { raw(&v, sizeof v); }
  void f64(double v) { raw(&v, sizeof v); }
  void str(std::string_view s);
  void opt_str(const char* s);  // NULL crosses as NULL
  void raw(const void* p, size_t n) { buf_.append(static_cast<const char*>(p), n); }
  // Sets the length prefix; the bytes to send are data().
  const std::string& finish();

 private:
  std::string buf_;
};

// Reads the payload of one received message. Throws std::runtime_error on a
// truncated or malformed payload (a protocol error, not the plugin's).
class Reader {
 public:
  Reader(const char* p, size_t n) : p_(p), end_(p + n) {}
  uint8_t u8();
  uint32_t u32();
  int32_t i32();
  int64_t i64();
  uint64_t u64();
  double f64();
  std::string_view str();
  // No bytes left: a field a newer sender appends is absent (an older frame).
  bool at_end() const noexcept { return p_ >= end_; }
  // NULL, or a pointer into the message (NUL-terminated by the sender).
  const char* opt_str();
  void raw(void* out, size_t n);

 private:
  const char* p_;
  const char* end_;
};

// One end of the socket pair: whole-message sends, reads with an optional
// deadline. Does not own the descriptor.
// The longest frame a Channel reads: a peer announcing more is out of step
// (or hostile), and the reader throws rather than buffer it.
constexpr uint32_t kMaxFrameBytes = 256u << 20;

class Channel {
 public:
  // `watch_fd`: a descriptor that turns readable when the peer is gone even
  // though its socket may stay open (a pidfd of the peer process, whose
  // children may hold the socket); -1 for none. Neither is owned.
  explicit Channel(int fd, int watch_fd = -1) : fd_(fd), watch_fd_(watch_fd) {}
  enum class Result { message, closed, timed_out };
  // False when the peer is gone (EPIPE); never raises SIGPIPE.
  bool send(const std::string& bytes);
  // Blocks until a whole message, EOF, or `deadline` (time_point::max() = none).
  // Both receives throw std::runtime_error on a frame over kMaxFrameBytes.
  // `poll_every` lets the caller do something while it waits (on_tick).
  template <class OnTick>
  Result receive(std::chrono::steady_clock::time_point deadline, OnTick&& on_tick);
  Result receive(std::chrono::steady_clock::time_point deadline) {
    return receive(deadline, [] {});
  }
  // A whole message already there (one read that does not wait): message,
  // closed, or timed_out when there is none yet.
  Result receive_ready();
  Msg type() const noexcept { return type_; }
  Reader payload() const { return Reader(in_.data() + start_ + 5, length_); }
  std::string_view payload_bytes() const { return std::string_view(in_.data() + start_ + 5, length_); }

 private:
  // One read() into in_ with poll() up to `wait_ms` (-1 forever): >0 bytes,
  // 0 EOF, -1 nothing yet.
  long fill(int wait_ms);
  bool have_message();

  int fd_;
  int watch_fd_;
  std::string in_;
  size_t start_ = 0;   // first byte of the current message in in_
  size_t filled_ = 0;  // bytes of in_ that hold data
  uint32_t length_ = 0;
  Msg type_ = Msg::Done;
  bool consumed_ = true;
};

template <class OnTick>
Channel::Result Channel::receive(std::chrono::steady_clock::time_point deadline, OnTick&& on_tick) {
  using Clock = std::chrono::steady_clock;
  if (!consumed_) {  // drop the previous message
    start_ += 5 + length_;
    consumed_ = true;
  }
  while (!have_message()) {
    int wait_ms = -1;
    if (deadline != Clock::time_point::max()) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return Result::timed_out;
      wait_ms = static_cast<int>(left < 100 ? left : 100);
    }
    const long n = fill(wait_ms);
    if (n == 0) return Result::closed;
    if (n < 0) on_tick();
  }
  consumed_ = false;
  return Result::message;
}

// th_event_args on the wire; the failure (EXCEPTION, ABI 1.3) is appended
// last, so a frame without it reads as failure NULL. read_event points `out` into `storage` and into
// the message just received (valid until the next receive()).
struct EventStorage {
  th_state state{};
  th_control control{};
  th_values values{};
  th_step_values step{};
  th_failure failure{};
  std::vector<const char*> keys, string_keys, string_values;
  std::vector<double> numbers;
};
// `call`: the call's number (0 for an Observed record). read_event starts
// after the number (the caller read it).
void write_event(Writer& w, const th_event_args& args, Msg type, uint64_t call);
void read_event(Reader& r, EventStorage& storage, th_event_args& out);

// What the runner sends, as the trainer reads it. The runner runs a plugin
// the trainer may not trust, so every reader here throws std::runtime_error
// on bytes that are not a well-formed message (the trainer then kills the
// helper), and nothing it returns is believed beyond its type's range: the
// masks are cut to the plugin's own. Strings point into the message (valid
// until the next receive()). fuzz/fuzz_isolation_messages runs them on
// arbitrary bytes.
struct CreatedReply {
  uint64_t call = 0;  // the number of the Create it answers
  bool ok = false;
  uint64_t event_mask = 0;
  bool critical = false, has_save_state = false, has_load_state = false;
  std::string_view error;
  // Of event_mask, never TRAIN_END or EXCEPTION (the trainer waits there for
  // what the plugin still does); 0 from a runner that does not say.
  uint64_t observe_only = 0;
  bool reads_ring = false;  // the runner takes calls from the ring too
  // Of event_mask less observe_only: waited events whose call may overlap the
  // next callbacks' (th_host.set_side_by_side); 0 from a runner that does not say.
  uint64_t side_by_side = 0;
};
CreatedReply read_created(Reader r);

// Done's status and message; `r` is left at what follows (the control flags
// of an event, the state text of save_state).
struct DoneReply {
  uint64_t call = 0;  // the number of the call it answers
  int32_t status = 0;
  std::string_view message;
};
DoneReply read_done(Reader& r);

// A notice (Log, Stop, Failed) or a request (Req*). Fields a type does not
// carry stay as they are. Any other type is a protocol error.
struct RunnerMessage {
  Msg type = Msg::Log;
  int32_t number = 0;     // Log: the level; Failed: the event
  std::string_view text;  // Log, Stop, Failed, ReqSetResume, ReqAddMetric
  uint32_t capacity = 0;  // ReqLearningRates (cut to kMaxLearningRates)
  double value = 0;       // ReqSetLrFactor, ReqAddMetric
};
constexpr uint32_t kMaxLearningRates = 4096;
RunnerMessage read_runner_message(Msg type, Reader r);

}  // namespace trainhook::detail::isolation
