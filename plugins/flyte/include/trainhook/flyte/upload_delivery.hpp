// flyte's uploads as the integration base's records (support/integration.hpp):
// the base runs them one at a time on its worker; this Delivery says how one
// upload runs and what became of it.
//
// While an upload runs, at most ONE upload per group waits: a newer upload of
// the same group supersedes the waiting one (its checkpoint is then
// "superseded", logged and reported), so uploads that fall behind training
// always catch up with the newest checkpoint instead of piling up.
//
// Cancellation: the stores were made before the run's worker (a bad location
// fails at start), so they watch a Cancellation of the callback's; it is set
// when the worker's stop flag goes up, which ends the upload in flight.
//
// Ownership: the FlyteCallback owns the outcome table, the Cancellation and
// the stores, all of which outlive its runs; the base owns this Delivery.
#pragma once

#include <trainhook/flyte/cancellation.hpp>
#include <trainhook/support/integration.hpp>
#include <trainhook/support/log.hpp>
#include <trainhook/support/record_outcomes.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace trainhook::flyte {

struct Upload {
  std::string name;    // what it uploads, for logs and the report ("checkpoint-20")
  std::string group;   // uploads of one group supersede each other while waiting
  size_t outcome = 0;  // its row in the callback's RecordOutcomes
  // Does the work on the worker thread; throws on failure. Must return soon
  // after the Cancellation is set.
  std::function<void(const Cancellation&)> run;
  // Called exactly once when the upload is finished, superseded or never
  // started (e.g. removes its staging folder). May be empty.
  std::function<void()> cleanup;
  std::string superseded_by;  // set under the queue's lock when a newer upload replaces it
};

// Runs u.cleanup, which must not stop the report: it is best effort.
void clean_up(Upload& u) noexcept;

class UploadDelivery final : public support::Delivery<Upload> {
 public:
  using OnReport = std::function<void(const support::DeliveryResult<Upload>&)>;

  // `on_report` writes the run's report once every upload has its outcome.
  UploadDelivery(support::Logger log, support::RecordOutcomes& outcomes, Cancellation& cancel,
                 OnReport on_report);

  support::BatchResult deliver(std::vector<Upload>& batch, support::WorkerContext& ctx) override;
  void report(support::DeliveryResult<Upload> result) override;
  support::WorkerOptions worker_options() const override;
  std::chrono::milliseconds flush_timeout() const override { return flush_timeout_; }
  bool coalesces() const override { return true; }
  bool supersedes(const Upload& newer, Upload& waiting) const override;
  void superseded(Upload waiting) override;

  // Training thread, before the run finishes: how long finish() waits.
  void set_flush_timeout(std::chrono::milliseconds t) noexcept { flush_timeout_ = t; }

 private:
  support::Logger log_;
  support::RecordOutcomes& outcomes_;
  Cancellation& cancel_;
  OnReport on_report_;
  std::chrono::milliseconds flush_timeout_{0};
  bool linked_ = false;  // worker thread: the stop flag sets cancel_
};

}  // namespace trainhook::flyte
