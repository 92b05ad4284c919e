#include <trainhook/wandb/wandb_callback.hpp>

#include <trainhook/wandb/graphql.hpp>
#include <trainhook/wandb/history_line.hpp>
#include <trainhook/wandb/run_id.hpp>

#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace trainhook::wandb {

namespace {

double unix_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

std::string host_name() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

LogRecord record_of(const trainhook::Values& v, std::optional<int64_t> global_step) {
  std::vector<std::pair<std::string, double>> numbers;
  std::vector<std::pair<std::string, std::string>> strings;
  numbers.reserve(v.size());
  for (uint32_t i = 0; i < v.size(); ++i) numbers.emplace_back(std::string(v.key(i)), v.value(i));
  for (uint32_t i = 0; i < v.string_size(); ++i)
    strings.emplace_back(std::string(v.string_key(i)), std::string(v.string_value(i)));
  return make_log_record(numbers, strings, global_step, unix_now());
}

}  // namespace

WandbCallback::WandbCallback(trainhook::Setup& setup) : host_(setup.host()) {
  support::Settings s(setup.config_json(), "wandb");
  if (read_mode(s) == Mode::disabled) {
    disabled_ = true;  // HF #16594: disabled means nothing happens, and no key is asked for
    return;
  }
  settings_ = read_settings(s, host_.output_dir());
  drain_left_ = settings_->finish_timeout;
  if (settings_->log_model != LogModel::off && settings_->mode == Mode::offline)
    host_.warn(
        "wandb: WANDB_LOG_MODEL uploads need the server; in offline mode model files are not uploaded");
}

WandbCallback::~WandbCallback() {
  if (!worker_) return;
  try {
    // The run ends here, not at on_train_end: HF's run stays open for the
    // evaluate()/predict() logged after training (W&B finishes it at exit).
    // Destroyed without on_train_end: the run failed.
    finish(train_ended_ ? 0 : 1);
  } catch (...) {
  }
}

void WandbCallback::on_train_begin(trainhook::Event& e) {
  if (disabled_ || worker_ || !e.is_world_process_zero()) return;
  WandbSettings st = *settings_;
  RunSpec spec;
  spec.run_id = st.run_id;
  if (st.resume == Resume::automatic && spec.run_id.empty()) {
    if (auto id = read_auto_resume_id(st.dir)) {
      spec.run_id = *id;
      host_.info("wandb: WANDB_RESUME=auto: resuming run " + *id + " that did not finish");
    }
  }
  if (spec.run_id.empty()) {
    if (st.resume == Resume::must)
      throw ConfigError("wandb: WANDB_RESUME=must needs the run to resume in WANDB_RUN_ID (or wandb.run_id)");
    spec.run_id = new_run_id();
  }
  if (st.mode == Mode::offline && st.resume != Resume::none) {
    host_.warn("wandb: WANDB_RESUME is ignored in offline mode (the server's line counts are unknown)");
    st.resume = Resume::none;
  }
  if (st.resume == Resume::automatic) st.resume = Resume::allow;
  spec.project = st.project;
  spec.entity = st.entity;
  spec.display_name = host_.run_name();
  std::vector<std::string> dropped;
  spec.config_json = config_from_training_args(host_.training_args_json(), &dropped);
  for (const auto& k : dropped)
    host_.warn("wandb: training argument '" + k + "' looks like a secret; not sent");
  spec.host = host_name();
  spec.job_type = st.job_type;
  spec.group = st.run_group;
  spec.tags = st.tags;
  if (settings_->resume == Resume::automatic) {
    write_auto_resume_id(st.dir, spec.run_id);
    auto_resume_file_ = true;
  }

  trainhook::Host host = host_;
  UploaderHooks hooks;
  hooks.log = support::host_logger(host);
  hooks.request_stop = [host](const std::string& reason) { host.request_stop(reason); };
  // Only ever called on the worker thread while worker_ exists (stop() joins it first).
  hooks.take_queued = [this] { return worker_->take_queued(1000); };
  uploader_ = std::make_unique<RunUploader>(st, spec, unix_now(), std::move(hooks));
  RunUploader* up = uploader_.get();
  support::WorkerOptions wo;
  wo.capacity = st.queue_capacity;
  wo.max_batch = 1000;
  worker_ = std::make_unique<support::Worker<Record>>(
      [up](std::vector<Record>& batch, support::WorkerContext& ctx) { return up->handle(batch, ctx); }, wo);
  // Connect now (in the background) rather than at the first log.
  enqueue(Record{Record::Kind::start, LogRecord{}, 0, {}});
}

void WandbCallback::enqueue(Record r) {
  if (worker_) worker_->enqueue(std::move(r));  // a full queue is counted and reported at the end
}

void WandbCallback::on_log(trainhook::Event& e) {
  if (!worker_ || !e.is_world_process_zero()) return;
  enqueue(Record{Record::Kind::log, record_of(e.values(), e.state().global_step), 0, {}});
}

void WandbCallback::on_predict(trainhook::Event& e) {
  if (!worker_ || !e.is_world_process_zero() || e.values().empty()) return;
  enqueue(Record{Record::Kind::log, record_of(e.values(), std::nullopt), 0, {}});
}

void WandbCallback::on_save(trainhook::Event& e) {
  if (!worker_ || !e.is_world_process_zero() || e.checkpoint_dir().empty()) return;
  last_checkpoint_ = std::string(e.checkpoint_dir());
  if (settings_->log_model != LogModel::checkpoint) return;
  Record r;
  r.kind = Record::Kind::upload;
  r.artifact = ArtifactUpload{std::filesystem::path(last_checkpoint_).filename().string(), last_checkpoint_};
  enqueue(std::move(r));
}

void WandbCallback::on_train_end(trainhook::Event& e) {
  if (!worker_ || !e.is_world_process_zero()) return;
  if (settings_->log_model == LogModel::end) {
    std::string dir = last_checkpoint_;
    const auto state = nlohmann::json::parse(host_.trainer_state_json(), nullptr, false);
    const auto args = nlohmann::json::parse(host_.training_args_json(), nullptr, false);
    const bool loaded_best = args.is_object() && args.contains("load_best_model_at_end") &&
                             args["load_best_model_at_end"].is_boolean() &&
                             args["load_best_model_at_end"].get<bool>();
    if (loaded_best && state.is_object() && state.contains("best_model_checkpoint") &&
        state["best_model_checkpoint"].is_string())
      dir = state["best_model_checkpoint"].get<std::string>();
    if (dir.empty()) {
      host_.warn(
          "wandb: WANDB_LOG_MODEL=end but no checkpoint was saved during training "
          "(save_strategy no?), so there is no model folder to upload");
    } else {
      Record r;
      r.kind = Record::Kind::upload;
      r.artifact = ArtifactUpload{"model", dir};
      enqueue(std::move(r));
    }
  }
  // Send the backlog now rather than at the next transmit interval, and wait
  // for it within finish_timeout (the drain budget, shared with the end mark);
  // the end mark follows when the callback is destroyed (after a final evaluate()).
  train_ended_ = true;
  enqueue(Record{Record::Kind::drain, LogRecord{}, 0, {}});
  const auto started = std::chrono::steady_clock::now();
  worker_->flush(drain_left_);
  drain_left_ -= std::min(drain_left_, std::chrono::duration_cast<std::chrono::milliseconds>(
                                           std::chrono::steady_clock::now() - started));
}

void WandbCallback::finish(int exitcode) {
  Record end;
  end.kind = Record::Kind::finish;
  end.exitcode = exitcode;
  enqueue(std::move(end));
  const bool drained = worker_->flush(drain_left_);
  const support::WorkerStats stats = worker_->stats();
  std::vector<Record> rest = worker_->stop();
  worker_.reset();
  const std::string report = uploader_->finalize(std::move(rest));
  if (stats.dropped > 0)
    host_.warn("wandb: " + std::to_string(stats.dropped) +
               " record(s) were dropped because the queue was full (wandb.queue_capacity=" +
               std::to_string(settings_->queue_capacity) + ")");
  if (!report.empty())
    host_.warn(report);
  else if (drained && settings_->mode == Mode::online)
    host_.info("wandb: run delivered (" + std::to_string(uploader_->lines_delivered()) + " history lines)");
  if (auto_resume_file_ && exitcode == 0) clear_auto_resume_id(settings_->dir);
  uploader_.reset();
}

}  // namespace trainhook::wandb
