#include <tensorboard/event_writer.hpp>

#include <tensorboard/event_builder.hpp>
#include <tensorboard/rewrite_logs.hpp>

#include <algorithm>
#include <chrono>
#include <limits>
#include <stdexcept>
#include <unordered_set>

namespace trainhook::tensorboard {
namespace {

uint32_t end_offset(const std::string& blob) {
  if (blob.size() > std::numeric_limits<uint32_t>::max())
    throw std::length_error("a logged record is larger than 4 GiB");
  return static_cast<uint32_t>(blob.size());
}

double now_secs() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

void LogRecord::add_scalar(std::string_view key, double value) {
  keys_.append(key.data(), key.size());
  scalar_key_ends_.push_back(end_offset(keys_));
  values_.push_back(value);
}

void LogRecord::add_text(std::string_view key, std::string_view text) {
  text_keys_.append(key.data(), key.size());
  text_key_ends_.push_back(end_offset(text_keys_));
  texts_.append(text.data(), text.size());
  text_ends_.push_back(end_offset(texts_));
}

EventWriter::EventWriter(std::filesystem::path file, size_t queue_capacity, Warn warn)
    : file_(std::move(file)), queue_(queue_capacity), warn_(std::move(warn)) {
  stats_.file = file_.path();
  std::string event;
  encode_file_version_event(event, now_secs());
  std::string record;
  append_record(record, event);
  if (!file_.append(record)) throw std::runtime_error(file_.error());
  worker_ = std::thread([this] { run(); });
}

EventWriter::~EventWriter() { finish(); }

bool EventWriter::log(LogRecord&& record) {
  const size_t scalars = record.scalar_count();
  if (queue_.try_push(Item(std::move(record)))) return true;
  dropped_records_.fetch_add(1, std::memory_order_relaxed);
  dropped_scalars_.fetch_add(scalars, std::memory_order_relaxed);
  return false;
}

void EventWriter::write_event(std::string event_payload) {
  if (!queue_.push(Item(std::move(event_payload)))) dropped_records_.fetch_add(1, std::memory_order_relaxed);
}

void EventWriter::encode(const Item& item, std::string& event, std::string& records) {
  event.clear();
  if (const auto* payload = std::get_if<std::string>(&item)) {
    append_record(records, *payload);
    return;
  }
  const auto& rec = std::get<LogRecord>(item);
  encode_summary_event(event, rec.wall_time(), rec.step(), [&](ProtoWriter& summary) {
    for (size_t i = 0; i < rec.scalar_count(); ++i) {
      const RewrittenKey tag = rewrite_log_key(rec.scalar_key(i));
      write_scalar_value(summary, tag.prefix, tag.name, static_cast<float>(rec.scalar_value(i)));
    }
    for (size_t i = 0; i < rec.text_count(); ++i) {
      const RewrittenKey tag = rewrite_log_key(rec.text_key(i));
      write_text_value(summary, tag.prefix, tag.name, rec.text(i));
    }
  });
  append_record(records, event);
}

bool EventWriter::append(const std::string& records, uint64_t record_count) {
  if (records.empty()) return true;
  if (!stats_.error.empty()) {  // after a write error nothing more is written
    stats_.lost_records += record_count;
    return false;
  }
  if (file_.append(records)) {
    stats_.events_written += record_count;
    return true;
  }
  stats_.error = file_.error();
  stats_.lost_records += record_count;
  if (warn_) warn_(stats_.error + "; no further events are written to this file");
  return false;
}

void EventWriter::run() {
  std::vector<Item> batch;
  std::string event;
  std::string records;
  std::unordered_set<std::string> seen_tags;
  std::string tag;
  for (;;) {
    batch.clear();
    // The timeout only bounds how long a closed-but-idle wait could last.
    const bool open = queue_.pop_all(batch, std::chrono::milliseconds(2000));
    if (batch.empty()) {
      if (!open) break;
      continue;
    }
    records.clear();
    uint64_t batch_scalars = 0;
    for (const auto& item : batch) {
      encode(item, event, records);
      if (const auto* rec = std::get_if<LogRecord>(&item)) {
        batch_scalars += rec->scalar_count();
        for (size_t i = 0; i < rec->scalar_count(); ++i) {
          const RewrittenKey k = rewrite_log_key(rec->scalar_key(i));
          tag.assign(k.prefix.data(), k.prefix.size()).append(k.name.data(), k.name.size());
          if (seen_tags.find(tag) == seen_tags.end()) {
            seen_tags.insert(tag);
            scalar_tags_.push_back(tag);
          }
        }
      }
    }
    if (append(records, batch.size())) stats_.scalars_written += batch_scalars;
  }
}

WriterStats EventWriter::finish(const FinalEvents& final_events) {
  if (finished_) return stats_;
  finished_ = true;
  queue_.close();
  if (worker_.joinable()) worker_.join();
  if (final_events) {
    std::vector<std::string> tags = scalar_tags_;
    std::sort(tags.begin(), tags.end());
    std::string records;
    std::vector<std::string> payloads = final_events(tags);
    for (const auto& p : payloads) append_record(records, p);
    append(records, payloads.size());
  }
  if (!file_.close() && stats_.error.empty()) stats_.error = file_.error();
  stats_.bytes = file_.size();
  stats_.dropped_records = dropped_records_.load();
  stats_.dropped_scalars = dropped_scalars_.load();
  return stats_;
}

}  // namespace trainhook::tensorboard
