// The one lifecycle every integration (tensorboard, mlflow, wandb, prometheus,
// jsonl, csv, flyte) shares, on the model of spdlog's base_sink: the base owns
// the sequence, a plugin writes only how to deliver a batch and how to report.
//
//   Delivery<Record>           what a plugin writes: deliver() a batch on the
//                              worker thread; end_mark() and report() on the
//                              training thread.
//   DeliveryQueue<Record>      a Delivery behind a support::Worker: enqueue,
//                              flush, and finish() = enqueue the end mark,
//                              flush within the delivery's timeout, stop the
//                              worker, hand report() what was not delivered.
//                              Destroyed unfinished: finishes as failed.
//   IntegrationCallback<Record> a trainhook::Callback holding one
//                              DeliveryQueue per run: start() at train begin
//                              (open_run() builds the Delivery), finish() at
//                              train end, and failure on destruction (the run
//                              is marked FAILED when the callback goes away
//                              without finish(), e.g. training threw).
//                              Its entry points are overridable: kept for
//                              the packs built on it before Integration.
//   Integration<Record>        the IntegrationCallback every integration
//                              derives from: on_train_begin, on_train_end
//                              and on_exception are final, and the base runs
//                              the sequence, calling the plugin's hooks.
//
// Integration's sequence (the hooks default to doing nothing):
//   on_train_begin  a run open and ends_open_run_at_begin(): finish() it;
//                   start(); with a run open: run_began(e, opened), `opened`
//                   true when start() opened it now
//   on_train_end    train_ending(e), at every train end, run or not; then,
//                   with a run open (or opens_run_to_end() and start()):
//                   run_ending(e, end), end = finished (killed after a first
//                   signal), and finish(end) -- unless
//                   keeps_run_after_train_end(): the run stays open and ends
//                   as finished at destruction
//   on_exception    with a run open (or opens_run_to_end() and start()):
//                   run_failing(e, end), end = on_exception's RunEnd, and
//                   finish(end)
// So no integration can forget to open, flush or end its run, and a run ends
// exactly once (finish() closes it; a later end finds none). The other events
// stay the plugin's: they enqueue() into the open run, and may start() one
// (a log after train end, for the final evaluate()).
//
// The outcome of a run, owned here once for every integration:
//   finished  on_train_end of a run nobody stopped;
//   killed    on_train_end after a first SIGINT/SIGTERM asked the run to stop
//             and save (Host::stop_signal, ABI 1.3), or on_exception for a
//             second signal (the user ended the run; it did not fail);
//   failed    on_exception (ABI 1.3) with the failure's kind and message as
//             the reason, or destruction without either event (an older host).
// A plugin reads the reason in end_mark_with() and DeliveryResult::end.
//
// The rank rule, stated once: integrations report from the world-zero process
// only. The trainer creates them on that process only (core/src/trainer), and
// start() refuses to open a run on any other process for hosts that create
// them everywhere; since nothing is queued before a run is open, no other
// event needs a rank check.
//
// Threads: deliver() runs on the worker thread only; everything else on the
// training thread. report() runs after the worker thread has ended, so it may
// touch everything deliver() touched.
#pragma once

#include <trainhook/plugin.hpp>
#include <trainhook/support/worker.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace trainhook::support {

enum class RunOutcome { finished, failed, killed };

// How and why a run ended (see the outcome rules at the top).
struct RunEnd {
  RunEnd() = default;
  explicit RunEnd(RunOutcome o) : outcome(o) {}

  RunOutcome outcome = RunOutcome::finished;
  // From on_exception's th_failure: failure_kind_name() of its kind, its
  // message (the error the user sees) and global_step; empty/-1 otherwise.
  std::string failure_kind;
  std::string message;
  int64_t step = -1;
  // killed: the signal that stopped the run (SIGINT, SIGTERM); else 0.
  int stop_signal = 0;

  // "<kind>: <message>" for a failure known from on_exception, "stopped by
  // signal N" for a first-signal stop, else "".
  std::string reason() const {
    if (!failure_kind.empty()) return failure_kind + ": " + message;
    if (stop_signal != 0) return "stopped by signal " + std::to_string(stop_signal);
    return {};
  }
};

// What finish() hands to Delivery::report().
template <class Record>
struct DeliveryResult {
  RunOutcome outcome = RunOutcome::finished;  // == end.outcome
  RunEnd end;
  bool drained = false;             // everything was delivered within the flush timeout
  bool interrupted = false;         // the wait ended early: the run must end now (a signal; ABI 1.2)
  WorkerStats stats;                // after the worker stopped
  std::vector<Record> undelivered;  // never reached deliver(), in order
};

template <class Record>
class Delivery {
 public:
  virtual ~Delivery() = default;
  // Worker thread: deliver the batch (see Worker::Handler for the backlog rules).
  virtual BatchResult deliver(std::vector<Record>& batch, WorkerContext& ctx) = 0;
  // Training thread, at finish(): the record that closes the run, if any.
  // end_mark_with() is what finish() calls; override it to see the reason,
  // or end_mark() when the outcome is enough (a distinct name, so that
  // overriding one never hides the other).
  virtual std::optional<Record> end_mark(RunOutcome) { return std::nullopt; }
  virtual std::optional<Record> end_mark_with(const RunEnd& end) { return end_mark(end.outcome); }
  // Training thread, after the worker stopped: deliver or keep what is left,
  // and say what happened.
  virtual void report(DeliveryResult<Record> result) = 0;
  // How the worker queues and batches; read once, when the queue starts.
  virtual WorkerOptions worker_options() const { return {}; }
  // How long finish() waits for the queue to drain; 0: it does not wait
  // (report() receives whatever was still queued).
  virtual std::chrono::milliseconds flush_timeout() const { return std::chrono::milliseconds(0); }
  // Superseding (opt-in, read once when the queue starts; see Worker): while
  // deliver() is busy, a new record replaces a waiting one when
  // supersedes(newer, waiting) is true. It runs under the queue's lock (keep
  // it short; it may note `newer` in `waiting`); superseded() then receives
  // the replaced record on the enqueuing thread, to report and release it.
  virtual bool coalesces() const { return false; }
  virtual bool supersedes(const Record& /*newer*/, Record& /*waiting*/) const { return false; }
  virtual void superseded(Record /*waiting*/) {}
};

template <class Record>
class DeliveryQueue {
 public:
  // `end_now` (optional, any thread): true once finish() must stop waiting for
  // the queue to drain (Host::end_requested: a signal during on_train_end).
  // `timed` (optional): called on the worker thread with the start and end of
  // every deliver() (the run's profile: Host::profile_span).
  using BatchTimer =
      std::function<void(std::chrono::steady_clock::time_point, std::chrono::steady_clock::time_point)>;
  explicit DeliveryQueue(std::unique_ptr<Delivery<Record>> delivery, std::function<bool()> end_now = {},
                         BatchTimer timed = {})
      : end_now_(std::move(end_now)),
        delivery_(std::move(delivery)),
        worker_(
            std::in_place,
            [d = delivery_.get(), timed = std::move(timed)](std::vector<Record>& batch, WorkerContext& ctx) {
              if (!timed) return d->deliver(batch, ctx);
              const auto start = std::chrono::steady_clock::now();
              BatchResult r = d->deliver(batch, ctx);
              timed(start, std::chrono::steady_clock::now());
              return r;
            },
            delivery_->worker_options(),
            delivery_->coalesces() ? typename Worker<Record>::Supersede(
                                         [d = delivery_.get()](const Record& newer, Record& waiting) {
                                           return d->supersedes(newer, waiting);
                                         })
                                   : typename Worker<Record>::Supersede()) {}
  ~DeliveryQueue() {
    try {
      finish(RunEnd{RunOutcome::failed});
    } catch (...) {
      // Nothing may leave a destructor; report() said what it could.
    }
  }
  DeliveryQueue(const DeliveryQueue&) = delete;
  DeliveryQueue& operator=(const DeliveryQueue&) = delete;

  // Never blocks. False when the queue is full (counted in WorkerStats::dropped) or finished.
  // A record it superseded goes to Delivery::superseded() before it returns.
  bool enqueue(Record r) {
    if (!worker_) return false;
    std::optional<Record> replaced;
    const bool queued = worker_->enqueue(std::move(r), &replaced);
    if (replaced) delivery_->superseded(std::move(*replaced));
    return queued;
  }
  // Queues the records in order under one lock (see Worker::enqueue_all; no
  // superseding). Returns how many were queued.
  size_t enqueue_all(std::vector<Record>& records) { return worker_ ? worker_->enqueue_all(records) : 0; }
  bool flush(std::chrono::milliseconds timeout) { return worker_ && worker_->flush(timeout); }
  // Worker thread only (inside deliver()): takes up to max queued records early.
  std::vector<Record> take_queued(size_t max) {
    return worker_ ? worker_->take_queued(max) : std::vector<Record>{};
  }
  bool finished() const noexcept { return !worker_; }
  Delivery<Record>& delivery() noexcept { return *delivery_; }
  // Called once by finish() when the queue has not drained after a first short
  // wait, with the records not yet delivered and the time finish() will wait at most: the
  // end of a run that waits for a slow server says so instead of going quiet.
  void on_slow_flush(std::function<void(size_t queued, std::chrono::milliseconds timeout)> f) {
    on_slow_flush_ = std::move(f);
  }

  // Enqueues the end mark, waits up to flush_timeout(), stops the worker and
  // reports. Idempotent.
  void finish(RunOutcome outcome) { finish(RunEnd{outcome}); }
  void finish(const RunEnd& end) {
    if (!worker_) return;
    if (std::optional<Record> mark = delivery_->end_mark_with(end)) worker_->enqueue(std::move(*mark));
    const std::chrono::milliseconds timeout = delivery_->flush_timeout();
    DeliveryResult<Record> result;
    result.outcome = end.outcome;
    result.end = end;
    result.drained = worker_->stats().queued == 0;
    // Waits in slices, so that a request to end now is seen within one.
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (timeout.count() > 0) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      result.drained = worker_->flush(std::min(left, std::chrono::milliseconds(100)));
      if (result.drained) break;
      if (on_slow_flush_) {
        const WorkerStats st = worker_->stats();  // queued, or taken by deliver() and not done yet
        const uint64_t done = st.delivered + st.failed;
        on_slow_flush_(static_cast<size_t>(std::max(st.queued, st.enqueued > done ? st.enqueued - done : 0)),
                       timeout);
        on_slow_flush_ = nullptr;
      }
      if (end_now_ && end_now_()) {
        result.interrupted = true;
        break;
      }
    }
    result.undelivered = worker_->stop();
    result.stats = worker_->stats();
    worker_.reset();
    delivery_->report(std::move(result));
  }

 private:
  std::function<bool()> end_now_;
  std::function<void(size_t, std::chrono::milliseconds)> on_slow_flush_;
  std::unique_ptr<Delivery<Record>> delivery_;
  std::optional<Worker<Record>> worker_;  // after delivery_: stopped before it goes
};

template <class Record>
class IntegrationCallback : public trainhook::Callback {
 public:
  // Destroyed with a run open (no finish(): training failed or was aborted):
  // the run ends as failed, unless finish_at_destruction() said otherwise.
  // queue_ stays set while it finishes, for queued_taker().
  ~IntegrationCallback() override {
    if (!queue_) return;
    try {
      queue_->finish(end_of(outcome_at_destruction_));
    } catch (...) {
      // Nothing may leave a destructor; report() said what it could.
    }
  }

 protected:
  explicit IntegrationCallback(trainhook::Host host) : host_(host) {}

  // The plugin's part of start(): builds the run's Delivery (may throw to fail
  // the event; may return null to log nothing, e.g. the integration is disabled).
  virtual std::unique_ptr<Delivery<Record>> open_run(trainhook::Event& e) = 0;

  // Opens a run unless one is open or this is not the world-zero process (the
  // rank rule above). True when a run is open afterwards.
  bool start(trainhook::Event& e) {
    if (queue_) return true;
    if (!e.is_world_process_zero()) return false;
    std::unique_ptr<Delivery<Record>> delivery = open_run(e);
    if (!delivery) return false;
    // Under --profile (ABI 1.5) each batch the worker delivers is a span of the run's profile.
    typename DeliveryQueue<Record>::BatchTimer timed;
    if (host_.profiling())
      timed = [host = host_](std::chrono::steady_clock::time_point start, std::chrono::steady_clock::time_point end) {
        host.profile_span("deliver", start, end);
      };
    queue_ = std::make_unique<DeliveryQueue<Record>>(
        std::move(delivery), [host = host_] { return host.end_requested(); }, std::move(timed));
    queue_->on_slow_flush([host = host_](size_t queued, std::chrono::milliseconds timeout) {
      host.info("waiting up to " + std::to_string((timeout.count() + 999) / 1000) + " s for " +
                std::to_string(queued) +
                " record(s) to be delivered before the run ends (a SIGINT/SIGTERM ends the wait; the last "
                "line says what was left)");
    });
    outcome_at_destruction_ = RunOutcome::failed;
    return true;
  }
  bool running() const noexcept { return queue_ != nullptr; }

 public:
  // ABI 1.3: the run is ending by an error (on_train_end does not follow).
  // Ends the open run as failed with the failure as its reason (killed for a
  // second signal), flushing within the delivery's timeout. A plugin that
  // overrides this calls it.
  void on_exception(trainhook::Event& e) override {
    if (!queue_) return;
    finish(failure_end(e));
  }

 protected:
  // on_exception's RunEnd: failed (killed for TH_FAILURE_SIGNAL) with the
  // th_failure's kind, message and step.
  static RunEnd failure_end(trainhook::Event& e) {
    RunEnd end;
    end.outcome = RunOutcome::failed;
    end.step = e.state().global_step;
    if (const th_failure* f = e.failure()) {
      const bool has_kind = TH_HAS_FIELD(f, th_failure, kind);
      end.failure_kind = trainhook::failure_kind_name(has_kind ? f->kind : TH_FAILURE_ERROR);
      if (has_kind && f->kind == TH_FAILURE_SIGNAL) end.outcome = RunOutcome::killed;
      if (TH_HAS_FIELD(f, th_failure, message) && f->message != nullptr) end.message = f->message;
      if (TH_HAS_FIELD(f, th_failure, step)) end.step = f->step;
    } else {
      end.failure_kind = trainhook::failure_kind_name(TH_FAILURE_ERROR);
      end.message = "the run ended by an error (the host gave no details)";
    }
    return end;
  }

  bool enqueue(Record r) { return queue_ && queue_->enqueue(std::move(r)); }
  // The records of one event, in order, under one lock; moves from those it
  // queues. Returns how many were queued (the rest are counted as dropped).
  size_t enqueue_all(std::vector<Record>& records) { return queue_ ? queue_->enqueue_all(records) : 0; }
  bool flush(std::chrono::milliseconds timeout) { return queue_ && queue_->flush(timeout); }
  // Ends the run now (a later start() opens a new one). `finished` becomes
  // killed when a first signal stopped the run (Host::stop_signal).
  void finish(RunOutcome outcome) { finish(end_of(outcome)); }
  void finish(const RunEnd& end) {
    if (!queue_) return;
    struct Close {  // the run is over even when report() throws
      std::unique_ptr<DeliveryQueue<Record>>& q;
      ~Close() { q.reset(); }
    } close{queue_};
    queue_->finish(end);  // the worker thread has ended when this returns
  }
  // The RunEnd of a plain outcome: finished becomes killed after a first signal.
  RunEnd end_of(RunOutcome outcome) const {
    RunEnd end{outcome};
    if (outcome == RunOutcome::finished) {
      if (const int sig = host_.stop_signal(); sig != 0) {
        end.outcome = RunOutcome::killed;
        end.stop_signal = sig;
      }
    }
    return end;
  }
  // For a run that stays open after train end (wandb keeps it for the final
  // evaluate()): the outcome it ends with when the callback is destroyed.
  void finish_at_destruction(RunOutcome outcome) noexcept { outcome_at_destruction_ = outcome; }
  // The open run's Delivery (running() must be true).
  Delivery<Record>& delivery() noexcept { return queue_->delivery(); }
  // For a Delivery that takes records early: call only from deliver() (the
  // worker thread), where the queue exists.
  std::function<std::vector<Record>(size_t)> queued_taker() {
    return [this](size_t max) { return queue_ ? queue_->take_queued(max) : std::vector<Record>{}; };
  }

  trainhook::Host host_;

 private:
  std::unique_ptr<DeliveryQueue<Record>> queue_;
  RunOutcome outcome_at_destruction_ = RunOutcome::failed;
};

// The integration base with the sequence owned here (see the top): a plugin
// implements open_run() and the hooks it needs, never the three entry points.
template <class Record>
class Integration : public IntegrationCallback<Record> {
  using Base = IntegrationCallback<Record>;

 public:
  // The events an integration only observes (Host::set_observe_only, ABI 1.6):
  // the records it queues for its worker. Those it overrides reach it
  // isolated without a round trip; the rest stay waited for: train begin and
  // end (the base opens and flushes the run there), on_save (a checkpoint
  // folder may be rotated away once the trainer moves on), step events (a
  // plugin may steer there) and pre-optimizer step (tensorboard may read the
  // model's tensors). A subclass that steers the run at one of these
  // redeclares the constant; one that only observes more widens it
  // (prometheus: its step events, timed with Event::time) or calls
  // Host::set_observe_only from its constructor when its options decide
  // (tensorboard without histograms).
  static constexpr uint64_t observed_events =
      TH_EVENT_BIT(TH_EVENT_LOG) | TH_EVENT_BIT(TH_EVENT_EVALUATE) | TH_EVENT_BIT(TH_EVENT_PREDICT);
  // Waited for but side by side (Host::set_side_by_side, ABI 1.8): on_save,
  // where an integration does its own work only (flushes its own file, links
  // or queues the checkpoint it uploads) and never steers, so an isolated
  // one's call overlaps the next callbacks' calls. Only for an integration
  // that overrides on_save; one that observes it only keeps that.
  static constexpr uint64_t side_by_side_events = TH_EVENT_BIT(TH_EVENT_SAVE);

  void on_train_begin(trainhook::Event& e) final {
    if (this->running() && ends_open_run_at_begin()) this->finish(RunOutcome::finished);
    const bool was_open = this->running();
    if (this->start(e)) run_began(e, !was_open);
  }
  void on_train_end(trainhook::Event& e) final {
    train_ending(e);
    if (!open_to_end(e)) return;
    const RunEnd end = this->end_of(RunOutcome::finished);
    if (keeps_run_after_train_end()) {
      this->finish_at_destruction(RunOutcome::finished);
      run_ending(e, end);
      return;
    }
    run_ending(e, end);
    this->finish(end);
  }
  void on_exception(trainhook::Event& e) final {
    if (!open_to_end(e)) return;
    const RunEnd end = Base::failure_end(e);
    run_failing(e, end);
    this->finish(end);
  }

 protected:
  using Base::Base;

  // Train begin, a run open (`opened`: start() opened it now, rather than an
  // earlier event): the run's first records.
  virtual void run_began(trainhook::Event& /*e*/, bool /*opened*/) {}
  // Every train end, before the run (if any) ends; a record queued here goes
  // out with the run when start() can open one.
  virtual void train_ending(trainhook::Event& /*e*/) {}
  // Train end with a run open: the final records before the end mark
  // (`end`: finished, or killed after a first signal).
  virtual void run_ending(trainhook::Event& /*e*/, const RunEnd& /*end*/) {}
  // on_exception with a run open: what the failure still needs before the
  // run ends as `end` (failed, or killed for a second signal).
  virtual void run_failing(trainhook::Event& /*e*/, const RunEnd& /*end*/) {}
  // True: a run still open at train begin (e.g. from an evaluate() before
  // train()) ends as finished first and a new one opens.
  virtual bool ends_open_run_at_begin() const { return false; }
  // True: a train end or failure with no run open opens one (start()) to end it.
  virtual bool opens_run_to_end() const { return false; }
  // True: train end does not end the run (run_ending() flushes what it must);
  // it ends as finished when the callback is destroyed, or by on_exception.
  virtual bool keeps_run_after_train_end() const { return false; }

 private:
  bool open_to_end(trainhook::Event& e) { return this->running() || (opens_run_to_end() && this->start(e)); }
};

}  // namespace trainhook::support
