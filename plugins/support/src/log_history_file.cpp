#include <trainhook/support/log_history_file.hpp>

#include <trainhook/support/log.hpp>

#include <algorithm>
#include <cmath>
#include <utility>

namespace trainhook::support {
namespace {

// The worker side of one run: the format and what happened to the records.
class LogHistoryDelivery final : public Delivery<LogHistoryItem> {
 public:
  LogHistoryDelivery(trainhook::Host host, std::string plugin, std::filesystem::path file, size_t capacity,
                     std::unique_ptr<LogHistoryFormat> format)
      : host_(host),
        plugin_(std::move(plugin)),
        file_(std::move(file)),
        capacity_(capacity),
        format_(std::move(format)) {}

  BatchResult deliver(std::vector<LogHistoryItem>& batch, WorkerContext&) override {
    BatchResult r;
    for (LogHistoryItem& item : batch) {
      try {
        if (item.reset) {
          const nlohmann::json state = nlohmann::json::parse(item.state_json);
          auto it = state.find("log_history");
          const nlohmann::json history = it != state.end() && it->is_array() ? *it : nlohmann::json::array();
          format_->reset(file_, history);
          lines_ = history.size();
        } else {
          format_->append(file_, log_history_entry(item.record));
          ++lines_;
        }
        ++r.delivered;
      } catch (const std::exception& ex) {
        // The reset is not a log record: its failure is reported on its own.
        if (item.reset)
          reset_failed_ = true;
        else
          ++r.failed;
        // One message per kind of failure, not one per line (a full disk fails every write).
        if (ex.what() != last_error_) {
          last_error_ = ex.what();
          host_.error(plugin_ + ": " + last_error_);
        }
      }
    }
    return r;
  }

  void report(DeliveryResult<LogHistoryItem> result) override {
    const WorkerStats& st = result.stats;
    if (reset_failed_)
      host_.warn(plugin_ + ": " + file_.string() +
                 " was not replaced by the state's log_history at train begin (" + last_error_ +
                 "); lines of an earlier run may remain in it");
    size_t undelivered = 0;
    for (const LogHistoryItem& item : result.undelivered) undelivered += item.reset ? 0 : 1;
    const uint64_t lost = st.dropped + st.failed + undelivered;
    if (lost == 0) {
      host_.info(plugin_ + ": " + std::to_string(lines_) + " log records in " + file_.string());
      return;
    }
    std::string why;
    if (st.dropped > 0)
      why += std::to_string(st.dropped) + " dropped because the queue of " + std::to_string(capacity_) +
             " records was full (raise plugin_config " + plugin_ + ".queue_size)";
    if (st.failed > 0)
      why += (why.empty() ? "" : ", ") + std::to_string(st.failed) + " failed to write (" + last_error_ + ")";
    if (undelivered > 0)
      why += (why.empty() ? "" : ", ") + std::to_string(undelivered) + " still queued when the run ended";
    host_.warn(plugin_ + ": " + std::to_string(lost) + " log records are not in " + file_.string() + ": " +
               why);
  }

  WorkerOptions worker_options() const override {
    WorkerOptions o;
    o.thread_name = "th-" + plugin_;
    o.capacity = capacity_;
    o.max_batch = 256;
    // Batched wake-ups: logging every step, a wake-up of the worker per record
    // costs the training process more than writing the line; the worker comes
    // by every 100 ms (or at 64 queued records) and writes each line then.
    o.wake_at = std::min<size_t>(64, std::max<size_t>(1, capacity_ / 2));
    o.wake_interval = std::chrono::milliseconds(100);
    return o;
  }
  // Local disk: a flush that takes longer than this is a stuck file system.
  std::chrono::milliseconds flush_timeout() const override { return std::chrono::milliseconds(30000); }

 private:
  trainhook::Host host_;
  std::string plugin_;
  std::filesystem::path file_;
  size_t capacity_;
  std::unique_ptr<LogHistoryFormat> format_;
  uint64_t lines_ = 0;  // lines in the file as this run knows it
  bool reset_failed_ = false;
  std::string last_error_;
};

}  // namespace

OptionTable<LogHistoryFileOptions> LogHistoryFileOptions::table(const std::string& plugin,
                                                                const std::string& default_file) {
  return OptionTable<LogHistoryFileOptions>(plugin)
      .key(TRAINHOOK_KEY(file), "the file; a relative name is under `output_dir`")
      .check("a file name (a non-empty string)", [](const std::string& f) { return !f.empty(); })
      .shown_default("`" + default_file + "`")
      .key(TRAINHOOK_KEY(queue_size),
           "records queued for the writer thread (1 to 10000000); more are dropped and counted")
      .min(1)
      .max(10000000);
}

LogHistoryFileOptions LogHistoryFileOptions::from_json(const std::string& plugin,
                                                       const std::string& config_json,
                                                       const std::string& default_file) {
  LogHistoryFileOptions o;
  o.file(default_file);
  table(plugin, default_file).parse_into(o, config_json);
  return o;
}

std::shared_ptr<const std::vector<std::string>> LogKeys::of(const trainhook::Values& logs) {
  bool same = last_ && last_->size() == logs.size();
  for (uint32_t i = 0; same && i < logs.size(); ++i) same = (*last_)[i] == logs.key(i);
  if (!same) {
    auto keys = std::make_shared<std::vector<std::string>>();
    keys->reserve(logs.size());
    for (uint32_t i = 0; i < logs.size(); ++i) keys->emplace_back(logs.key(i));
    last_ = std::move(keys);
  }
  return last_;
}

LogRecord capture_log(const trainhook::Values& logs, const th_state& state, LogKeys& keys) {
  LogRecord r;
  r.keys = keys.of(logs);
  r.values.reserve(logs.size());
  for (uint32_t i = 0; i < logs.size(); ++i) r.values.push_back(logs.value(i));
  for (uint32_t i = 0; i < logs.string_size(); ++i)
    r.strings.emplace_back(std::string(logs.string_key(i)), std::string(logs.string_value(i)));
  r.epoch = state.epoch;
  r.step = state.global_step;
  return r;
}

nlohmann::json log_history_entry(const LogRecord& record) {
  nlohmann::json entry = nlohmann::json::object();
  for (size_t i = 0; i < record.values.size(); ++i) {
    const std::string& key = (*record.keys)[i];
    const double v = record.values[i];
    // log_history holds this one as an integer (core's Trainer::log, as HF).
    if (key == "num_input_tokens_seen" && std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9.0e15) {
      entry[key] = static_cast<int64_t>(v);
    } else {
      entry[key] = v;
    }
  }
  for (const auto& [key, v] : record.strings) entry[key] = v;
  if (!entry.contains("epoch")) entry["epoch"] = record.epoch;
  entry["step"] = record.step;
  return entry;
}

LogHistoryFileCallback::LogHistoryFileCallback(trainhook::Host host, std::string plugin,
                                               LogHistoryFileOptions options, FormatFactory make_format)
    : Integration(host),
      plugin_(std::move(plugin)),
      options_(std::move(options)),
      make_format_(std::move(make_format)) {}

std::filesystem::path LogHistoryFileCallback::file_path() const {
  const std::filesystem::path f = options_.file();
  if (f.is_absolute()) return f;
  const std::string out = host_.output_dir();
  return (out.empty() ? std::filesystem::path(".") : std::filesystem::path(out)) / f;
}

std::unique_ptr<Delivery<LogHistoryItem>> LogHistoryFileCallback::open_run(trainhook::Event&) {
  return std::make_unique<LogHistoryDelivery>(host_, plugin_, file_path(),
                                              static_cast<size_t>(options_.queue_size()), make_format_());
}

// The base closed a run that ended (or was aborted) before this begin.
void LogHistoryFileCallback::run_began(trainhook::Event&, bool) {
  LogHistoryItem reset;
  reset.reset = true;
  reset.state_json = host_.trainer_state_json();
  enqueue(std::move(reset));
}

void LogHistoryFileCallback::on_log(trainhook::Event& e) {
  // After train end (the final evaluate()) this reopens the file for appending.
  if (!start(e)) return;
  LogHistoryItem item;
  item.record = capture_log(e.values(), e.state(), keys_);
  enqueue(std::move(item));
}

void LogHistoryFileCallback::on_save(trainhook::Event&) {
  // Local disk: 10 s is a stuck file system; what is still queued then is
  // written later or reported at train end.
  if (running()) flush(std::chrono::milliseconds(10000));
}

}  // namespace trainhook::support
