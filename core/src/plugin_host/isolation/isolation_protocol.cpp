// The isolation wire protocol (see isolation_protocol.hpp).
#include "isolation_protocol.hpp"

#include <trainhook/common/monotonic_ns.hpp>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace trainhook::detail::isolation {

const char* msg_name(Msg m) noexcept {
  switch (m) {
    case Msg::Create:
      return "create";
    case Msg::Event:
      return "event";
    case Msg::SaveState:
      return "save_state";
    case Msg::LoadState:
      return "load_state";
    case Msg::Shutdown:
      return "shutdown";
    case Msg::EndNow:
      return "end_now";
    case Msg::Reply:
      return "reply";
    case Msg::StopSignal:
      return "stop_signal";
    case Msg::Observed:
      return "observed";
    case Msg::Created:
      return "created";
    case Msg::Done:
      return "done";
    case Msg::Log:
      return "log";
    case Msg::Stop:
      return "stop";
    case Msg::Failed:
      return "failed";
    case Msg::ReqTrainerState:
      return "trainer_state_json";
    case Msg::ReqSetResume:
      return "set_resume_checkpoint";
    case Msg::ReqLearningRates:
      return "learning_rates";
    case Msg::ReqSetLrFactor:
      return "set_lr_factor";
    case Msg::ReqLrFactor:
      return "lr_factor";
    case Msg::ReqAddMetric:
      return "add_metric";
    case Msg::ReqSkipStep:
      return "skip_optimizer_step";
  }
  return "unknown message";
}

void Writer::begin(Msg type) {
  buf_.clear();  // keeps the capacity
  u32(0);        // the length, set by finish()
  u8(static_cast<uint8_t>(type));
}

void Writer::str(std::string_view s) {
  u32(static_cast<uint32_t>(s.size()));
  raw(s.data(), s.size());
  buf_.push_back('\0');  // so the receiver can hand out a C string in place
}

void Writer::opt_str(const char* s) {
  u8(s != nullptr ? 1 : 0);
  if (s != nullptr) str(s);
}

const std::string& Writer::finish() {
  const auto length = static_cast<uint32_t>(buf_.size() - 5);
  std::memcpy(buf_.data(), &length, sizeof length);
  return buf_;
}

void Reader::raw(void* out, size_t n) {
  if (static_cast<size_t>(end_ - p_) < n) throw std::runtime_error("isolation protocol: truncated message");
  std::memcpy(out, p_, n);
  p_ += n;
}
uint8_t Reader::u8() {
  uint8_t v = 0;
  raw(&v, sizeof v);
  return v;
}
uint32_t Reader::u32() {
  uint32_t v = 0;
  raw(&v, sizeof v);
  return v;
}
int32_t Reader::i32() {
  int32_t v = 0;
  raw(&v, sizeof v);
  return v;
}
int64_t Reader::i64() {
  int64_t v = 0;
  raw(&v, sizeof v);
  return v;
}
uint64_t Reader::u64() {
  uint64_t v = 0;
  raw(&v, sizeof v);
  return v;
}
double Reader::f64() {
  double v = 0;
  raw(&v, sizeof v);
  return v;
}
std::string_view Reader::str() {
  const uint32_t n = u32();
  if (static_cast<size_t>(end_ - p_) < static_cast<size_t>(n) + 1 || p_[n] != '\0')
    throw std::runtime_error("isolation protocol: malformed string");
  std::string_view s(p_, n);
  p_ += n + 1;
  return s;
}
const char* Reader::opt_str() { return u8() != 0 ? str().data() : nullptr; }

bool Channel::send(const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    // MSG_NOSIGNAL: a runner that died must not kill the trainer with SIGPIPE.
    const ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

long Channel::fill(int wait_ms) {
  if (wait_ms >= 0 || watch_fd_ >= 0) {
    pollfd p[2] = {{fd_, POLLIN, 0}, {watch_fd_, POLLIN, 0}};
    const int r = ::poll(p, watch_fd_ >= 0 ? 2 : 1, wait_ms);
    if (r == 0 || (r < 0 && errno == EINTR)) return -1;
    if (r < 0) return 0;
    // What the peer sent before it went comes first; then its end.
    if (p[0].revents == 0) return p[1].revents != 0 ? 0 : -1;
  }
  // Move the unread tail to the front before growing: the buffer stays small.
  if (start_ > 0) {
    std::memmove(in_.data(), in_.data() + start_, filled_ - start_);
    filled_ -= start_;
    start_ = 0;
  }
  if (in_.size() - filled_ < 4096) in_.resize(in_.size() + 65536);
  for (;;) {
    const ssize_t n = ::read(fd_, in_.data() + filled_, in_.size() - filled_);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;
    filled_ += static_cast<size_t>(n);
    return n;
  }
}

Channel::Result Channel::receive_ready() {
  if (!consumed_) {
    start_ += 5 + length_;
    consumed_ = true;
  }
  if (!have_message()) {
    const long n = fill(0);
    if (n == 0) return Result::closed;
    if (n < 0 || !have_message()) return Result::timed_out;
  }
  consumed_ = false;
  return Result::message;
}

bool Channel::have_message() {
  const size_t avail = filled_ - start_;
  if (avail < 5) return false;
  std::memcpy(&length_, in_.data() + start_, sizeof length_);
  if (length_ > kMaxFrameBytes)
    throw std::runtime_error("a message of " + std::to_string(length_) + " bytes (at most " +
                             std::to_string(kMaxFrameBytes) + " are read)");
  if (avail < 5 + static_cast<size_t>(length_)) return false;
  type_ = static_cast<Msg>(static_cast<uint8_t>(in_[start_ + 4]));
  return true;
}

void write_event(Writer& w, const th_event_args& a, Msg type, uint64_t call) {
  w.begin_call(type, call);
  w.i32(a.event);
  w.raw(a.state, sizeof(th_state));
  w.opt_str(a.state->best_model_checkpoint);
  w.opt_str(a.state->trial_name);
  w.raw(a.control, sizeof(th_control));
  const th_values* v = a.values;
  w.u8(v != nullptr ? 1 : 0);
  if (v != nullptr) {
    w.u32(v->count);
    for (uint32_t i = 0; i < v->count; ++i) {
      w.str(v->keys[i] != nullptr ? v->keys[i] : "");
      w.f64(v->values[i]);
    }
    const uint32_t sc = TH_HAS_FIELD(v, th_values, string_values) ? v->string_count : 0;
    w.u32(sc);
    for (uint32_t i = 0; i < sc; ++i) {
      w.str(v->string_keys[i] != nullptr ? v->string_keys[i] : "");
      w.str(v->string_values[i] != nullptr ? v->string_values[i] : "");
    }
  }
  w.opt_str(a.checkpoint_dir);
  w.i64(a.batch_index);
  w.i64(a.batch_count);
  w.i32(a.prediction_kind);
  w.u8(a.step != nullptr ? 1 : 0);
  if (a.step != nullptr) w.raw(a.step, sizeof(th_step_values));
  // 1.3, last (see read_event): kind, step, message.
  const th_failure* f = a.struct_size >= TH_STRUCT_SIZE(th_event_args, failure) ? a.failure : nullptr;
  w.u8(f != nullptr ? 1 : 0);
  if (f != nullptr) {
    w.i32(TH_HAS_FIELD(f, th_failure, kind) ? f->kind : TH_FAILURE_ERROR);
    w.i64(TH_HAS_FIELD(f, th_failure, step) ? f->step : a.state->global_step);
    w.str(TH_HAS_FIELD(f, th_failure, message) && f->message != nullptr ? f->message : "");
  }
  // 1.7: the emission time; args without it (a caller before 1.7) are stamped now, on the trainer's side.
  w.i64(a.struct_size >= TH_STRUCT_SIZE(th_event_args, time_ns) ? a.time_ns : monotonic_ns());
}

void read_event(Reader& r, EventStorage& s, th_event_args& out) {
  out = th_event_args{};
  out.struct_size = TH_EVENT_ARGS_STRUCT_SIZE;
  out.event = r.i32();
  r.raw(&s.state, sizeof(th_state));
  s.state.best_model_checkpoint = r.opt_str();
  s.state.trial_name = r.opt_str();
  out.state = &s.state;
  r.raw(&s.control, sizeof(th_control));
  out.control = &s.control;
  if (r.u8() != 0) {
    const uint32_t n = r.u32();
    s.keys.clear();
    s.numbers.clear();
    for (uint32_t i = 0; i < n; ++i) {
      s.keys.push_back(r.str().data());
      s.numbers.push_back(r.f64());
    }
    const uint32_t sc = r.u32();
    s.string_keys.clear();
    s.string_values.clear();
    for (uint32_t i = 0; i < sc; ++i) {
      s.string_keys.push_back(r.str().data());
      s.string_values.push_back(r.str().data());
    }
    s.values = th_values{TH_VALUES_STRUCT_SIZE, n, s.keys.data(), s.numbers.data(), sc, s.string_keys.data(),
                         s.string_values.data()};
    out.values = &s.values;
  }
  out.checkpoint_dir = r.opt_str();
  out.batch_index = r.i64();
  out.batch_count = r.i64();
  out.prediction_kind = r.i32();
  if (r.u8() != 0) {
    r.raw(&s.step, sizeof(th_step_values));
    out.step = &s.step;
  }
  // A frame of a sender before 1.3 ends here.
  if (!r.at_end() && r.u8() != 0) {
    s.failure.struct_size = TH_FAILURE_STRUCT_SIZE;
    s.failure.kind = r.i32();
    s.failure.step = r.i64();
    s.failure.message = r.str().data();
    out.failure = &s.failure;
  }
  // A frame of a sender before 1.7 ends here: the time it arrived is the nearest to the truth.
  out.time_ns = !r.at_end() ? r.i64() : monotonic_ns();
}

CreatedReply read_created(Reader r) {
  CreatedReply c;
  c.call = r.u64();
  c.ok = r.u8() != 0;
  c.event_mask = r.u64() & TH_EVENT_MASK_ALL;
  c.critical = r.u8() != 0;
  c.has_save_state = r.u8() != 0;
  c.has_load_state = r.u8() != 0;
  c.error = r.str();
  if (!r.at_end())
    c.observe_only =
        r.u64() & c.event_mask & ~(TH_EVENT_BIT(TH_EVENT_TRAIN_END) | TH_EVENT_BIT(TH_EVENT_EXCEPTION));
  c.reads_ring = !r.at_end() && r.u8() != 0;
  if (!r.at_end()) c.side_by_side = r.u64() & c.event_mask & ~c.observe_only;
  return c;
}

DoneReply read_done(Reader& r) {
  DoneReply d;
  d.call = r.u64();
  d.status = r.i32();
  d.message = r.str();
  return d;
}

RunnerMessage read_runner_message(Msg type, Reader r) {
  RunnerMessage m;
  m.type = type;
  switch (type) {
    case Msg::Log:     // the level, the text
    case Msg::Failed:  // the event, the message
      m.number = r.i32();
      m.text = r.str();
      break;
    case Msg::Stop:
    case Msg::ReqSetResume:
      m.text = r.str();
      break;
    case Msg::ReqLearningRates:
      m.capacity = std::min(r.u32(), kMaxLearningRates);
      break;
    case Msg::ReqSetLrFactor:
      m.value = r.f64();
      break;
    case Msg::ReqAddMetric:
      m.text = r.str();
      m.value = r.f64();
      break;
    case Msg::ReqTrainerState:
    case Msg::ReqLrFactor:
    case Msg::ReqSkipStep:
      break;
    default:
      throw std::runtime_error(std::string("isolation protocol: unexpected message ") + msg_name(type));
  }
  return m;
}

}  // namespace trainhook::detail::isolation
