#include <trainhook/tensorboard/tensorboard_callback.hpp>

#include <trainhook/tensorboard/histograms.hpp>

#include <trainhook/tensorboard/event_builder.hpp>
#include <trainhook/tensorboard/log_dir.hpp>

#include <trainhook/support/clock.hpp>
#include <trainhook/support/end_of_run_summary.hpp>
#include <trainhook/support/host_name.hpp>
#include <trainhook/support/log_values.hpp>

#include <nlohmann/json.hpp>

#include <unistd.h>
#include <atomic>
#include <chrono>
#include <ctime>
#include <optional>
#include <string_view>
#include <system_error>

namespace trainhook::tensorboard {
namespace {

// The text a run that ended by an error carries its reason under.
constexpr const char* kFailureTag = "trainhook/failure";

// Numbers the event files one process creates (torch's _global_uid).
std::atomic<uint64_t> g_file_counter{0};

// HF writes args.to_json_string(): indented, sorted keys.
std::string pretty_json(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  return j.is_discarded() ? text : j.dump(2);
}

}  // namespace

// One run's event file and what its closing hparams events need; the state
// lives here, not in the callback, because a run that fails is closed by the
// base after the callback's own members are gone.
class TensorBoardRun final : public EventFileDelivery {
 public:
  TensorBoardRun(trainhook::Host host, const std::filesystem::path& file, const TensorBoardOptions& options)
      : EventFileDelivery(file, static_cast<size_t>(options.queue_size()),
                          std::chrono::milliseconds(static_cast<int64_t>(options.flush_secs() * 1000)),
                          support::host_logger(host)),
        host_(host),
        queue_size_(static_cast<size_t>(options.queue_size())) {
    set_final_events(
        [this](const std::vector<std::string>& scalar_tags) { return closing_events(scalar_tags); });
  }

  std::vector<HParam> hparams;
  bool session_started = false;
  int64_t last_step = 0;  // global_step of the last event seen, for the closing hparams events

  // A run that ended by an error (the base's on_exception) gets its reason
  // as the last text before the closing hparams events: tag
  // trainhook/failure, "<kind> at step N: message", at the failure's step.
  std::optional<EventItem> end_mark_with(const support::RunEnd& end) override {
    if (end.failure_kind.empty()) return std::nullopt;
    std::string event;
    encode_summary_event(event, support::unix_seconds(), end.step >= 0 ? end.step : last_step,
                         [&](ProtoWriter& summary) {
                           write_text_value(summary, "", kFailureTag, support::describe_run_end(end));
                         });
    return EventItem(std::move(event));
  }

  void report(support::DeliveryResult<EventItem> result) override {
    status_ =
        result.outcome == support::RunOutcome::finished ? SessionStatus::success : SessionStatus::failure;
    end_ = result.end;
    EventFileDelivery::report(std::move(result));
  }

 private:
  std::vector<std::string> closing_events(const std::vector<std::string>& scalar_tags) const {
    std::vector<std::string> events;
    if (!session_started) return events;
    const double now = support::unix_seconds();
    // Written once, at the end, because TensorBoard keeps the first
    // experiment it reads and only now are all the metric tags known; while
    // the run is live the HPARAMS tab derives the metrics from the scalars.
    const std::string experiment = experiment_content(hparams, scalar_tags, now);
    const std::string end = session_end_content(status_, now);
    events.emplace_back();
    encode_summary_event(events.back(), now, last_step, [&](ProtoWriter& summary) {
      write_hparams_value(summary, kExperimentTag, experiment);
    });
    events.emplace_back();
    encode_summary_event(events.back(), now, last_step,
                         [&](ProtoWriter& summary) { write_hparams_value(summary, kSessionEndTag, end); });
    return events;
  }

  // The file is flushed (fsync) and closed when this runs.
  void closed(support::RunOutcome) override {
    const WriterStats& st = stats();
    if (!st.error.empty())
      host_.warn(st.error + " (" + std::to_string(st.lost_records) + " events not written)");
    // The one end-of-run line (support/end_of_run_summary.hpp). Events go
    // straight to the local file: nothing is ever spooled for later.
    support::EndOfRunSummary s;
    s.integration = "TensorBoard";
    s.run = st.file.string();
    s.status = support::run_status_name(end_.outcome);
    s.failure = support::describe_run_end(end_);
    s.unit = "events (" + std::to_string(st.scalars_written) + " scalars)";
    s.delivered = st.events_written;
    s.lost = st.dropped_records + st.lost_records;
    if (st.dropped_records > 0)
      s.lost_reason = support::queue_full_reason(st.dropped_records, queue_size_,
                                                 "plugin_config tensorboard.queue_size") +
                      " (" + std::to_string(st.dropped_scalars) + " scalars)";
    if (!st.error.empty()) s.lost_reason += (s.lost_reason.empty() ? "" : "; ") + st.error;
    support::log_end_of_run(support::host_logger(host_), s);
  }

  trainhook::Host host_;
  size_t queue_size_;
  SessionStatus status_ = SessionStatus::failure;
  support::RunEnd end_{support::RunOutcome::failed};
};

TensorBoardCallback::TensorBoardCallback(trainhook::Setup& setup)
    : Integration(setup.host()), options_(TensorBoardOptions::from_json(setup.config_json())) {
  // Without histograms, on_pre_optimizer_step reads nothing and returns: then
  // it is observe-only too, and an isolated writer is never waited for per step.
  if (!options_.weight_histograms() && !options_.gradient_histograms())
    setup.host().set_observe_only(TH_EVENT_BIT(TH_EVENT_LOG) | TH_EVENT_BIT(TH_EVENT_PRE_OPTIMIZER_STEP));
}

TensorBoardRun& TensorBoardCallback::run() { return static_cast<TensorBoardRun&>(delivery()); }

std::unique_ptr<support::Delivery<EventItem>> TensorBoardCallback::open_run(trainhook::Event& e) {
  const th_state& state = e.state();
  const std::time_t now = std::time(nullptr);
  const std::string host = support::host_name("localhost");
  LogDirInputs in;
  in.configured = options_.logging_dir();  // TENSORBOARD_LOGGING_DIR too: the option table reads it
  in.output_dir = host_.output_dir();
  if (state.trial_name != nullptr) in.trial_name = state.trial_name;
  // One run, one folder (HF resolves logging_dir once per run): a writer
  // reopened after train end, for the post-training evaluate(), adds an event
  // file next to the first instead of starting a new timestamped run.
  const std::string trial = in.trial_name;
  if (log_dir_.empty() || trial != log_dir_trial_) {
    log_dir_ = resolve_log_dir(in, now, host);
    log_dir_trial_ = trial;
  }
  const std::filesystem::path dir = log_dir_;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw std::runtime_error("cannot create the TensorBoard log folder " + dir.string() + ": " +
                             ec.message());
  const auto file = dir / event_file_name(now, host, static_cast<int64_t>(::getpid()), g_file_counter++);
  auto run = std::make_unique<TensorBoardRun>(host_, file, options_);
  host_.info("writing TensorBoard events to " + file.string());
  return run;
}

void TensorBoardCallback::run_began(trainhook::Event& e, bool) {
  const th_state& state = e.state();
  TensorBoardRun& r = run();
  r.last_step = state.global_step;
  const double now = support::unix_seconds();
  const std::string args = host_.training_args_json();
  const std::string model = host_.model_description();
  std::string event;
  encode_summary_event(event, now, state.global_step, [&](ProtoWriter& summary) {
    write_text_value(summary, "", "args", pretty_json(args));
    if (!model.empty()) write_text_value(summary, "", "model_config", model);
  });
  enqueue(EventItem(std::move(event)));

  try {
    r.hparams = hparams_from_json(args);
  } catch (const std::exception& ex) {
    host_.warn(std::string("no hparams session: ") + ex.what());
    return;
  }
  event.clear();
  const std::string content = session_start_content(r.hparams, "", now);
  encode_summary_event(event, now, state.global_step, [&](ProtoWriter& summary) {
    write_hparams_value(summary, kSessionStartTag, content);
  });
  enqueue(EventItem(std::move(event)));
  r.session_started = true;
}

void TensorBoardCallback::on_log(trainhook::Event& e) {
  const trainhook::Values logs = e.values();
  if (logs.empty()) return;
  const bool reopening = !running() && trained_;
  if (!start(e)) return;
  // The final evaluate()'s file after a finished training: it ends as
  // finished when the callback goes, unless an EXCEPTION ends it first.
  if (reopening) finish_at_destruction(support::RunOutcome::finished);
  run().last_step = e.state().global_step;
  // Everything the ABI carries is a number or a string, which HF writes as a
  // scalar or a text; HF's "other types are skipped with a warning" has no
  // counterpart here. NaN and infinities are scalars, as in HF.
  LogRecord record(support::unix_seconds(), e.state().global_step);
  size_t key_bytes = 0;
  for (uint32_t i = 0; i < logs.size(); ++i) key_bytes += logs.key(i).size();
  record.reserve_scalars(logs.size(), key_bytes);
  support::for_each_value(
      logs, [&](std::string_view key, double value) { record.add_scalar(key, value); },
      [&](std::string_view key, std::string_view text) { record.add_text(key, text); });
  const size_t scalars = record.scalar_count();
  if (!enqueue(EventItem(std::move(record)))) run().count_dropped_scalars(scalars);
}

void TensorBoardCallback::on_pre_optimizer_step(trainhook::Event& e) {
  if (!options_.weight_histograms() && !options_.gradient_histograms()) return;
  const th_state& st = e.state();
  const int64_t every = options_.histogram_steps() > 0 ? options_.histogram_steps() : st.logging_steps;
  const int64_t step = st.global_step + 1;  // the step being made
  if (every <= 0 || step % every != 0 || !start(e)) return;
  std::vector<std::pair<std::string, Histogram>> hs;
  if (options_.weight_histograms())
    for (const TensorView t : host_.tensors(Tensors::parameters))
      hs.emplace_back("weights/" + std::string(t.name()), histogram_of(t));
  if (options_.gradient_histograms())
    for (const TensorView t : host_.tensors(Tensors::gradients))
      if (t.defined()) hs.emplace_back("gradients/" + std::string(t.name()), histogram_of(t));
  // Reading the tensors has to happen now; the file write happens on the worker.
  enqueue(EventItem(encode_histogram_event(support::unix_seconds(), step, hs)));
}

void TensorBoardCallback::run_ending(trainhook::Event& e, const support::RunEnd&) {
  run().last_step = e.state().global_step;
  trained_ = true;
}

}  // namespace trainhook::tensorboard
