// trainhook-plugin-runner: runs ONE plugin callback in its own process for the
// trainer's IsolatedCallback (isolated_callback.hpp), talking over the socket
// on descriptor isolation::kRunnerFd. Torch-free: it links trainhook_base only.
//
//   trainhook-plugin-runner <library file> <callback name>
//
// Threads: a reader thread owns the socket's input. It hands calls (create,
// event, save/load state, shutdown) to the main thread, which runs the plugin,
// and replies to the main thread or to whichever plugin thread made a host
// request; one host request is outstanding at a time (request_mu_). Any thread
// may send (send_mu_): a plugin's worker logs while the main thread waits.
// The main thread is also the event ring's consumer (event_ring.hpp): before
// each call it runs the observe-only events the trainer pushed before sending
// that call, so the plugin gets every event, on one thread, in order. When it
// has nothing to run it looks, sleeps and wakes as wake_policy.hpp decides.
// Every call carries a number, and its Done (Created) carries it back.
// What it sends unasked (a log, a stop request, a failed observed event, a
// plugin thread's request) is also flagged in the ring, so the trainer serves
// it at its next push rather than at its next waited call.
//
// Lifetime: the process ends after Shutdown, as soon as the trainer's end of
// the socket closes (the trainer gave up on it), or when the trainer process
// ends, even if another process (a daemon a plugin forked) holds the
// trainer's end of the socket: it watches the trainer's pidfd. Every
// descriptor it inherited is close-on-exec from its first instruction, so a
// program a plugin starts holds neither the socket nor the ring. It ignores SIGINT
// and SIGTERM and lives in its own process group: the trainer decides when it
// ends, so it is still there for on_train_end after a Ctrl-C.
#include "../host/plugin_callback.hpp"
#include "../registry/plugin_loader.hpp"
#include "event_ring.hpp"
#include "isolation_protocol.hpp"
#include "wake_policy.hpp"

#include <trainhook/common/cpu_relax.hpp>
#include <trainhook/plugin_host/host/end_request.hpp>
#include <trainhook/plugin_host/host/host_services.hpp>
#include <trainhook/plugin_host/host/model_access.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

namespace trainhook::detail {

// Marks every descriptor from `first` on close-on-exec.
void close_on_exec_from(int first) noexcept;

namespace {

using isolation::Msg;

class Link {
 public:
  // `trainer_fd`: a pidfd of the trainer (-1: none), watched with the socket.
  Link(int fd, int trainer_fd) : in_(fd, trainer_fd), out_(fd) {}

  // Sends one message built by `build(Writer&)`.
  template <class Build>
  void send(Build&& build) {
    thread_local isolation::Writer w;
    build(w);
    std::lock_guard<std::mutex> lock(send_mu_);
    if (!out_.send(w.finish())) gone();
  }
  // A message the trainer did not ask for: sent, then flagged in the ring.
  template <class Build>
  void send_unasked(Build&& build) {
    send(build);
    if (isolation::EventRing* ring = ring_.load(); ring != nullptr) ring->note_unasked();
  }

  // Sends a request and waits for its Reply; returns the reply's payload.
  template <class Build>
  std::string request(Build&& build) {
    std::unique_lock<std::mutex> req(request_mu_);
    {
      std::lock_guard<std::mutex> lock(mu_);
      reply_ready_ = false;
    }
    send_unasked(build);
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return reply_ready_; });
    return reply_;
  }

  // Main thread: the next call (its type; payload in call()).
  Msg next_call() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return call_ready_; });
    call_ready_ = false;
    call_waiting_.store(false);
    return call_type_;
  }
  // A call has arrived that next_call() has not taken yet.
  bool call_waiting() const noexcept { return call_waiting_.load(); }
  // The ring whose consumer (the main thread) a call must wake, and where
  // unasked messages are flagged.
  void wake_on_call(isolation::EventRing* ring) noexcept { ring_.store(ring); }
  isolation::Reader call() const { return isolation::Reader(call_.data(), call_.size()); }

  // The reader thread's loop; never returns (the process ends on EOF).
  void read_forever() {
    for (;;) {
      if (in_.receive(std::chrono::steady_clock::time_point::max()) != isolation::Channel::Result::message)
        gone();
      const Msg type = in_.type();
      if (type == Msg::EndNow) {
        request_end_now();
        continue;
      }
      if (type == Msg::StopSignal) {
        isolation::Reader r = in_.payload();
        record_stop_signal(r.i32());  // th_host.stop_signal (ABI 1.3)
        continue;
      }
      const std::string_view bytes = in_.payload_bytes();
      std::lock_guard<std::mutex> lock(mu_);
      if (type == Msg::Reply) {
        reply_.assign(bytes.data(), bytes.size());
        reply_ready_ = true;
      } else {
        // One call at a time: the trainer sends the next only after our Done.
        call_.assign(bytes.data(), bytes.size());  // keeps the capacity
        call_type_ = type;
        call_ready_ = true;
        call_waiting_.store(true);
      }
      cv_.notify_all();
      if (isolation::EventRing* ring = ring_.load(); ring != nullptr && type != Msg::Reply) ring->wake();
    }
  }

  // The trainer's end is closed, or the trainer is gone: nobody is left to serve.
  [[noreturn]] static void gone() {
    std::fflush(nullptr);
    ::_exit(0);
  }

 private:
  isolation::Channel in_;
  isolation::Channel out_;
  std::mutex send_mu_, request_mu_, mu_;
  std::condition_variable cv_;
  std::string reply_, call_;
  bool reply_ready_ = false, call_ready_ = false;
  std::atomic<bool> call_waiting_{false};
  std::atomic<isolation::EventRing*> ring_{nullptr};
  Msg call_type_ = Msg::Shutdown;
};

std::string read_refusal(const std::string& reply) {
  isolation::Reader r(reply.data(), reply.size());
  return std::string(r.str());
}

// What the plugin's th_host reaches, forwarded to the trainer.
class RunnerServices final : public HostServices, public ModelAccess {
 public:
  RunnerServices(Link& link, std::string who, std::string output_dir, std::string args_json,
                 std::string run_name, std::string model_description)
      : link_(link),
        who_(std::move(who)),
        output_dir_(std::move(output_dir)),
        args_json_(std::move(args_json)),
        run_name_(std::move(run_name)),
        model_description_(std::move(model_description)) {}

  void log(int32_t level, const std::string&, const std::string& message) override {
    link_.send_unasked([&](isolation::Writer& w) {
      w.begin(Msg::Log);
      w.i32(level);
      w.str(message);
    });
  }
  std::string output_dir() const override { return output_dir_; }
  std::string training_args_json() const override { return args_json_; }
  void request_stop(const std::string&, const std::string& reason) override {
    link_.send_unasked([&](isolation::Writer& w) {
      w.begin(Msg::Stop);
      w.str(reason);
    });
  }
  std::string trainer_state_json() const override {
    const std::string reply = link_.request([](isolation::Writer& w) { w.begin(Msg::ReqTrainerState); });
    return read_refusal(reply);
  }
  std::string model_description() const override { return model_description_; }
  std::string run_name() const override { return run_name_; }
  std::string set_resume_checkpoint(const std::string& path) override {
    return read_refusal(link_.request([&](isolation::Writer& w) {
      w.begin(Msg::ReqSetResume);
      w.str(path);
    }));
  }
  ModelAccess* model_access() override { return this; }
  // th_host.isolated (ABI 1.4): known in create(), so a callback that needs
  // tensor views refuses there rather than at its first step.
  bool isolated() const override { return true; }

  // ModelAccess: everything but the tensors crosses; tensors are refused. A
  // callback that means to change the model and cannot would train on as if
  // it had: asking to write stops the run.
  std::string tensors(int32_t, int32_t access, th_tensor_list&) override {
    const std::string why =
        "runs in its own process (plugin_isolation): the model's tensors are not shared with it; to read or "
        "write them, trust it to run in process (pin its library in the site's plugin_lock or "
        "TRAINHOOK_PLUGIN_LOCK, or give it plugin_config isolation=in_process or --plugin_isolation none)";
    if (access == TH_ACCESS_WRITE)
      request_stop(who_, "callback '" + who_ + "' asked to write the model's tensors but " + why);
    return why;
  }
  std::string learning_rates(double* out, uint32_t capacity, uint32_t& count) override {
    const std::string reply = link_.request([&](isolation::Writer& w) {
      w.begin(Msg::ReqLearningRates);
      w.u32(capacity);
    });
    isolation::Reader r(reply.data(), reply.size());
    std::string why(r.str());
    count = r.u32();
    for (uint32_t i = 0; i < std::min(count, capacity) && why.empty(); ++i) out[i] = r.f64();
    return why;
  }
  std::string set_lr_factor(double factor) override {
    return read_refusal(link_.request([&](isolation::Writer& w) {
      w.begin(Msg::ReqSetLrFactor);
      w.f64(factor);
    }));
  }
  double lr_factor() const override {
    const std::string reply = link_.request([](isolation::Writer& w) { w.begin(Msg::ReqLrFactor); });
    isolation::Reader r(reply.data(), reply.size());
    return r.f64();
  }
  std::string add_metric(const std::string& name, double value) override {
    return read_refusal(link_.request([&](isolation::Writer& w) {
      w.begin(Msg::ReqAddMetric);
      w.str(name);
      w.f64(value);
    }));
  }
  std::string skip_optimizer_step() override {
    return read_refusal(link_.request([](isolation::Writer& w) { w.begin(Msg::ReqSkipStep); }));
  }

 private:
  Link& link_;
  std::string who_;  // "'<callback>' from <library>"
  std::string output_dir_, args_json_, run_name_, model_description_;
};

void send_done(Link& link, uint64_t call, int32_t status, const std::string& message) {
  link.send([&](isolation::Writer& w) {
    w.begin_call(Msg::Done, call);
    w.i32(status);
    w.str(message);
  });
}

// Runs one observe-only event taken from the ring; a failure has no Done to
// travel in, so it goes to the trainer as a notice.
void run_observed(Link& link, PluginCallback& callback, const std::string& record,
                  isolation::EventStorage& storage) {
  th_event_args args{};
  int32_t event = -1;
  try {
    if (record.size() < 5) throw std::runtime_error("isolation protocol: a ring record without its header");
    isolation::Reader r(record.data() + 5, record.size() - 5);
    r.u64();  // an observed event's number: nothing answers it
    isolation::read_event(r, storage, args);
    event = args.event;
    // PluginCallback refuses a flag or a steering call in a declared event.
    callback.on_event(args.event, args);
  } catch (const std::exception& e) {
    link.send_unasked([&](isolation::Writer& w) {
      w.begin(Msg::Failed);
      w.i32(event);
      w.str(e.what());
    });
  }
}

// True when a record or a call arrived before `until`.
bool await_call(const isolation::EventRing& ring, const Link& link,
                std::chrono::steady_clock::time_point until) {
  for (;;) {
    if (!ring.drained() || link.call_waiting()) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    cpu_relax();
  }
}

// Whether this process may run on more than one CPU: looking for a call
// without sleeping only pays when the trainer runs on another one meanwhile.
bool several_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return ::sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) > 1;
}

// A pidfd of the process that started this one (the trainer), or -1 when the
// kernel has none to give; ends this process when that one is already gone.
int trainer_pidfd() {
  const pid_t parent = ::getppid();
  const long fd = ::syscall(SYS_pidfd_open, parent, 0);
  if (::getppid() != parent) Link::gone();  // it ended before we could watch it
  return fd < 0 ? -1 : static_cast<int>(fd);
}

int run(const std::string& library_file, const std::string& callback_name) {
  Link link(isolation::kRunnerFd, trainer_pidfd());
  // The sleep before an expected call ends when asked, not up to the default
  // 50 us later (the timer slack), which is longer than the wake it saves.
  ::prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
  const bool follow_beat = several_cpus();
  isolation::wake_policy::CallRhythm rhythm;
  // The trainer's ring for observe-only events; without one (not a
  // descriptor we can map) every event stays a round trip.
  isolation::EventRing ring;
  try {
    ring = isolation::EventRing::attach(isolation::kRingFd);
  } catch (const std::exception&) {
  }
  link.wake_on_call(ring.valid() ? &ring : nullptr);
  std::thread reader([&link] { link.read_forever(); });
  reader.detach();  // ends with the process

  if (link.next_call() != Msg::Create) return 2;
  isolation::Reader c = link.call();
  const uint64_t create_call = c.u64();
  const uint32_t version = c.u32();
  const std::string library(c.str()), name(c.str()), config(c.str());
  const std::string output_dir(c.str()), args_json(c.str()), run_name(c.str()), description(c.str());
  RunnerServices services(link, "'" + name + "' from " + library, output_dir, args_json, run_name, description);
  std::unique_ptr<PluginCallback> callback;
  std::string error;
  try {
    if (version != isolation::kProtocolVersion)
      throw std::runtime_error("trainhook-plugin-runner speaks protocol " +
                               std::to_string(isolation::kProtocolVersion) + ", the trainer " +
                               std::to_string(version) + " (mixed installations?)");
    LibraryRecord rec;
    rec.path = library;
    std::shared_ptr<const PluginLibrary> lib = load_passed_plugin_library(library_file, rec);
    if (!lib) throw std::runtime_error("cannot load " + library + ": " + rec.refused_reason);
    const th_callback_info* info = find_callback(*lib, name);
    if (info == nullptr) throw std::runtime_error(library + " exports no callback '" + name + "'");
    callback = std::make_unique<PluginCallback>(lib, *info, services, config);
  } catch (const std::exception& e) {
    error = e.what();
    callback.reset();
  }
  (void)callback_name;
  link.send([&](isolation::Writer& w) {
    w.begin_call(Msg::Created, create_call);
    w.u8(callback ? 1 : 0);
    w.u64(callback ? callback->event_mask() : 0);
    w.u8(callback && callback->critical() ? 1 : 0);
    w.u8(callback && callback->has_save_state() ? 1 : 0);
    w.u8(callback && callback->has_load_state() ? 1 : 0);
    w.str(error);
    w.u64(callback && ring.valid() ? callback->observe_only() : 0);
    w.u8(ring.valid() ? 1 : 0);  // it reads calls from the ring too
    w.u64(callback ? callback->side_by_side() : 0);
  });
  if (!callback) return 0;

  isolation::EventStorage storage, observed_storage;
  std::string record;
  th_event_args args{};
  // One call, from the socket or the ring; false once the runner must end.
  auto handle_call = [&](Msg type, isolation::Reader r) -> bool {
    uint64_t call = 0;
    try {
      call = r.u64();
      switch (type) {
        case Msg::Event: {
          isolation::read_event(r, storage, args);
          rhythm.called(args.event, std::chrono::steady_clock::now());
          callback->on_event(args.event, args);
          link.send([&](isolation::Writer& w) {
            w.begin_call(Msg::Done, call);
            w.i32(TH_OK);
            w.str("");
            w.raw(args.control, sizeof(th_control));
          });
          break;
        }
        case Msg::SaveState: {
          const std::optional<nlohmann::json> state = callback->save_state();
          link.send([&](isolation::Writer& w) {
            w.begin_call(Msg::Done, call);
            w.i32(TH_OK);
            w.str("");
            w.u8(state ? 1 : 0);
            if (state) w.str(state->dump());
          });
          break;
        }
        case Msg::LoadState:
          callback->load_state(nlohmann::json::parse(r.str()));
          send_done(link, call, TH_OK, "");
          break;
        case Msg::Shutdown:
          callback.reset();  // the plugin's destroy(): integrations flush here
          send_done(link, call, TH_OK, "");
          return false;
        default:
          send_done(link, call, TH_ERROR, std::string("unexpected message ") + isolation::msg_name(type));
          break;
      }
    } catch (const std::exception& e) {
      send_done(link, call, TH_ERROR, e.what());
    }
    return true;
  };
  bool answered = false;  // the last thing done was answering a call
  for (;;) {
    // Looked at before draining: what the trainer pushed before sending a
    // call is in the ring by the time the call is seen.
    const bool call = link.call_waiting();
    while (ring.valid() && ring.pop(record)) {
      // The ring carries observe-only events and, in their order, the calls
      // the trainer could put there (it waits for their Done on the socket).
      const Msg type = record.size() >= 5 ? static_cast<Msg>(static_cast<uint8_t>(record[4])) : Msg::Observed;
      if (type == Msg::Observed) {
        run_observed(link, *callback, record, observed_storage);
        answered = false;
      } else if (!handle_call(type, isolation::Reader(record.data() + 5, record.size() - 5))) {
        return 0;
      } else {
        answered = true;
      }
    }
    if (!call && ring.valid()) {
      namespace wake = isolation::wake_policy;
      // Calls come in bursts (a step's on_step_end, then its on_log): after
      // answering one, look for the next a while before anything else.
      const auto now = wake::Clock::now();
      if (answered && await_call(ring, link, now + wake::kNextCallSpin)) continue;
      answered = false;
      const wake::IdlePlan plan = wake::plan_idle(rhythm, follow_beat, now);
      if (plan.sleep_until > now) {
        ring.wait(plan.sleep_until - now, [&] { return link.call_waiting(); });
        if (!ring.drained() || link.call_waiting()) continue;
      }
      if (await_call(ring, link, plan.look_until)) continue;
      if (plan.beat) rhythm.missed(wake::Clock::now());
      continue;
    }
    const Msg type = link.next_call();
    if (!handle_call(type, link.call())) return 0;
    answered = true;
  }
}

}  // namespace

void close_on_exec_from(int first) noexcept {
#ifdef SYS_close_range
  constexpr unsigned kCloexec = 1u << 2;  // CLOSE_RANGE_CLOEXEC (Linux 5.11)
  if (::syscall(SYS_close_range, static_cast<unsigned>(first), ~0u, kCloexec) == 0) return;
#endif
  // An older kernel: each open descriptor in turn.
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (const dirent* e = ::readdir(d)) {
      const int fd = std::atoi(e->d_name);
      if (fd >= first && fd != ::dirfd(d)) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
    ::closedir(d);
  }
}

}  // namespace trainhook::detail

int main(int argc, char** argv) {
  // First: nothing this process inherited may reach a program a plugin runs.
  trainhook::detail::close_on_exec_from(3);
  if (argc != 3) {
    std::fprintf(stderr,
                 "usage: trainhook-plugin-runner <library> <callback>\n"
                 "Started by the trainer for --plugin_isolation; not meant to be run by hand.\n");
    return 2;
  }
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGTERM, SIG_IGN);
  ::signal(SIGPIPE, SIG_IGN);
  const int rc = trainhook::detail::run(argv[1], argv[2]);
  std::fflush(nullptr);
  ::_exit(rc);  // the reader thread is still blocked in read(); nothing to unwind
}
