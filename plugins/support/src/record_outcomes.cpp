#include <trainhook/support/record_outcomes.hpp>

#include <algorithm>
#include <stdexcept>

namespace trainhook::support {

const char* to_string(RecordStatus s) noexcept {
  switch (s) {
    case RecordStatus::waiting:
      return "waiting";
    case RecordStatus::delivered:
      return "delivered";
    case RecordStatus::failed:
      return "failed";
    case RecordStatus::superseded:
      return "superseded";
    case RecordStatus::not_started:
      return "not started";
  }
  return "?";
}

size_t RecordOutcomes::add(std::string name) {
  std::lock_guard<std::mutex> lock(mu_);
  rows_.push_back({std::move(name), RecordStatus::waiting, {}});
  return rows_.size() - 1;
}

void RecordOutcomes::set(size_t id, RecordStatus status, std::string detail) {
  std::lock_guard<std::mutex> lock(mu_);
  if (id >= rows_.size())
    throw std::out_of_range("RecordOutcomes::set: no record " + std::to_string(id) + " (" +
                            std::to_string(rows_.size()) + " added)");
  rows_[id].status = status;
  rows_[id].detail = std::move(detail);
}

RecordOutcome RecordOutcomes::at(size_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (id >= rows_.size())
    throw std::out_of_range("RecordOutcomes::at: no record " + std::to_string(id) + " (" +
                            std::to_string(rows_.size()) + " added)");
  return rows_[id];
}

std::vector<RecordOutcome> RecordOutcomes::all() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rows_;
}

std::vector<RecordOutcome> RecordOutcomes::latest_per_name() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<RecordOutcome> latest;
  for (const auto& r : rows_) {
    auto same =
        std::find_if(latest.begin(), latest.end(), [&](const RecordOutcome& l) { return l.name == r.name; });
    if (same == latest.end())
      latest.push_back(r);
    else
      *same = r;
  }
  return latest;
}

}  // namespace trainhook::support
