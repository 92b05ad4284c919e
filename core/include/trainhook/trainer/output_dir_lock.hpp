// One writer per output_dir: world rank 0 of a training run holds an advisory
// lock (flock, LOCK_EX) on output_dir/.trainhook.lock for the whole run, so a
// second run into the same folder is refused at once instead of mixing
// checkpoints with the first. The kernel drops the lock when the holder's
// file descriptor closes, also when the process is killed (kill -9), so a
// crashed run never blocks the next one. The lock file itself stays (removing
// it would let two runs lock two different files); it holds the holder's host
// and PID, for the refusal message. Not for runs that only read (evaluation
// or prediction without training). No LibTorch here.
//
// Forked children: the descriptor is close-on-exec, and a pthread_atfork child
// handler closes it in a child forked without exec (a plugin's helper or
// telemetry daemon), since an flock lock belongs to the open file description
// and the child's copy would otherwise keep the folder locked after the run
// ends. A refusal checks whether the recorded PID is still alive and, when it
// is gone, names the processes of this machine that still hold the lock file
// (or says how to find them: `fuser -v`, `lsof`).
//
// Who takes it: `trainhook train` before it looks into output_dir (the resume
// detection), and the Trainer in its constructor (so embedders get it). A
// process takes one lock per folder: a second acquire() of the same folder in
// the same process shares the first holder's lock (flock on a second
// descriptor would conflict with the process's own), and the lock is released
// when the last holder is gone.
#pragma once

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

namespace trainhook {

inline constexpr const char* kOutputDirLockFile = ".trainhook.lock";

// Another process holds the lock; what() names the folder, host and PID, or
// the leftover process that holds it after the run that locked it exited.
class OutputDirBusy : public std::runtime_error {
 public:
  explicit OutputDirBusy(const std::string& message) : std::runtime_error(message) {}
};

class OutputDirLock {
 public:
  // Creates output_dir when missing, then takes the lock or shares this
  // process's. Throws OutputDirBusy when another process holds it, and
  // std::runtime_error when the lock file cannot be opened or locked.
  static std::shared_ptr<OutputDirLock> acquire(const std::filesystem::path& output_dir);

  ~OutputDirLock();  // closes the descriptor: the kernel releases the lock
  OutputDirLock(const OutputDirLock&) = delete;
  OutputDirLock& operator=(const OutputDirLock&) = delete;

  const std::filesystem::path& file() const noexcept { return file_; }

 private:
  OutputDirLock(int fd, std::filesystem::path file, std::string key);

  int fd_;  // open (close-on-exec) for the lock's lifetime
  std::filesystem::path file_;
  std::string key_;  // the folder's device and inode, this process's registry key
};

// Whether a run with these task flags only reads output_dir (no lock).
inline bool output_dir_read_only(bool do_train, bool do_eval, bool do_predict) noexcept {
  return !do_train && (do_eval || do_predict);
}

}  // namespace trainhook
