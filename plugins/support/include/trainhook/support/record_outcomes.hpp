// What became of each record an integration was asked to deliver, for those
// that report record by record (flyte: "checkpoint-2 superseded, checkpoint-3
// uploaded"). The Delivery owns the table and marks its records: delivered or
// failed in deliver() (worker thread), superseded in Delivery::superseded(),
// not started for DeliveryResult::undelivered in report(); the training thread
// reads it at any time. Thread-safe.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

namespace trainhook::support {

enum class RecordStatus { waiting, delivered, failed, superseded, not_started };

// "waiting", "delivered", "failed", "superseded", "not started".
const char* to_string(RecordStatus s) noexcept;

struct RecordOutcome {
  std::string name;  // what the record is, for logs and the report ("checkpoint-20")
  RecordStatus status = RecordStatus::waiting;
  std::string detail;  // why it failed, what superseded it, ...
};

class RecordOutcomes {
 public:
  // A new row, waiting; returns its id.
  size_t add(std::string name);
  // Throws std::out_of_range for an id add() never returned.
  void set(size_t id, RecordStatus status, std::string detail = {});
  RecordOutcome at(size_t id) const;
  // Every row, in the order they were added.
  std::vector<RecordOutcome> all() const;
  // One row per name, its latest one (a record sent again counts once, by how
  // its last attempt went), in the order the names first appeared.
  std::vector<RecordOutcome> latest_per_name() const;

 private:
  mutable std::mutex mu_;
  std::vector<RecordOutcome> rows_;
};

}  // namespace trainhook::support
