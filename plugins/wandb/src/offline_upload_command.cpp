#include <trainhook/wandb/offline_upload_command.hpp>

#include <trainhook/wandb/file_stream.hpp>
#include <trainhook/wandb/graphql.hpp>
#include <trainhook/wandb/offline_run.hpp>

#include <trainhook/support/env.hpp>
#include <trainhook/support/http_client.hpp>
#include <trainhook/support/retry.hpp>
#include <trainhook/support/tls_files.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <thread>

namespace trainhook::wandb {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using clock_type = std::chrono::steady_clock;

namespace {

struct OfflineUploadOptions {
  std::string base_url;  // empty: WANDB_BASE_URL, else the run's own
  std::string entity, project;
  milliseconds backoff_initial{2000}, backoff_max{60000}, max_wait{600000};
  std::vector<fs::path> dirs;
};

const char* kUsage =
    "usage: trainhook wandb-sync [--base-url URL] [--entity E] [--project P] [--max-wait SECONDS]\n"
    "                            [--backoff-initial SECONDS] [--backoff-max SECONDS] <dir>...\n"
    "  <dir>: an offline-run-* folder written by the wandb callback, or a folder holding them.\n"
    "  Needs WANDB_API_KEY; the server is --base-url, else WANDB_BASE_URL, else the run's own.";

milliseconds seconds_arg(const std::string& flag, const std::string& v) {
  try {
    size_t used = 0;
    double d = std::stod(v, &used);
    if (used == v.size() && std::isfinite(d) && d >= 0) return milliseconds(static_cast<int64_t>(d * 1000));
  } catch (const std::exception&) {
  }
  throw ConfigError("wandb-sync: " + flag + " expects a number of seconds >= 0, got '" + v + "'");
}

OfflineUploadOptions parse_args(const std::vector<std::string>& args) {
  OfflineUploadOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw ConfigError("wandb-sync: " + a + " needs a value\n" + kUsage);
      return args[++i];
    };
    if (a == "--base-url")
      o.base_url = value();
    else if (a == "--entity")
      o.entity = value();
    else if (a == "--project")
      o.project = value();
    else if (a == "--max-wait")
      o.max_wait = seconds_arg(a, value());
    else if (a == "--backoff-initial")
      o.backoff_initial = seconds_arg(a, value());
    else if (a == "--backoff-max")
      o.backoff_max = seconds_arg(a, value());
    else if (a.rfind("--", 0) == 0)
      throw ConfigError("wandb-sync: unknown option " + a + "\n" + kUsage);
    else
      o.dirs.emplace_back(a);
  }
  if (o.dirs.empty()) throw ConfigError(std::string("wandb-sync: no folder given\n") + kUsage);
  return o;
}

// The offline runs under one argument, in name order.
std::vector<fs::path> runs_under(const fs::path& dir) {
  if (!fs::is_directory(dir)) throw ConfigError("wandb-sync: " + dir.string() + " is not a folder");
  if (fs::exists(dir / "run.json")) return {dir};
  std::vector<fs::path> out;
  for (const fs::path& base : {dir, dir / "wandb"}) {
    if (!fs::is_directory(base)) continue;
    for (const auto& entry : fs::directory_iterator(base))
      if (entry.is_directory() && entry.path().filename().string().rfind("offline-run-", 0) == 0 &&
          fs::exists(entry.path() / "run.json"))
        out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  if (out.empty())
    throw ConfigError("wandb-sync: " + dir.string() +
                      " holds no offline run (no run.json, no offline-run-* folders)");
  return out;
}

class Syncer {
 public:
  Syncer(const trainhook::Host& host, const OfflineUploadOptions& o, std::string api_key)
      : host_(host), o_(o), api_key_(std::move(api_key)) {}

  bool sync(const fs::path& dir) {
    OfflineRun run = read_offline_run(dir);
    if (run.torn_last_line) host_.warn("wandb-sync: " + dir.string() + ": ignoring a torn last history line");
    RunSpec spec = run.meta.spec;
    if (!o_.entity.empty()) spec.entity = o_.entity;
    if (!o_.project.empty()) spec.project = o_.project;
    std::string base = o_.base_url;
    if (base.empty()) base = support::get_env("WANDB_BASE_URL").value_or(run.meta.base_url);
    while (!base.empty() && base.back() == '/') base.pop_back();
    if (base.empty()) throw ConfigError("wandb-sync: no server: pass --base-url or set WANDB_BASE_URL");

    const int64_t total = static_cast<int64_t>(run.lines.size());
    if (run.synced_complete && run.synced_lines == total) {
      host_.info("wandb-sync: " + dir.string() + " was already synced");
      return true;
    }
    const auto ca = support::find_tls_file(std::nullopt, "", {"REQUESTS_CA_BUNDLE", "SSL_CERT_FILE"},
                                           "a PEM bundle of certificate authorities");
    support::HttpClient http(support::HttpClientOptions()
                                 .basic_auth("api", api_key_)
                                 .ca_bundle(ca ? ca->path : std::string())
                                 .user_agent("trainhook-wandb-sync/1.0"));
    deadline_ = clock_type::now() + o_.max_wait;
    support::RetryPolicy policy =
        support::RetryPolicy().initial_delay(o_.backoff_initial).max_delay(o_.backoff_max).jitter(0.25);

    // Upsert the run (idempotent) to learn its entity.
    support::Backoff backoff(policy);
    UpsertResult up;
    for (;;) {
      auto r = http.perform(support::HttpRequest::post_json(base + "/graphql", upsert_bucket_body(spec)));
      auto d = classify(r);
      if (d == support::RetryDecision::success) {
        up = parse_upsert_response(r.body);
        break;
      }
      if (d == support::RetryDecision::fail ||
          !wait(backoff.next_delay(&r), "UpsertBucket: " + r.describe())) {
        host_.error("wandb-sync: " + dir.string() + ": UpsertBucket failed: " + r.describe());
        return false;
      }
    }
    StreamTarget target{base, up.entity.empty() ? spec.entity : up.entity,
                        up.project.empty() ? spec.project : up.project,
                        up.run_id.empty() ? spec.run_id : up.run_id};
    if (target.entity.empty()) {
      host_.error("wandb-sync: the server did not name the run's entity; pass --entity");
      return false;
    }
    StreamOptions so;
    so.policy = policy;
    FileStreamer streamer(target, run.meta.history_offset + run.synced_lines, so);
    for (int64_t i = run.synced_lines; i < total; ++i) streamer.add_line(run.lines[static_cast<size_t>(i)]);
    if (run.summary) streamer.set_summary(*run.summary);
    if (run.exitcode) streamer.set_complete(*run.exitcode);
    int64_t synced = run.synced_lines;
    while (streamer.has_work()) {
      SendResult r = streamer.send_once(http);
      if (r.status == SendStatus::delivered) {
        synced += static_cast<int64_t>(r.lines);
        write_sync_state(dir, synced, streamer.complete_acked());
        continue;
      }
      if (r.status == SendStatus::fatal || !wait(r.retry_in, "file_stream: " + r.message)) {
        host_.error("wandb-sync: " + dir.string() + ": stopped after " + std::to_string(synced) + " of " +
                    std::to_string(total) + " lines: " + r.message);
        return false;
      }
    }
    write_sync_state(dir, synced, streamer.complete_acked() || !run.exitcode);
    host_.info("wandb-sync: " + dir.string() + ": " + std::to_string(total) + " history lines at " +
               target.url() + (run.exitcode ? " (run complete)" : " (run left open: it has no exit.json)"));
    return true;
  }

 private:
  bool wait(milliseconds d, const std::string& why) {
    if (clock_type::now() + d > deadline_) return false;
    host_.warn("wandb-sync: " + why + "; retrying in " + std::to_string(d.count()) + " ms");
    std::this_thread::sleep_for(d);
    return true;
  }

  const trainhook::Host& host_;
  const OfflineUploadOptions& o_;
  std::string api_key_;
  clock_type::time_point deadline_{};
};

}  // namespace

int run_offline_upload(const trainhook::Host& host, const std::vector<std::string>& args) {
  for (const auto& a : args)
    if (a == "--help" || a == "-h") {
      host.info(kUsage);
      return 0;
    }
  const OfflineUploadOptions o = parse_args(args);
  const auto key = support::get_env("WANDB_API_KEY");
  if (!key) throw ConfigError("wandb-sync: WANDB_API_KEY is not set");
  std::vector<fs::path> runs;
  for (const auto& d : o.dirs)
    for (auto& r : runs_under(d)) runs.push_back(std::move(r));
  Syncer syncer(host, o, *key);
  bool ok = true;
  for (const auto& r : runs) {
    try {
      ok = syncer.sync(r) && ok;
    } catch (const ConfigError&) {
      throw;
    } catch (const std::exception& e) {
      host.error(std::string("wandb-sync: ") + e.what());
      ok = false;
    }
  }
  return ok ? 0 : 1;
}

}  // namespace trainhook::wandb
