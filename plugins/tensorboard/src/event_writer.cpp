#include <trainhook/tensorboard/event_writer.hpp>

#include <trainhook/tensorboard/event_builder.hpp>

#include <trainhook/support/clock.hpp>
#include <trainhook/support/log_keys.hpp>

#include <algorithm>
#include <chrono>
#include <limits>
#include <stdexcept>

namespace trainhook::tensorboard {
namespace {

using support::LogKeyParts;
using support::split_log_key;

uint32_t end_offset(const std::string& blob) {
  if (blob.size() > std::numeric_limits<uint32_t>::max())
    throw std::length_error("a logged record is larger than 4 GiB");
  return static_cast<uint32_t>(blob.size());
}

// Records queued that wake the writer thread, and records it encodes per write.
constexpr size_t kWakeAt = 256;
constexpr size_t kMaxBatch = 1024;

}  // namespace

void LogRecord::add_scalar(std::string_view key, double value) {
  keys_.append(key.data(), key.size());
  scalars_.push_back({end_offset(keys_), value});
}

void LogRecord::add_text(std::string_view key, std::string_view text) {
  text_keys_.append(key.data(), key.size());
  text_key_ends_.push_back(end_offset(text_keys_));
  texts_.append(text.data(), text.size());
  text_ends_.push_back(end_offset(texts_));
}

EventFileDelivery::EventFileDelivery(std::filesystem::path file, size_t queue_capacity,
                                     std::chrono::milliseconds flush_interval, support::Logger log)
    : file_(std::move(file)), log_(std::move(log)) {
  stats_.file = file_.path();
  std::string event;
  encode_file_version_event(event, support::unix_seconds());
  std::string record;
  append_record(record, event);
  if (!file_.append(record)) throw std::runtime_error(file_.error());
  // Batched wake-ups: the thread takes what is queued (one write(2) per batch)
  // when kWakeAt records are waiting or every flush interval, so an enqueue
  // never wakes it per record. The mark and the batch are small and fixed, not
  // a share of the capacity: a fast loop then never lets the queue grow toward
  // the capacity (peak RSS flat in the run's length); the capacity
  // only bounds a writer that cannot keep up. Nothing is retried here: a write
  // error is final (see append).
  worker_options_.thread_name = "th-tensorboard";
  worker_options_.capacity = std::max<size_t>(1, queue_capacity);
  worker_options_.max_batch = std::min(worker_options_.capacity, kMaxBatch);
  worker_options_.wake_at = std::max<size_t>(1, std::min(worker_options_.capacity / 2, kWakeAt));
  worker_options_.wake_interval = std::max(flush_interval, std::chrono::milliseconds(1));
}

support::BatchResult EventFileDelivery::deliver(std::vector<EventItem>& batch, support::WorkerContext&) {
  write_batch(batch);
  support::BatchResult r;
  r.delivered = batch.size();
  return r;
}

void EventFileDelivery::encode(const EventItem& item) {
  if (const auto* payload = std::get_if<std::string>(&item)) {
    append_record(records_, *payload);
    return;
  }
  const auto& rec = std::get<LogRecord>(item);
  event_.clear();
  encode_summary_event(event_, rec.wall_time(), rec.step(), [&](ProtoWriter& summary) {
    for (size_t i = 0; i < rec.scalar_count(); ++i) {
      const LogKeyParts tag = split_log_key(rec.scalar_key(i));
      write_scalar_value(summary, tag.prefix, tag.name, static_cast<float>(rec.scalar_value(i)));
    }
    for (size_t i = 0; i < rec.text_count(); ++i) {
      const LogKeyParts tag = split_log_key(rec.text_key(i));
      write_text_value(summary, tag.prefix, tag.name, rec.text(i));
    }
  });
  append_record(records_, event_);
  track_tags(rec);
}

// Collects the scalar tags for the hparams experiment. Runs mostly see the
// same keys log after log, so a record with the previous one's keys is skipped
// with one comparison.
void EventFileDelivery::track_tags(const LogRecord& rec) {
  if (rec.scalar_keys() == last_keys_) return;
  last_keys_ = rec.scalar_keys();
  for (size_t i = 0; i < rec.scalar_count(); ++i) {
    const LogKeyParts k = split_log_key(rec.scalar_key(i));
    tag_.assign(k.prefix.data(), k.prefix.size()).append(k.name.data(), k.name.size());
    if (seen_tags_.insert(tag_).second) scalar_tags_.push_back(tag_);
  }
}

void EventFileDelivery::write_batch(const std::vector<EventItem>& batch) {
  records_.clear();
  uint64_t scalars = 0;
  for (const auto& item : batch) {
    encode(item);
    if (const auto* rec = std::get_if<LogRecord>(&item)) scalars += rec->scalar_count();
  }
  if (append(records_, batch.size())) stats_.scalars_written += scalars;
}

bool EventFileDelivery::append(const std::string& records, uint64_t record_count) {
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
  support::log_to(log_, LogLevel::warn, stats_.error + "; no further events are written to this file");
  return false;
}

void EventFileDelivery::report(support::DeliveryResult<EventItem> result) {
  // The worker has stopped (it let a batch in progress finish and handed back
  // what it had not taken); this thread writes the rest, in order, after
  // everything written before.
  if (!result.undelivered.empty()) write_batch(result.undelivered);
  if (final_events_) {
    std::vector<std::string> tags = scalar_tags_;
    std::sort(tags.begin(), tags.end());
    std::string records;
    const std::vector<std::string> payloads = final_events_(tags);
    for (const auto& p : payloads) append_record(records, p);
    append(records, payloads.size());
  }
  if (!file_.close() && stats_.error.empty()) stats_.error = file_.error();
  stats_.bytes = file_.size();
  stats_.dropped_records = result.stats.dropped;
  stats_.dropped_scalars = dropped_scalars_;
  closed(result.outcome);
}

EventWriter::EventWriter(std::filesystem::path file, size_t queue_capacity,
                         std::chrono::milliseconds flush_interval, support::Logger log)
    : queue_(std::make_unique<EventFileDelivery>(std::move(file), queue_capacity, flush_interval,
                                                 std::move(log))),
      file_(static_cast<EventFileDelivery*>(&queue_.delivery())) {}

bool EventWriter::log(LogRecord&& record) {
  const size_t scalars = record.scalar_count();
  if (queue_.enqueue(EventItem(std::move(record)))) return true;
  file_->count_dropped_scalars(scalars);
  return false;
}

WriterStats EventWriter::finish(const FinalEvents& final_events) {
  if (queue_.finished()) return file_->stats();
  file_->set_final_events(final_events);
  queue_.finish(support::RunOutcome::finished);
  return file_->stats();
}

}  // namespace trainhook::tensorboard
