#include <trainhook/flyte/upload_delivery.hpp>

#include <exception>

namespace trainhook::flyte {

using support::RecordStatus;

void clean_up(Upload& u) noexcept {
  if (!u.cleanup) return;
  try {
    u.cleanup();
  } catch (...) {  // cleanup is best effort; the upload's outcome stands
  }
  u.cleanup = nullptr;
}

UploadDelivery::UploadDelivery(support::Logger log, support::RecordOutcomes& outcomes, Cancellation& cancel,
                               OnReport on_report)
    : log_(std::move(log)), outcomes_(outcomes), cancel_(cancel), on_report_(std::move(on_report)) {}

support::WorkerOptions UploadDelivery::worker_options() const {
  support::WorkerOptions o;
  o.thread_name = "th-flyte";
  o.max_batch = 1;  // one upload at a time: the ones behind it may still be superseded
  return o;
}

support::BatchResult UploadDelivery::deliver(std::vector<Upload>& batch, support::WorkerContext& ctx) {
  if (!linked_) {
    Cancellation* cancel = &cancel_;
    ctx.on_stop([cancel] { cancel->cancel(); });
    linked_ = true;
  }
  support::BatchResult r;
  for (Upload& u : batch) {
    RecordStatus status = RecordStatus::delivered;
    std::string detail;
    try {
      u.run(cancel_);
    } catch (const std::exception& ex) {
      log_(LogLevel::error, "upload of " + u.name + " failed: " + ex.what());
      status = RecordStatus::failed;
      detail = ex.what();
    } catch (...) {
      status = RecordStatus::failed;
      detail = "unknown error";
    }
    clean_up(u);
    outcomes_.set(u.outcome, status, detail);
    ++(status == RecordStatus::delivered ? r.delivered : r.failed);
  }
  return r;
}

bool UploadDelivery::supersedes(const Upload& newer, Upload& waiting) const {
  if (newer.group != waiting.group) return false;
  waiting.superseded_by = newer.name;
  return true;
}

void UploadDelivery::superseded(Upload waiting) {
  outcomes_.set(waiting.outcome, RecordStatus::superseded,
                "replaced by " + waiting.superseded_by + " before its upload started");
  log_(LogLevel::warn, "uploads are behind training: " + waiting.name + " is skipped, " +
                           waiting.superseded_by + " will be uploaded instead");
  clean_up(waiting);
}

void UploadDelivery::report(support::DeliveryResult<Upload> result) {
  for (Upload& u : result.undelivered) {
    outcomes_.set(u.outcome, RecordStatus::not_started, "the uploader stopped before it started");
    clean_up(u);
  }
  if (on_report_) on_report_(result);
}

}  // namespace trainhook::flyte
