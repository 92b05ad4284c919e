// IsolatedCallback (see isolated_callback.hpp) and the isolation settings of
// a run (trainhook/plugin_host/isolation/isolation.hpp).
#include "isolated_callback.hpp"

#include "helper_executable.hpp"
#include "wake_policy.hpp"

#include <trainhook/callbacks/callback_handler.hpp>
#include <trainhook/common/cpu_relax.hpp>
#include <trainhook/common/errors.hpp>
#include <trainhook/common/signal_name.hpp>
#include <trainhook/plugin_host/host/end_request.hpp>
#include <trainhook/plugin_host/host/model_access.hpp>
#include <trainhook/plugin_host/isolation/isolation.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

extern char** environ;

namespace trainhook {

PluginIsolation plugin_isolation_of(IsolationDefault given, const nlohmann::json& plugin_config,
                                    const std::string& name) {
  PluginIsolation out;
  out.isolated = given.isolated;
  bool own_timeout = false;
  nlohmann::json section = nlohmann::json::object();
  if (plugin_config.is_object() && plugin_config.contains(name)) section = plugin_config[name];
  // The host's keys: consumed here, never passed on (a plugin's reader refuses keys it does not know).
  if (section.is_object()) {
    if (auto it = section.find("isolation"); it != section.end()) {
      const std::string v = it->is_string() ? it->get<std::string>() : it->dump();
      if (v != "process" && v != "in_process")
        throw ArgumentError("--plugin_config " + name + ".isolation: expected process or in_process, got " +
                            v);
      if (given.section_may_change) {
        out.isolated = v == "process";
        out.by_section = true;
      }
      section.erase(it);
    }
    if (auto it = section.find("isolation_timeout"); it != section.end()) {
      if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() <= 0)
        throw ArgumentError("--plugin_config " + name + ".isolation_timeout: expected seconds > 0, got " +
                            it->dump());
      out.timeout_seconds = it->get<double>();
      own_timeout = true;
      section.erase(it);
    }
  }
  // The environment's bound, read only for an isolated callback without its own.
  const char* env = std::getenv(kIsolationTimeoutEnv);
  if (out.isolated && !own_timeout && env != nullptr && *env != '\0') {
    char* end = nullptr;
    const double v = std::strtod(env, &end);
    if (end == env || *end != '\0' || !std::isfinite(v) || v <= 0)
      throw ArgumentError(std::string(kIsolationTimeoutEnv) + " must be a number of seconds > 0, got '" +
                          env + "'");
    out.timeout_seconds = v;
  }
  out.plugin_config = section.dump();
  return out;
}

namespace detail {

std::unique_ptr<InternalCallback> make_isolated_callback(const std::filesystem::path& library,
                                                         const std::string& callback, HostServices& host,
                                                         const std::string& config_json,
                                                         double timeout_seconds) {
  return std::make_unique<IsolatedCallback>(library, callback, host, config_json, timeout_seconds);
}

namespace {

using Clock = std::chrono::steady_clock;

// Most plugins answer within microseconds: the trainer looks for the answer
// before it sleeps in poll() (wake_policy.hpp).
template <class OnTick>
isolation::Channel::Result receive_answer(isolation::Channel& channel, Clock::time_point deadline,
                                          OnTick&& tick) {
  const auto spin_until = Clock::now() + isolation::wake_policy::kAnswerSpin;
  for (;;) {
    const isolation::Channel::Result r = channel.receive_ready();
    if (r != isolation::Channel::Result::timed_out) return r;
    if (Clock::now() >= spin_until) break;
    cpu_relax();
  }
  return channel.receive(deadline, tick);
}

using isolation::Msg;

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    return "killed by " + signal_name(WTERMSIG(status));
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended (wait status " + std::to_string(status) + ")";
}

// The ring's size: $TRAINHOOK_ISOLATION_RING_KIB, else the default.
uint32_t ring_capacity() {
  const char* env = std::getenv(kIsolationRingEnv);
  if (env == nullptr || *env == '\0') return isolation::EventRing::kDefaultCapacity;
  char* end = nullptr;
  const long kib = std::strtol(env, &end, 10);
  if (end == env || *end != '\0' || kib < 4 || kib > 1024 * 1024)
    throw PluginError(std::string(kIsolationRingEnv) + " must be a number of KiB from 4 to 1048576, got '" +
                      env + "'");
  return static_cast<uint32_t>(kib) * 1024u;
}

// A descriptor moved above the ones the child's dup2s write (kRunnerFd,
// kRingFd), so no action of the spawn overwrites another's source.
int moved_high(int fd) {
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
  ::close(fd);
  return moved;
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

}  // namespace

IsolatedCallback::IsolatedCallback(std::filesystem::path library, std::string callback, HostServices& host,
                                   const std::string& config_json, double timeout_seconds)
    : library_(std::move(library)),
      name_(std::move(callback)),
      host_(host),
      timeout_(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_seconds))),
      timeout_seconds_(timeout_seconds) {
  spawn();
  begin_call(Msg::Create);
  out_.u32(isolation::kProtocolVersion);
  out_.str(library_.string());
  out_.str(name_);
  out_.str(config_json.empty() ? "{}" : config_json);
  // What stays the same for the whole run crosses once, so a plugin's worker
  // thread reads it without a round trip.
  out_.str(host_.output_dir());
  out_.str(host_.training_args_json());
  out_.str(host_.run_name());
  out_.str(host_.model_description());
  try {
    exchange(Msg::Created, "create");
  } catch (const std::exception& e) {
    throw PluginError(e.what());  // names the callback and its file (fail())
  }
  isolation::CreatedReply created;
  try {
    created = isolation::read_created(channel_.payload());
  } catch (const std::exception& e) {
    kill_and_reap();
    throw PluginError("isolated callback '" + name_ + "' from " + library_.string() +
                      ", in create: its helper process broke the protocol (" + e.what() + "; it was killed)");
  }
  mask_ = created.event_mask;
  critical_ = created.critical;
  has_save_state_ = created.has_save_state;
  has_load_state_ = created.has_load_state;
  observed_ = created.observe_only;
  side_by_side_ = created.side_by_side;
  ring_calls_ = created.ok && ring_.valid() && created.reads_ring;
  if (!created.ok) {
    const std::string error(created.error);
    kill_and_reap();
    // The runner's message names the callback and the file already.
    throw PluginError(error + " (in its isolated helper process)");
  }
}

IsolatedCallback::~IsolatedCallback() {
  report_drops();
  if (dead_.empty() && pid_ > 0) {
    // Let the helper destroy the instance (an integration flushes and joins
    // its worker there), within the same bound as any call.
    try {
      begin_call(Msg::Shutdown);
      exchange(Msg::Done, "destroy");
    } catch (const std::exception& e) {
      host_.log(TH_LOG_WARN, name_, e.what());
    } catch (...) {
    }
  }
  kill_and_reap();
}

void IsolatedCallback::spawn() {
  const std::filesystem::path runner = helper_executable("trainhook-plugin-runner");
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw PluginError("isolated callback '" + name_ + "': socketpair: " + std::strerror(errno));
  // dup2 onto the same number would keep FD_CLOEXEC, and one dup2 must not
  // overwrite the other's source: both sources go above the targets first.
  sv[1] = moved_high(sv[1]);
  try {
    ring_ = isolation::EventRing::create(ring_capacity());
  } catch (const std::runtime_error& e) {
    ::close(sv[0]);
    ::close(sv[1]);
    throw PluginError("isolated callback '" + name_ + "': " + e.what());
  }
  const int ring_fd = ::fcntl(ring_.fd(), F_DUPFD_CLOEXEC, 10);  // the ring keeps its own
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, sv[1], isolation::kRunnerFd);
  posix_spawn_file_actions_adddup2(&actions, ring_fd, isolation::kRingFd);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group: a Ctrl-C in the terminal reaches the trainer, which
  // stops the run and still needs the helper for on_train_end.
  sigset_t defaults, none;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGCHLD);
  sigemptyset(&none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &none);
  const std::string runner_s = runner.string(), library_s = library_.string();
  std::vector<char*> argv = {const_cast<char*>(runner_s.c_str()), const_cast<char*>(library_s.c_str()),
                             const_cast<char*>(name_.c_str()), nullptr};
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, runner_s.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(sv[1]);
  ::close(ring_fd);
  if (rc != 0) {
    ::close(sv[0]);
    throw PluginError("isolated callback '" + name_ + "' from " + library_s + ": cannot start " + runner_s +
                      ": " + std::strerror(rc));
  }
  pid_ = pid;
  fd_ = sv[0];
  // Without a pidfd (a kernel before 5.3) only the socket tells of its end.
  const long pidfd = ::syscall(SYS_pidfd_open, pid, 0);
  pidfd_ = pidfd < 0 ? -1 : static_cast<int>(pidfd);
  channel_ = isolation::Channel(fd_, pidfd_);
}

void IsolatedCallback::begin_call(Msg type) { out_.begin_call(type, ++calls_); }

void IsolatedCallback::fail(const char* what, const std::string& cause) {
  if (dead_.empty()) dead_ = cause;
  kill_and_reap();
  throw std::runtime_error("isolated callback '" + name_ + "' from " + library_.string() + ", in " + what +
                           ": its helper process " + dead_);
}

void IsolatedCallback::exchange(Msg expected, const char* what) {
  send(expected, what);
  await_answer(expected, what);
}

void IsolatedCallback::send(Msg expected, const char* what) {
  if (!dead_.empty()) fail(what, dead_);  // dead already: no second wait
  // After Create the runner reads calls from the ring too, in order with the
  // observed events; one that does not fit (or that must follow a socket
  // notice, StopSignal) crosses the socket, which it reads after the ring.
  const bool by_ring = expected == Msg::Done && ring_.valid() && ring_calls_ && !socket_next_ &&
                       ring_.try_push_call(out_.finish());
  socket_next_ = false;
  if (!by_ring && !channel_.send(out_.finish())) fail(what, reap());
  sent_at_ = Clock::now();
}

void IsolatedCallback::await_answer(Msg expected, const char* what) {
  if (!dead_.empty()) fail(what, dead_);
  const auto deadline = sent_at_ + timeout_;
  auto tick = [this] {
    // A signal arrived while the plugin works (on_train_end's flush): tell it.
    if (!end_now_sent_ && end_now_requested()) {
      end_now_sent_ = true;
      reply_.begin(Msg::EndNow);
      channel_.send(reply_.finish());
    }
  };
  for (;;) {
    isolation::Channel::Result received;
    try {
      received = receive_answer(channel_, deadline, tick);
    } catch (const std::exception& e) {  // a frame longer than any message
      fail(what, std::string("broke the protocol (") + e.what() + "; it was killed)");
    }
    switch (received) {
      case isolation::Channel::Result::closed:
        fail(what, reap());
      case isolation::Channel::Result::timed_out:
        if (pid_ > 0) ::kill(pid_, SIGKILL);  // hung: no grace
        fail(what, "did not answer within " + seconds_text(timeout_seconds_) +
                       " s (isolation_timeout; it was killed)");
      case isolation::Channel::Result::message:
        break;
    }
    if (channel_.type() == expected) {
      // The answer must be to the call just sent: a stray or repeated answer
      // would be taken for a later call's and shift every one after it.
      uint64_t answered = 0;
      try {
        answered = channel_.payload().u64();
      } catch (const std::exception& e) {
        fail(what, std::string("broke the protocol (") + e.what() + "; it was killed)");
      }
      if (answered != calls_)
        fail(what, "broke the protocol (it answered call #" + std::to_string(answered) + " while call #" +
                       std::to_string(calls_) + " was due; it was killed)");
      return;
    }
    try {
      serve_request();
    } catch (const std::exception& e) {
      // Out of step with the helper: nothing it sends can be trusted any more.
      fail(what, std::string("broke the protocol (") + e.what() + "; it was killed)");
    }
  }
}

void IsolatedCallback::serve_request() {
  const isolation::RunnerMessage m = isolation::read_runner_message(channel_.type(), channel_.payload());
  if (m.type == Msg::Log) {
    host_.log(m.number, name_, std::string(m.text));
    return;
  }
  if (m.type == Msg::Stop) {
    host_.request_stop(name_, std::string(m.text));
    return;
  }
  if (m.type == Msg::Failed) {  // the first is thrown; the run has its cause
    if (observed_failure_.empty())
      observed_failure_ =
          std::string(m.number >= 0 && m.number < TH_EVENT_COUNT ? event_name(m.number) : "an event") +
          " (observed, delivered without a round trip) failed: " + std::string(m.text);
    return;
  }
  reply_.begin(Msg::Reply);
  auto refusal = [&](auto&& f) {
    std::string why;
    try {
      ModelAccess* access = host_.model_access();
      why = access == nullptr ? std::string("this trainer offers no model access here (no training run)")
                              : f(*access);
    } catch (const std::exception& e) {
      why = e.what();
    }
    reply_.str(why);
  };
  switch (m.type) {
    case Msg::ReqTrainerState:
      reply_.str(host_.trainer_state_json());
      break;
    case Msg::ReqSetResume: {
      std::string why;
      try {
        why = host_.set_resume_checkpoint(std::string(m.text));
      } catch (const std::exception& e) {
        why = e.what();
      }
      reply_.str(why);
      break;
    }
    case Msg::ReqLearningRates: {
      const uint32_t capacity = m.capacity;
      double rates[isolation::kMaxLearningRates];
      uint32_t count = 0;
      refusal([&](ModelAccess& a) { return a.learning_rates(rates, capacity, count); });
      reply_.u32(count);
      for (uint32_t i = 0; i < std::min(count, capacity); ++i) reply_.f64(rates[i]);
      break;
    }
    case Msg::ReqSetLrFactor: {
      refusal([&](ModelAccess& a) { return a.set_lr_factor(m.value); });
      break;
    }
    case Msg::ReqLrFactor: {
      double factor = 1.0;
      try {
        if (ModelAccess* a = host_.model_access()) factor = a->lr_factor();
      } catch (const std::exception&) {
      }
      reply_.f64(factor);
      break;
    }
    case Msg::ReqAddMetric: {
      refusal([&](ModelAccess& a) { return a.add_metric(std::string(m.text), m.value); });
      break;
    }
    case Msg::ReqSkipStep:
      refusal([&](ModelAccess& a) { return a.skip_optimizer_step(); });
      break;
    default:  // read_runner_message refused every other type
      break;
  }
  if (!channel_.send(reply_.finish())) fail("a host request", reap());
}

void IsolatedCallback::check_done() {
  isolation::Reader r = channel_.payload();
  const isolation::DoneReply done = isolation::read_done(r);
  if (done.status != TH_OK) throw std::runtime_error(std::string(done.message));
}

void IsolatedCallback::on_event(EventId event, const th_event_args& args) {
  // on_step_end the plugin does not want: only to serve what it sent unasked (event_mask()).
  if (event == TH_EVENT_STEP_END && (mask_ & TH_EVENT_BIT(TH_EVENT_STEP_END)) == 0) {
    if (dead_.empty()) serve_unasked(event);
    throw_observed_failure();
    return;
  }
  if (event >= 0 && event < 64 && (observed_ & TH_EVENT_BIT(event)) != 0) {
    push_observed(event, args);
    return;
  }
  send_event(event, args);
  // The flags the plugin set come back as they would in process.
  *args.control = await_event(event);
  args.control->struct_size = TH_CONTROL_STRUCT_SIZE;
}

void IsolatedCallback::begin_event(EventId event, const th_event_args& args) {
  sent_control_ = *args.control;
  send_event(event, args);
}

void IsolatedCallback::end_event(EventId event) {
  const th_control control = await_event(event);
  // The callbacks after it were called with the flags as they were before it.
  if (const std::string changed = changed_flags(sent_control_, control); !changed.empty())
    throw std::runtime_error(
        "it changed TrainerControl (" + changed + ") in " + event_name(event) +
        ", which it declared side by side (set_side_by_side / side_by_side_events), where "
        "the change is not taken; declare only the events in which it does not steer the run");
}

void IsolatedCallback::send_event(EventId event, const th_event_args& args) {
  if (event == TH_EVENT_TRAIN_END || event == TH_EVENT_EXCEPTION) report_drops();
  // th_host.stop_signal in the runner answers what it was last told, before
  // the event that may read it (on_train_end after a first signal).
  if (const int sig = stop_signal_received(); sig != stop_signal_sent_) {
    stop_signal_sent_ = sig;
    reply_.begin(Msg::StopSignal);
    reply_.i32(sig);
    if (!channel_.send(reply_.finish())) fail(event_name(event), reap());
    socket_next_ = true;  // the runner's reader records it before it reads this event
  }
  isolation::write_event(out_, args, Msg::Event, ++calls_);
  send(Msg::Done, event_name(event));
}

th_control IsolatedCallback::await_event(EventId event) {
  await_answer(Msg::Done, event_name(event));
  isolation::DoneReply done;
  th_control control{};
  try {
    isolation::Reader r = channel_.payload();
    done = isolation::read_done(r);
    if (done.status == TH_OK) r.raw(&control, sizeof control);
  } catch (const std::exception& e) {
    fail(event_name(event), std::string("broke the protocol (") + e.what() + "; it was killed)");
  }
  if (done.status != TH_OK) throw std::runtime_error(std::string(done.message));
  throw_observed_failure();
  return control;
}

void IsolatedCallback::push_observed(EventId event, const th_event_args& args) {
  if (!dead_.empty()) fail(event_name(event), dead_);  // dead already: no second wait
  isolation::write_event(observed_out_, args, Msg::Observed, 0);
  if (!ring_.try_push(observed_out_.finish())) {
    if (dropped_by_event_[static_cast<size_t>(event)]++ == 0 && ring_.dropped() == 1)
      host_.log(TH_LOG_WARN, name_,
                "isolated callback '" + name_ + "' from " + library_.string() +
                    ": its helper falls behind and the event ring (" +
                    std::to_string(ring_.capacity() / 1024) + " KiB, " + kIsolationRingEnv +
                    ") is full: observe-only events are dropped from " + event_name(event) +
                    " on; the count comes at train end");
  }
  serve_unasked(event);
  throw_observed_failure();
}

void IsolatedCallback::serve_unasked(EventId event) {
  // One load of the shared page, and Clock::now() reads the vDSO: no system
  // call unless the helper flagged a message or it is time to look anyway.
  const uint32_t unasked = ring_.unasked();
  const auto now = Clock::now();
  if (unasked == unasked_seen_ && now < next_serve_) return;
  unasked_seen_ = unasked;
  next_serve_ = now + isolation::wake_policy::kServeInterval;
  serve_waiting(event_name(event));
}

void IsolatedCallback::serve_waiting(const char* what) {
  for (;;) {
    switch (channel_.receive_ready()) {
      case isolation::Channel::Result::closed:
        fail(what, reap());
      case isolation::Channel::Result::timed_out:
        return;
      case isolation::Channel::Result::message:
        break;
    }
    try {
      serve_request();
    } catch (const std::exception& e) {
      fail(what, std::string("broke the protocol (") + e.what() + "; it was killed)");
    }
  }
}

void IsolatedCallback::throw_observed_failure() {
  if (observed_failure_.empty()) return;
  std::string message = std::move(observed_failure_);
  observed_failure_.clear();
  throw std::runtime_error(message);
}

void IsolatedCallback::report_drops() noexcept {
  try {
    const uint64_t total = ring_.dropped();
    if (total == drops_reported_) return;
    std::string by_event;
    for (size_t e = 0; e < dropped_by_event_.size(); ++e)
      if (dropped_by_event_[e] > 0)
        by_event += std::string(by_event.empty() ? "" : ", ") + event_name(static_cast<EventId>(e)) + ": " +
                    std::to_string(dropped_by_event_[e]);
    host_.log(TH_LOG_WARN, name_,
              "isolated callback '" + name_ + "' from " + library_.string() + ": " + std::to_string(total) +
                  " observe-only event(s) dropped in all, never delivered, because its helper fell behind (" +
                  by_event + "); a larger " + kIsolationRingEnv + " or a faster plugin avoids it");
    drops_reported_ = total;
  } catch (...) {
  }
}

std::optional<nlohmann::json> IsolatedCallback::save_state() {
  if (!has_save_state_) return std::nullopt;
  begin_call(Msg::SaveState);
  exchange(Msg::Done, "save_state");
  check_done();
  isolation::Reader r = channel_.payload();
  isolation::read_done(r);
  if (r.u8() == 0) return std::nullopt;
  try {
    return nlohmann::json::parse(r.str());
  } catch (const nlohmann::json::exception& e) {  // as in process (plugin_callback.cpp)
    throw std::runtime_error(std::string("save_state wrote text that is not JSON: ") + e.what());
  }
}

void IsolatedCallback::load_state(const nlohmann::json& state) {
  if (!has_load_state_) return;
  begin_call(Msg::LoadState);
  out_.str(state.dump());
  exchange(Msg::Done, "load_state");
  check_done();
}

std::string IsolatedCallback::reap() {
  if (pid_ <= 0) return dead_.empty() ? "is gone" : dead_;
  // EOF: it is ending or has ended; give it the timeout to finish, then kill it.
  const auto deadline = Clock::now() + timeout_;
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) break;
    if (r < 0 && errno != EINTR) {
      pid_ = -1;
      return "is gone";
    }
    if (Clock::now() >= deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  pid_ = -1;
  return describe_status(status);
}

void IsolatedCallback::kill_and_reap() noexcept {
  if (fd_ >= 0) {
    ::close(fd_);  // EOF: a live helper exits by itself
    fd_ = -1;
    channel_ = isolation::Channel(-1);
  }
  if (pidfd_ >= 0) {
    ::close(pidfd_);
    pidfd_ = -1;
  }
  if (pid_ > 0) {
    // Give a helper that is exiting normally a moment, then kill it.
    int status = 0;
    bool reaped = false;
    for (int i = 0; i < 500 && !reaped; ++i) {
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      reaped = r == pid_ || (r < 0 && errno != EINTR);
      if (!reaped) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (!reaped) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
    }
    pid_ = -1;
  }
}

}  // namespace detail
}  // namespace trainhook
