#include <trainhook/abi.h>
#include <trainhook/mlflow/params.hpp>
#include <trainhook/mlflow/sender.hpp>
#include <trainhook/strings.hpp>
#include <trainhook/support/clock.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

namespace trainhook::mlflow {

namespace fs = std::filesystem;
using support::BatchResult;
using support::HttpClientOptions;

namespace {
constexpr size_t kMetricsPerRequest = 1000;         // MLflow log-batch limit
constexpr size_t kBodyBudget = 900 * 1024;          // under the 1 MB request limit
constexpr size_t kSpoolChunk = kMetricsPerRequest;  // lines read back per delivery
constexpr int kHistoryPage = 1000;                  // history points per get-history page
const char* kUnassigned = "unassigned";

size_t metric_json_size(const Record& r) { return r.key.size() + 80; }

// The string at `pointer` in a 2xx answer; nullopt when the answer has none
// there (not JSON at all, or not MLflow's shape).
std::optional<std::string> string_at(const nlohmann::json& answer, const char* pointer) {
  const nlohmann::json::json_pointer p(pointer);
  if (!answer.is_object() || !answer.contains(p) || !answer.at(p).is_string()) return std::nullopt;
  return answer.at(p).get<std::string>();
}

bool same_value(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b || std::fabs(a - b) <= 1e-12 * std::max(std::fabs(a), std::fabs(b));
}
}  // namespace

Sender::Sender(MlflowOptions config, RunPlan plan, std::string spool_dir, support::Logger log)
    : config_(std::move(config)),
      plan_(std::move(plan)),
      spool_dir_(std::move(spool_dir)),
      log_(std::move(log)),
      started_ms_(support::unix_millis()),
      backoff_(support::RetryPolicy()
                   .initial_delay(config_.retry_initial())
                   .max_delay(config_.retry_max())
                   .jitter(0.25)) {
  // Before the run exists, spilled records go to "unassigned"; a leftover from
  // an earlier process that never reached the server is delivered to this run.
  spool_ = std::make_unique<support::Spool>(fs::path(spool_dir_) / (std::string(kUnassigned) + ".jsonl"));
  if (!spool_->empty()) {
    suspect_ = true;
    log(LogLevel::warn, "found " + std::to_string(spool_->pending()) + " undelivered records in " +
                            spool_->path().string() +
                            " from an earlier run that never reached the server; they will "
                            "be logged to this run");
  }
}

Sender::~Sender() = default;

uint64_t Sender::spooled() const noexcept { return spool_ ? spool_->pending() : 0; }
std::string Sender::spool_path() const { return spool_ ? spool_->path().string() : std::string(); }

Sender::Outcome Sender::malformed(const RestResult& r, const std::string& what) {
  // A 2xx answer without what MLflow sends (a proxy, a login page, another
  // service on the port): the records stay held and are retried, then spooled
  // at train end, instead of counting as delivered or rejected.
  last_problem_ = what + ": the server answered HTTP " + std::to_string(r.http.status) +
                  (r.json.is_discarded() || r.json.is_null() ? " with a body that is not JSON"
                                                             : " with JSON that is not MLflow's answer") +
                  " (is " + config_.tracking_uri() + " an MLflow server?)";
  if (backoff_.failures() == 0) log(LogLevel::warn, last_problem_ + "; retrying in the background");
  return Outcome::retry;
}

Sender::Outcome Sender::classify(const RestResult& r, const std::string& what) {
  if (!r.http.ok()) last_problem_ = what + " failed (" + r.describe() + ")";
  if (r.http.aborted) {
    // Stopped by us (flush timeout at train end), not refused by the server:
    // keep the records for the spool; the request may have been stored.
    suspect_ = true;
    return Outcome::retry;
  }
  switch (classification_.decide(r.http)) {
    case support::RetryDecision::success:
      return Outcome::ok;
    case support::RetryDecision::retry:
      if (r.http.ambiguous()) suspect_ = true;
      if (backoff_.failures() == 0)
        log(LogLevel::warn,
            what + " failed (" + r.describe() + "); retrying in the background, training continues");
      return Outcome::retry;
    case support::RetryDecision::fail:
      break;
  }
  log(LogLevel::error, what + " rejected by the server: " + r.describe());
  return Outcome::fail;
}

BatchResult Sender::handle(std::vector<Record>& batch, support::WorkerContext& ctx) {
  if (!http_) {
    HttpClientOptions opts;
    opts.timeout(config_.request_timeout())
        .insecure_tls(config_.insecure_tls())
        .ca_bundle(config_.ca_bundle())
        .client_cert(config_.client_cert())
        .abort_flag(ctx.abort_flag());
    opts.user_agent("trainhook-mlflow");
    if (!config_.username().empty()) {
      opts.basic_auth(config_.username(), config_.password());
    } else if (!config_.token().empty()) {
      opts.bearer_token(config_.token());
    }
    http_ = std::make_unique<support::HttpClient>(opts);
    rest_ = std::make_unique<MlflowRest>(*http_, config_.tracking_uri());
    requests_ = std::make_unique<support::RequestThread>();
    rest_->run_on(*requests_, [this] { absorb_queued(); });
    rest_->on_not_json([this](const std::string& m) { log(LogLevel::warn, m); });
  }
  for (auto& r : batch) pending_.push_back(std::move(r));
  batch.clear();

  BatchResult result;
  auto wait_more = [&]() {
    spill_over_limit();
    auto now = std::chrono::steady_clock::now();
    result.backlog_retry = std::chrono::duration_cast<std::chrono::milliseconds>(next_attempt_ - now);
    if (result.backlog_retry.count() < 0) result.backlog_retry = std::chrono::milliseconds(0);
    return result;
  };
  auto schedule_retry = [&]() {
    next_attempt_ = std::chrono::steady_clock::now() + backoff_.next_delay();
    return wait_more();
  };
  if (std::chrono::steady_clock::now() < next_attempt_) return wait_more();
  if (setup_failed_) {
    result.failed = pending_.size();
    pending_.clear();
    return result;
  }

  if (!run_ready_) {
    Outcome o = setup(ctx);
    if (o == Outcome::retry) return schedule_retry();
    if (o == Outcome::fail) {
      setup_failed_ = true;
      result.failed = pending_.size();
      pending_.clear();
      return result;
    }
    if (backoff_.failures() > 0) log(LogLevel::info, "MLflow server reachable again; run set up");
    backoff_.reset();
  }

  while (!ctx.stopping()) {
    std::vector<Record> group;
    support::SpoolChunk chunk;
    bool from_spool = !spool_->empty();
    if (from_spool) {
      chunk = spool_->peek(kSpoolChunk);
      for (const auto& line : chunk.lines) {
        if (auto r = from_line(line)) {
          // An earlier process's end-of-run is not replayed: this process ends the run itself.
          if (r->kind == Record::Kind::end_run && r->timestamp < started_ms_) continue;
          group.push_back(std::move(*r));
        } else {
          log(LogLevel::warn, "skipping an unreadable line in " + spool_->path().string());
          ++result.failed;
        }
      }
    } else if (!pending_.empty()) {
      take_group(pending_, group);
    } else {
      break;
    }
    uint64_t delivered = 0, failed = 0;
    Outcome o = deliver(group, delivered, failed);
    result.delivered += delivered;
    result.failed += failed;
    if (o == Outcome::retry) {
      // Part of a spool chunk may be stored already; the chunk is re-read on
      // retry, so check the server's history first.
      if (from_spool && delivered > 0) suspect_ = true;
      if (!from_spool) put_back(group);
      return schedule_retry();
    }
    if (backoff_.failures() > 0) log(LogLevel::info, "MLflow server reachable again; delivering the backlog");
    backoff_.reset();
    if (from_spool) spool_->acknowledge(chunk);
  }
  if (ctx.stopping() && !pending_.empty())
    return BatchResult::again_in(std::chrono::milliseconds(0), result.delivered, result.failed);
  return result;
}

size_t Sender::take_group(std::deque<Record>& from, std::vector<Record>& group) const {
  if (from.front().kind != Record::Kind::metric) {
    group.push_back(std::move(from.front()));
    from.pop_front();
    return 1;
  }
  size_t bytes = 0;
  while (!from.empty() && from.front().kind == Record::Kind::metric && group.size() < kMetricsPerRequest &&
         bytes + metric_json_size(from.front()) < kBodyBudget) {
    bytes += metric_json_size(from.front());
    group.push_back(std::move(from.front()));
    from.pop_front();
  }
  return group.size();
}

Sender::Outcome Sender::deliver(std::vector<Record>& records, uint64_t& delivered, uint64_t& failed) {
  // A spool chunk may mix kinds: send runs of metrics together, others one by one.
  size_t i = 0;
  std::vector<Record> done_prefix;
  while (i < records.size()) {
    Outcome o;
    size_t n = 1;
    if (records[i].kind == Record::Kind::metric) {
      std::vector<Record> metrics;
      size_t bytes = 0;
      while (i + metrics.size() < records.size() &&
             records[i + metrics.size()].kind == Record::Kind::metric &&
             metrics.size() < kMetricsPerRequest && bytes < kBodyBudget) {
        bytes += metric_json_size(records[i + metrics.size()]);
        metrics.push_back(records[i + metrics.size()]);
      }
      n = metrics.size();
      o = send_metrics(metrics);
    } else if (records[i].kind == Record::Kind::artifact_dir) {
      o = upload_dir(records[i]);
    } else {
      o = end_run(records[i]);
    }
    if (o == Outcome::retry) {
      // Keep only what is still undelivered for the retry.
      records.erase(records.begin(), records.begin() + static_cast<std::ptrdiff_t>(i));
      return Outcome::retry;
    }
    (o == Outcome::ok ? delivered : failed) += n;
    i += n;
  }
  return Outcome::ok;
}

bool Sender::drop_already_stored(std::vector<Record>& metrics) {
  // The server's history of each key in the batch is read a page at a time and
  // compared as it arrives, so memory stays at one page however long the run
  // (a whole history would grow with it, and MLflow may cap an unpaged answer).
  // key -> (step, timestamp) -> indices of the batch's points
  std::map<std::string, std::map<std::pair<int64_t, int64_t>, std::vector<size_t>>> wanted;
  for (size_t i = 0; i < metrics.size(); ++i)
    wanted[metrics[i].key][{metrics[i].step, metrics[i].timestamp}].push_back(i);
  std::vector<bool> stored(metrics.size(), false);
  for (const auto& [key, points] : wanted) {
    size_t left = 0;  // points of this key not yet found on the server
    for (const auto& [at, indices] : points) left += indices.size();
    std::string page_token;
    do {
      RestResult r = rest_->metric_history(run_id_, key, kHistoryPage, page_token);
      if (!r.ok()) {
        if (r.http.status == 404) break;  // nothing stored under that key
        classify(r, "checking metric history of '" + key + "'");
        return false;
      }
      if (!r.json.is_object()) {
        malformed(r, "checking metric history of '" + key + "'");
        return false;
      }
      for (const auto& m : r.json.value("metrics", nlohmann::json::array())) {
        double v = 0;
        const auto& jv = m.value("value", nlohmann::json(0.0));
        if (jv.is_number()) {
          v = jv.get<double>();
        } else if (jv.is_string()) {
          std::string t = jv.get<std::string>();
          v = t == "NaN" ? std::nan("") : (t == "Infinity" ? HUGE_VAL : -HUGE_VAL);
        }
        const auto it = points.find({m.value("step", int64_t{0}), m.value("timestamp", int64_t{0})});
        if (it == points.end()) continue;
        for (size_t i : it->second)
          if (!stored[i] && same_value(metrics[i].value, v)) {
            stored[i] = true;
            --left;
          }
      }
      const auto next = r.json.find("next_page_token");
      page_token = next != r.json.end() && next->is_string() ? next->get<std::string>() : std::string();
    } while (!page_token.empty() && left > 0);
  }
  size_t before = metrics.size();
  size_t i = 0;
  metrics.erase(std::remove_if(metrics.begin(), metrics.end(), [&](const Record&) { return stored[i++]; }),
                metrics.end());
  if (metrics.size() != before)
    log(LogLevel::info, "the server already had " + std::to_string(before - metrics.size()) +
                            " metric points of a retried batch; sending only the " +
                            std::to_string(metrics.size()) + " missing ones");
  return true;
}

Sender::Outcome Sender::send_metrics(std::vector<Record>& metrics) {
  if (suspect_) {
    if (!drop_already_stored(metrics)) return Outcome::retry;
    suspect_ = false;
    if (metrics.empty()) return Outcome::ok;
  }
  RestResult r = rest_->log_batch(metrics_batch_body(run_id_, metrics));
  return classify(r, "logging " + std::to_string(metrics.size()) + " metric points");
}

Sender::Outcome Sender::upload_dir(const Record& r) {
  if (!artifact_path_) {
    if (!warned_artifacts_)
      log(LogLevel::warn,
          "the run's artifacts are not served by the tracking server (start it with "
          "--serve-artifacts / --artifacts-destination); checkpoints are not uploaded");
    warned_artifacts_ = true;
    return Outcome::fail;
  }
  fs::path dir(r.key);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    log(LogLevel::warn, "checkpoint folder " + dir.string() +
                            " no longer exists (deleted by save_total_limit?); "
                            "not uploaded");
    return Outcome::fail;
  }
  std::string prefix = *artifact_path_ + "/" + dir.filename().string();
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    std::string rel = fs::relative(it->path(), dir).generic_string();
    RestResult res;
    try {
      res = rest_->upload_artifact(prefix + "/" + rel, it->path());
    } catch (const std::exception& e) {
      log(LogLevel::warn, std::string("artifact upload skipped: ") + e.what());
      continue;
    }
    Outcome o = classify(res, "uploading " + it->path().string());
    if (o != Outcome::ok) return o;
  }
  log(LogLevel::debug, "uploaded " + dir.string() + " to artifacts " + prefix);
  return Outcome::ok;
}

Sender::Outcome Sender::end_run(const Record& r) {
  // The reason first: a run seen FAILED already says why. Setting the same tag
  // again (a retry) is allowed.
  if (!r.reason.empty()) {
    RestResult tag = rest_->log_batch(params_batch_body(run_id_, {}, {{kFailureTag, r.reason}}));
    if (Outcome o = classify(tag, std::string("setting the run's tag ") + kFailureTag); o != Outcome::ok)
      return o;
  }
  RestResult res = rest_->update_run(run_id_, r.key, r.timestamp);
  return classify(res, "setting the run's status to " + r.key);
}

Sender::Outcome Sender::resolve_experiment(std::string& experiment_id) {
  if (config_.experiment_name().empty()) {
    experiment_id = "0";
    return Outcome::ok;
  }
  for (int round = 0; round < 2; ++round) {
    RestResult g = rest_->get_experiment_by_name(config_.experiment_name());
    if (g.ok()) {
      const auto id = string_at(g.json, "/experiment/experiment_id");
      if (!id) return malformed(g, "looking up experiment '" + config_.experiment_name() + "'");
      experiment_id = *id;
      return Outcome::ok;
    }
    if (g.http.status != 404 && g.error_code() != "RESOURCE_DOES_NOT_EXIST")
      return classify(g, "looking up experiment '" + config_.experiment_name() + "'");
    RestResult c = rest_->create_experiment(config_.experiment_name());
    if (c.ok()) {
      const auto id = string_at(c.json, "/experiment_id");
      if (!id) return malformed(c, "creating experiment '" + config_.experiment_name() + "'");
      experiment_id = *id;
      return Outcome::ok;
    }
    // Another process created it between our two calls: look it up again.
    if (c.error_code() != "RESOURCE_ALREADY_EXISTS")
      return classify(c, "creating experiment '" + config_.experiment_name() + "'");
  }
  log(LogLevel::error, "experiment '" + config_.experiment_name() + "' neither found nor created");
  return Outcome::fail;
}

Sender::Outcome Sender::log_params_and_tags(const nlohmann::json& existing_params, bool resumed) {
  std::map<std::string, std::string> have;
  for (const auto& p : existing_params) have[p.value("key", "")] = p.value("value", "");
  std::vector<std::pair<std::string, std::string>> to_send;
  std::vector<std::string> changed;
  for (const auto& kv : plan_.params) {
    auto it = have.find(kv.first);
    if (it == have.end()) {
      to_send.push_back(kv);
    } else if (it->second != kv.second) {
      changed.push_back(kv.first);
    }
  }
  if (!changed.empty()) {
    const std::string names = strings::join(changed);
    log(LogLevel::warn, "resumed run already has different values for params " + names +
                            "; MLflow params cannot change, so the run keeps its old values");
  }
  std::map<std::string, std::string> tags = resumed ? config_.tags() : std::map<std::string, std::string>{};
  auto chunks = chunk_params(to_send);
  if (chunks.empty() && !tags.empty()) chunks.emplace_back();
  for (size_t i = 0; i < chunks.size(); ++i) {
    RestResult r = rest_->log_batch(params_batch_body(run_id_, chunks[i], i == 0 ? tags : decltype(tags){}));
    Outcome o = classify(r, "logging params");
    if (o == Outcome::fail) {
      // Params are not worth losing the run over (HF #9210): report and go on.
      log(LogLevel::warn, "some params were not logged; metrics and artifacts continue");
      continue;
    }
    if (o == Outcome::retry) return o;
  }
  return Outcome::ok;
}

Sender::Outcome Sender::setup(support::WorkerContext&) {
  nlohmann::json existing_params = nlohmann::json::array();
  bool resumed = false;
  std::string artifact_uri;
  if (run_id_.empty() && !config_.run_id().empty()) {
    RestResult g = rest_->get_run(config_.run_id());
    if (!g.ok()) {
      Outcome o = classify(g, "looking up MLFLOW_RUN_ID=" + config_.run_id());
      if (o == Outcome::fail)
        log(LogLevel::error, "cannot resume run " + config_.run_id() + " on " + config_.tracking_uri() +
                                 "; nothing will be logged to MLflow for this training run");
      return o;
    }
    if (!g.json.is_object() || !g.json.contains("run") || !g.json["run"].is_object() ||
        !g.json["run"].contains("info") || !g.json["run"]["info"].is_object())
      return malformed(g, "looking up MLFLOW_RUN_ID=" + config_.run_id());
    run_id_ = config_.run_id();
    resumed = true;
    const auto& run = g.json["run"];
    artifact_uri = run["info"].value("artifact_uri", "");
    if (run.contains("data")) existing_params = run["data"].value("params", nlohmann::json::array());
    RestResult u = rest_->update_run(run_id_, "RUNNING", std::nullopt);
    if (Outcome o = classify(u, "setting resumed run " + run_id_ + " to RUNNING"); o != Outcome::ok) {
      run_id_.clear();
      return o;
    }
  } else if (run_id_.empty()) {
    std::string experiment_id;
    if (Outcome o = resolve_experiment(experiment_id); o != Outcome::ok) return o;
    RestResult c =
        rest_->create_run(experiment_id, plan_.run_name,
                          plan_.start_time_ms > 0 ? plan_.start_time_ms : support::unix_millis(), plan_.tags);
    if (Outcome o = classify(c, "creating a run in experiment " + experiment_id); o != Outcome::ok) return o;
    const auto id = string_at(c.json, "/run/info/run_id");
    if (!id) return malformed(c, "creating a run in experiment " + experiment_id);
    run_id_ = *id;
    artifact_uri = string_at(c.json, "/run/info/artifact_uri").value_or("");
    log(LogLevel::info, "logging to MLflow run " + run_id_ + " (experiment " + experiment_id + ") at " +
                            config_.tracking_uri() + "; resume it with MLFLOW_RUN_ID=" + run_id_);
  }
  // run_id_ set: only params/tags are left (a retry resumes here).
  if (!artifact_uri.empty()) artifact_path_ = artifact_proxy_path(artifact_uri);
  if (Outcome o = log_params_and_tags(existing_params, resumed); o != Outcome::ok) return o;
  run_ready_ = true;
  open_run_spool();
  return Outcome::ok;
}

void Sender::open_run_spool() {
  // The run's spool holds what an earlier process could not deliver (it is
  // older than anything of ours); our own "unassigned" spill goes after it.
  auto run_spool = std::make_unique<support::Spool>(fs::path(spool_dir_) / (run_id_ + ".jsonl"));
  if (!run_spool->empty()) {
    suspect_ = true;  // that process may have died mid-request
    log(LogLevel::info, "delivering " + std::to_string(run_spool->pending()) +
                            " records spooled by an earlier run in " + run_spool->path().string());
  }
  while (!spool_->empty()) {
    auto chunk = spool_->peek(10000);
    run_spool->append(chunk.lines);
    spool_->acknowledge(chunk);
  }
  spool_ = std::move(run_spool);
}

void Sender::absorb_queued() {
  if (!take_queued_) return;
  // Everything queued, a chunk at a time (each spilled before the next): one
  // chunk per poll falls behind a fast loop, and the queue then grows with
  // the run (bench/peak_rss logs through it). Capped so the request's answer
  // is not kept waiting by a producer that never pauses.
  for (int round = 0; round < 100; ++round) {
    std::vector<Record> got = take_queued_();
    if (got.empty()) break;
    for (auto& r : got) pending_.push_back(std::move(r));
    spill_over_limit();
  }
}

void Sender::put_back(std::vector<Record>& group) {
  // The group is older than everything left: in front of memory, or in front
  // of the spool when newer records were spilled while it was in flight.
  if (!spool_->empty()) {
    std::vector<std::string> lines;
    lines.reserve(group.size());
    for (const auto& r : group) lines.push_back(to_line(r));
    try {
      spool_->prepend(lines);
      group.clear();
      return;
    } catch (const std::exception& e) {
      log(LogLevel::error, std::string("cannot put a failed request's records back in the spool (they are "
                                       "kept in memory, and may arrive after newer ones): ") +
                               e.what());
    }
  }
  for (auto it = group.rbegin(); it != group.rend(); ++it) pending_.push_front(std::move(*it));
  group.clear();
}

void Sender::spill_over_limit() {
  if (pending_.size() <= config_.memory_records()) return;
  size_t n = pending_.size() - config_.memory_records() / 2;
  std::vector<std::string> lines;
  lines.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    lines.push_back(to_line(pending_.front()));
    pending_.pop_front();
  }
  try {
    spool_->append(lines);
    // Normal when the server is slower than training: said once per run.
    const std::string what = std::to_string(n) + " records moved to " + spool_->path().string();
    if (warned_spill_) {
      log(LogLevel::debug, what);
    } else {
      log(LogLevel::warn, "the MLflow server is behind (or unreachable): records beyond memory_records=" +
                              std::to_string(config_.memory_records()) + " wait on disk; " + what);
      warned_spill_ = true;
    }
  } catch (const std::exception& e) {
    log(LogLevel::error, std::string("cannot spool undelivered records: ") + e.what());
  }
}

uint64_t Sender::spill_everything(std::vector<Record> rest) {
  std::vector<std::string> lines;
  for (const auto& r : pending_) lines.push_back(to_line(r));
  for (const auto& r : rest) lines.push_back(to_line(r));
  pending_.clear();
  if (lines.empty()) return 0;
  spool_->append(lines);
  return lines.size();
}

}  // namespace trainhook::mlflow
