// acme_logger: a third-party logging integration on the installed integration
// base (Trainhook::support), the one the trainer's own integrations are built
// on. `--report_to acme_logger` sends every log record, as one JSON line, to
// an HTTP endpoint:
//   - the training thread only queues the line (a bounded queue: when it is
//     full the record is dropped and counted, never waited for);
//   - the base's worker thread POSTs what is queued in batches, retrying with
//     backoff and honouring Retry-After (support::send_with_retry);
//   - what the endpoint did not take is kept in a disk spool in output_dir,
//     and the next run with that output_dir sends it first;
//   - at the end of the run one line says what became of every record
//     (support::log_end_of_run), and a failed or interrupted run is closed as
//     such (the base's outcome rules).
// Keys (--plugin_config acme_logger.<key>=...): url (required), max_attempts,
// queue_size. What it writes is the pack's business; what it gets for free is
// the lifecycle: support::Integration opens the run at train begin and ends
// it at train end or on_exception (those entry points are final there).
#include <trainhook/options.hpp>
#include <trainhook/plugin.hpp>
#include <trainhook/support/end_of_run_summary.hpp>
#include <trainhook/support/http_client.hpp>
#include <trainhook/support/integration.hpp>
#include <trainhook/support/retry.hpp>
#include <trainhook/support/spool.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace support = trainhook::support;
using namespace std::chrono_literals;

class AcmeLoggerOptions {
  TRAINHOOK_OPTION(std::string, url, "");
  TRAINHOOK_OPTION(int64_t, max_attempts, 5);
  TRAINHOOK_OPTION(int64_t, queue_size, 10000);

 public:
  static const trainhook::OptionTable<AcmeLoggerOptions>& table() {
    static const auto t =
        trainhook::OptionTable<AcmeLoggerOptions>("acme_logger")
            .key(TRAINHOOK_KEY(url), "where log records are POSTed (JSON lines)")
            .env("ACME_LOGGER_URL")
            .check("an http:// or https:// URL",
                   [](const std::string& u) {
                     return u.rfind("http://", 0) == 0 || u.rfind("https://", 0) == 0;
                   })
            .key(TRAINHOOK_KEY(max_attempts), "tries per batch before it is spooled")
            .min(1)
            .max(100)
            .key(TRAINHOOK_KEY(queue_size), "records waiting at most; more are dropped and counted")
            .min(1);
    return t;
  }
};

// JSON string text for a log key (printable UTF-8 from the trainer; escaped anyway).
std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";  // JSON has no NaN or inf
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// Worker thread: deliver(); training thread: report() (after the worker ended).
class AcmeDelivery final : public support::Delivery<std::string> {
 public:
  AcmeDelivery(AcmeLoggerOptions options, trainhook::Host host)
      : options_(std::move(options)), host_(host), spool_(host.output_dir() + "/acme_logger_spool.jsonl") {}

  support::BatchResult deliver(std::vector<std::string>& batch, support::WorkerContext& ctx) override {
    if (!http_)
      http_ = std::make_unique<support::HttpClient>(
          support::HttpClientOptions().connect_timeout(2s).timeout(10s).abort_flag(ctx.abort_flag()));
    const uint64_t n = batch.size();
    // What an earlier run (or an earlier batch) left on disk is older: it goes first.
    if (!spool_.empty()) {
      const support::SpoolChunk older = spool_.peek(1000);
      if (post(older.lines, ctx)) {
        spool_.acknowledge(older);
        delivered_ += older.lines.size();
      }
    }
    if (spool_.empty() && post(batch, ctx)) {
      delivered_ += n;
      batch.clear();
      return support::BatchResult{n, 0};
    }
    spool_.append(batch);  // keeps the order: behind what is already spooled
    spooled_ += n;
    batch.clear();
    return support::BatchResult{0, n};
  }

  void report(support::DeliveryResult<std::string> result) override {
    if (!result.undelivered.empty()) {  // the flush timed out or a signal ended the wait
      spool_.append(result.undelivered);
      spooled_ += result.undelivered.size();
    }
    support::EndOfRunSummary s;
    s.integration = "Acme";
    s.run = options_.url();
    s.status = support::run_status_name(result.outcome);
    s.failure = support::describe_run_end(result.end);
    s.delivered = delivered_;
    s.spooled = spool_.pending();
    s.spool_path = spool_.path().string();
    s.resend = "the next run with this output_dir sends them first";
    s.lost = result.stats.dropped;
    s.lost_reason = support::queue_full_reason(
        result.stats.dropped, static_cast<uint64_t>(options_.queue_size()), "acme_logger.queue_size");
    if (!last_error_.empty() && s.spooled > 0) s.note = "last error: " + last_error_;
    support::log_end_of_run(support::host_logger(host_), s);  // the host names the callback
  }

  support::WorkerOptions worker_options() const override {
    support::WorkerOptions w;
    w.capacity = static_cast<size_t>(options_.queue_size());
    w.thread_name = "acme-logger";
    return w;
  }
  std::chrono::milliseconds flush_timeout() const override { return 30s; }

 private:
  bool post(const std::vector<std::string>& lines, support::WorkerContext& ctx) {
    std::string body;
    for (const auto& l : lines) body += l + "\n";
    const support::RetryResult r =
        support::send_with_retry(*http_, support::HttpRequest::post_json(options_.url(), body),
                                 support::RetryPolicy().initial_delay(200ms).max_delay(5s).max_attempts(
                                     static_cast<int>(options_.max_attempts())),
                                 support::RetryClassification::standard(),
                                 [&ctx](std::chrono::milliseconds d) { return ctx.sleep_for(d); });
    if (r.decision == support::RetryDecision::success) return true;
    last_error_ = r.response.describe();
    return false;
  }

  AcmeLoggerOptions options_;
  trainhook::Host host_;
  support::Spool spool_;
  std::unique_ptr<support::HttpClient> http_;
  uint64_t delivered_ = 0, spooled_ = 0;
  std::string last_error_;
};

class AcmeLogger final : public support::Integration<std::string> {
 public:
  explicit AcmeLogger(trainhook::Setup& setup)
      : Integration(setup.host()), options_(AcmeLoggerOptions::table().parse(setup.config_json())) {
    if (options_.url().empty())
      throw trainhook::ConfigError(
          "plugin_config acme_logger.url: required (or ACME_LOGGER_URL): where to send the log records");
  }

  void on_log(trainhook::Event& e) override {
    if (!running()) return;
    std::string line = "{\"step\": " + std::to_string(e.state().global_step) +
                       ", \"epoch\": " + json_number(e.state().epoch) + ", \"values\": {";
    const trainhook::Values v = e.values();
    for (uint32_t i = 0; i < v.size(); ++i)
      line += (i == 0 ? "" : ", ") + json_string(std::string(v.key(i))) + ": " + json_number(v.value(i));
    enqueue(line + "}}");  // never blocks; a full queue counts the record as dropped
  }

 protected:
  std::unique_ptr<support::Delivery<std::string>> open_run(trainhook::Event&) override {
    return std::make_unique<AcmeDelivery>(options_, host_);
  }

 private:
  AcmeLoggerOptions options_;
};

}  // namespace

TRAINHOOK_PLUGIN("acme_logger", ACME_VERSION,
                 trainhook::callback<AcmeLogger>("acme_logger", ACME_VERSION, trainhook::Kind::integration,
                                                 "sends log records as JSON lines to an HTTP endpoint"))
