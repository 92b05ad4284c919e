#include <tensorboard/event_writer.hpp>

#include <tensorboard/event_builder.hpp>

#include <trainhook/support/log_keys.hpp>

#include <algorithm>
#include <chrono>
#include <limits>
#include <stdexcept>

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
    : file_(std::move(file)), warn_(std::move(warn)) {
  stats_.file = file_.path();
  std::string event;
  encode_file_version_event(event, now_secs());
  std::string record;
  append_record(record, event);
  if (!file_.append(record)) throw std::runtime_error(file_.error());
  support::WorkerOptions options;
  options.capacity = queue_capacity == 0 ? 1 : queue_capacity;
  // One write(2) per batch: large batches when the producer is fast.
  options.max_batch = options.capacity;
  worker_ = std::make_unique<support::Worker<Item>>(
      [this](std::vector<Item>& batch, support::WorkerContext&) {
        write_batch(batch);
        return support::BatchResult{batch.size(), 0, std::chrono::milliseconds(-1)};
      },
      options);
}

EventWriter::~EventWriter() { finish(); }

bool EventWriter::log(LogRecord&& record) {
  const size_t scalars = record.scalar_count();
  if (worker_ && worker_->enqueue(Item(std::move(record)))) return true;
  dropped_records_.fetch_add(1, std::memory_order_relaxed);
  dropped_scalars_.fetch_add(scalars, std::memory_order_relaxed);
  return false;
}

bool EventWriter::write_event(std::string event_payload) {
  if (worker_ && worker_->enqueue(Item(std::move(event_payload)))) return true;
  dropped_records_.fetch_add(1, std::memory_order_relaxed);
  return false;
}

void EventWriter::encode(const Item& item) {
  if (const auto* payload = std::get_if<std::string>(&item)) {
    append_record(records_, *payload);
    return;
  }
  const auto& rec = std::get<LogRecord>(item);
  event_.clear();
  encode_summary_event(event_, rec.wall_time(), rec.step(), [&](ProtoWriter& summary) {
    for (size_t i = 0; i < rec.scalar_count(); ++i) {
      std::string tag = support::rewrite_log_key(rec.scalar_key(i));
      write_scalar_value(summary, tag, {}, static_cast<float>(rec.scalar_value(i)));
      if (seen_tags_.find(tag) == seen_tags_.end()) {
        scalar_tags_.push_back(tag);
        seen_tags_.insert(std::move(tag));
      }
    }
    for (size_t i = 0; i < rec.text_count(); ++i)
      write_text_value(summary, support::rewrite_log_key(rec.text_key(i)), {}, rec.text(i));
  });
  append_record(records_, event_);
}

void EventWriter::write_batch(const std::vector<Item>& batch) {
  records_.clear();
  uint64_t scalars = 0;
  for (const auto& item : batch) {
    encode(item);
    if (const auto* rec = std::get_if<LogRecord>(&item)) scalars += rec->scalar_count();
  }
  if (append(records_, batch.size())) stats_.scalars_written += scalars;
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

WriterStats EventWriter::finish(const FinalEvents& final_events) {
  if (finished_) return stats_;
  finished_ = true;
  // The worker finishes the batch it holds; what it had not taken yet is
  // written here, in order, after it.
  const std::vector<Item> rest = worker_->stop();
  if (!rest.empty()) write_batch(rest);
  if (final_events) {
    std::vector<std::string> tags = scalar_tags_;
    std::sort(tags.begin(), tags.end());
    std::string records;
    const std::vector<std::string> payloads = final_events(tags);
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
