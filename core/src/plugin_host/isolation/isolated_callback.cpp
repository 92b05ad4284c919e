// IsolatedCallback (see isolated_callback.hpp) and the isolation settings of
// a run (trainhook/plugin_host/isolation/isolation.hpp).
#include "isolated_callback.hpp"

#include "helper_executable.hpp"

#include <trainhook/callbacks/callback_handler.hpp>
#include <trainhook/common/errors.hpp>
#include <trainhook/plugin_host/host/end_request.hpp>
#include <trainhook/plugin_host/host/model_access.hpp>
#include <trainhook/plugin_host/isolation/isolation.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
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

PluginIsolation plugin_isolation_of(const std::vector<std::string>& plugin_isolation,
                                    const nlohmann::json& plugin_config, const std::string& name) {
  PluginIsolation out;
  out.isolated = std::find(plugin_isolation.begin(), plugin_isolation.end(), name) != plugin_isolation.end();
  bool own_timeout = false;
  nlohmann::json section = nlohmann::json::object();
  if (plugin_config.is_object() && plugin_config.contains(name)) section = plugin_config[name];
  // The host's keys: consumed here, never passed on (a plugin's reader refuses keys it does not know).
  if (section.is_object()) {
    if (auto it = section.find("isolation"); it != section.end()) {
      const std::string v = it->is_string() ? it->get<std::string>() : it->dump();
      if (v == "process")
        out.isolated = true;
      else if (v != "in_process")
        throw ArgumentError("--plugin_config " + name + ".isolation: expected process or in_process, got " +
                            v);
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
using isolation::Msg;

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* abbrev = sigabbrev_np(sig);
    return "killed by " + (abbrev != nullptr ? "SIG" + std::string(abbrev) : "signal " + std::to_string(sig));
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended (wait status " + std::to_string(status) + ")";
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
  out_.begin(Msg::Create);
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
    throw PluginError(e.what());
  }
  isolation::Reader r = channel_.payload();
  const bool ok = r.u8() != 0;
  mask_ = r.u64();
  critical_ = r.u8() != 0;
  has_save_state_ = r.u8() != 0;
  has_load_state_ = r.u8() != 0;
  const std::string error(r.str());
  if (!ok) {
    kill_and_reap();
    throw PluginError(error + " (in its isolated helper process)");
  }
}

IsolatedCallback::~IsolatedCallback() {
  if (dead_.empty() && pid_ > 0) {
    // Let the helper destroy the instance (an integration flushes and joins
    // its worker there), within the same bound as any call.
    try {
      out_.begin(Msg::Shutdown);
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
  // dup2 onto the same number would keep FD_CLOEXEC: move the child's end first.
  if (sv[1] == isolation::kRunnerFd) {
    const int moved = ::fcntl(sv[1], F_DUPFD_CLOEXEC, 10);
    ::close(sv[1]);
    sv[1] = moved;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, sv[1], isolation::kRunnerFd);
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
  if (rc != 0) {
    ::close(sv[0]);
    throw PluginError("isolated callback '" + name_ + "' from " + library_s + ": cannot start " + runner_s +
                      ": " + std::strerror(rc));
  }
  pid_ = pid;
  fd_ = sv[0];
  channel_ = isolation::Channel(fd_);
}

void IsolatedCallback::fail(const char* what, const std::string& cause) {
  if (dead_.empty()) dead_ = cause;
  kill_and_reap();
  throw std::runtime_error("isolated callback '" + name_ + "' from " + library_.string() + ", in " + what +
                           ": its helper process " + dead_);
}

void IsolatedCallback::exchange(Msg expected, const char* what) {
  if (!dead_.empty()) fail(what, dead_);  // dead already: no second wait
  if (!channel_.send(out_.finish())) fail(what, reap());
  const auto deadline = Clock::now() + timeout_;
  auto tick = [this] {
    // A signal arrived while the plugin works (on_train_end's flush): tell it.
    if (!end_now_sent_ && end_now_requested()) {
      end_now_sent_ = true;
      reply_.begin(Msg::EndNow);
      channel_.send(reply_.finish());
    }
  };
  for (;;) {
    switch (channel_.receive(deadline, tick)) {
      case isolation::Channel::Result::closed:
        fail(what, reap());
      case isolation::Channel::Result::timed_out:
        if (pid_ > 0) ::kill(pid_, SIGKILL);  // hung: no grace
        fail(what, "did not answer within " + seconds_text(timeout_seconds_) +
                       " s (isolation_timeout; it was killed)");
      case isolation::Channel::Result::message:
        break;
    }
    if (channel_.type() == expected) return;
    try {
      serve_request();
    } catch (const std::exception& e) {
      // Out of step with the helper: nothing it sends can be trusted any more.
      fail(what, std::string("broke the protocol (") + e.what() + "; it was killed)");
    }
  }
}

void IsolatedCallback::serve_request() {
  isolation::Reader r = channel_.payload();
  const Msg type = channel_.type();
  if (type == Msg::Log) {
    const int32_t level = r.i32();
    host_.log(level, name_, std::string(r.str()));
    return;
  }
  if (type == Msg::Stop) {
    host_.request_stop(name_, std::string(r.str()));
    return;
  }
  reply_.begin(Msg::Reply);
  auto refusal = [&](auto&& f) {
    std::string why;
    try {
      ModelAccess* m = host_.model_access();
      why = m == nullptr ? std::string("this trainer offers no model access here (no training run)") : f(*m);
    } catch (const std::exception& e) {
      why = e.what();
    }
    reply_.str(why);
  };
  switch (type) {
    case Msg::ReqTrainerState:
      reply_.str(host_.trainer_state_json());
      break;
    case Msg::ReqSetResume: {
      std::string why;
      try {
        why = host_.set_resume_checkpoint(std::string(r.str()));
      } catch (const std::exception& e) {
        why = e.what();
      }
      reply_.str(why);
      break;
    }
    case Msg::ReqLearningRates: {
      const uint32_t capacity = std::min<uint32_t>(r.u32(), 4096);
      double rates[4096];
      uint32_t count = 0;
      refusal([&](ModelAccess& m) { return m.learning_rates(rates, capacity, count); });
      reply_.u32(count);
      for (uint32_t i = 0; i < std::min(count, capacity); ++i) reply_.f64(rates[i]);
      break;
    }
    case Msg::ReqSetLrFactor: {
      const double factor = r.f64();
      refusal([&](ModelAccess& m) { return m.set_lr_factor(factor); });
      break;
    }
    case Msg::ReqLrFactor: {
      double factor = 1.0;
      try {
        if (ModelAccess* m = host_.model_access()) factor = m->lr_factor();
      } catch (const std::exception&) {
      }
      reply_.f64(factor);
      break;
    }
    case Msg::ReqAddMetric: {
      const std::string metric(r.str());
      const double value = r.f64();
      refusal([&](ModelAccess& m) { return m.add_metric(metric, value); });
      break;
    }
    case Msg::ReqSkipStep:
      refusal([&](ModelAccess& m) { return m.skip_optimizer_step(); });
      break;
    default:
      throw std::runtime_error(std::string("isolation protocol: unexpected message ") +
                               isolation::msg_name(type));
  }
  if (!channel_.send(reply_.finish())) fail("a host request", reap());
}

void IsolatedCallback::check_done() {
  isolation::Reader r = channel_.payload();
  const int32_t status = r.i32();
  if (status != TH_OK) throw std::runtime_error(std::string(r.str()));
}

void IsolatedCallback::on_event(EventId event, const th_event_args& args) {
  // th_host.stop_signal in the runner answers what it was last told, before
  // the event that may read it (on_train_end after a first signal).
  if (const int sig = stop_signal_received(); sig != stop_signal_sent_) {
    stop_signal_sent_ = sig;
    reply_.begin(Msg::StopSignal);
    reply_.i32(sig);
    if (!channel_.send(reply_.finish())) fail(event_name(event), reap());
  }
  isolation::write_event(out_, args);
  exchange(Msg::Done, event_name(event));
  isolation::Reader r = channel_.payload();
  const int32_t status = r.i32();
  const std::string_view message = r.str();
  if (status != TH_OK) throw std::runtime_error(std::string(message));
  // The flags the plugin set come back as they would in process.
  r.raw(args.control, sizeof(th_control));
  args.control->struct_size = TH_CONTROL_STRUCT_SIZE;
}

std::optional<nlohmann::json> IsolatedCallback::save_state() {
  if (!has_save_state_) return std::nullopt;
  out_.begin(Msg::SaveState);
  exchange(Msg::Done, "save_state");
  check_done();
  isolation::Reader r = channel_.payload();
  r.i32();
  r.str();
  if (r.u8() == 0) return std::nullopt;
  return nlohmann::json::parse(r.str());
}

void IsolatedCallback::load_state(const nlohmann::json& state) {
  if (!has_load_state_) return;
  out_.begin(Msg::LoadState);
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
