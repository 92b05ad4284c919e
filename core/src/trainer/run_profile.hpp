// The profile of one train() (--profile): the Profiler, the actions of the
// step the training loop times, LibTorch's operator profiler for `ops`, and
// at the end the files rank 0 writes: profile.json (every rank's summary),
// trace.json (every rank's spans, one pid per rank) and a table in the log.
// Owned by the Trainer (Impl::profile); off (no Profiler) unless --profile.
#pragma once

#include <trainhook/args/strategies.hpp>
#include <trainhook/common/profiler.hpp>

#include <memory>
#include <string>

namespace trainhook {
namespace distributed {
class DataParallel;
}

// LibTorch's own profiler over the training loop (operator_profile.cpp):
// the legacy profiler's Chrome trace on 1.13, Kineto's on 2.x.
class OperatorProfile {
 public:
  virtual ~OperatorProfile() = default;
  // Stops recording and writes the trace to `file`; says which profiler wrote it.
  virtual std::string save(const std::string& file) = 0;
  static std::unique_ptr<OperatorProfile> start();
};

class RunProfile {
 public:
  // The actions the training loop times (ids in the Profiler; -1 when off).
  struct Actions {
    int get_train_batch = -1;
    int training_step = -1;
    int forward = -1;
    int backward = -1;
    int gradient_reduction = -1;
    int optimizer_step = -1;
    int agree_on_control = -1;
    int evaluate = -1;
    int save_checkpoint = -1;
    int write_checkpoint = -1;    // within save_checkpoint: its files, atomically
    int rotate_checkpoints = -1;  // within save_checkpoint: save_total_limit
  };

  explicit RunProfile(ProfileMode mode = ProfileMode::none);
  ~RunProfile();
  RunProfile(const RunProfile&) = delete;
  RunProfile& operator=(const RunProfile&) = delete;

  // nullptr when --profile none: ProfileScope then does nothing.
  Profiler* get() const noexcept { return profiler_.get(); }
  const Actions& actions() const noexcept { return actions_; }

  // Training begins on the calling thread (named "training" in the trace).
  void start();
  // At the end of train(), on every rank (it gathers over ranks): rank 0
  // writes the files into output_dir and logs the table of its own rank.
  void finish(distributed::DataParallel& ranks, const std::string& output_dir);

 private:
  ProfileMode mode_;
  std::unique_ptr<Profiler> profiler_;
  Actions actions_;
  Profiler::Clock::time_point start_{};
  std::unique_ptr<OperatorProfile> ops_;
};

}  // namespace trainhook
