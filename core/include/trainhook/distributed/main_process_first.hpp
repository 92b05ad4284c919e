// HF's TrainingArguments.main_process_first(local=True, desc=...) as a scoped
// guard for embedders (the seeds' torch_distributed_zero_first): in a
// data-parallel run the main process (local rank 0 of each machine, or rank 0
// of the world) runs the guarded block first, e.g. preparing or caching a data
// set; the others wait at the guard's construction until every main process
// has left its block, then run the block themselves.
//   {
//     MainProcessFirst guard(group.get(), MainProcessFirstOptions().set_desc("cache"));
//     prepare_cache();  // the main process first, the others after
//   }
//
// A main process whose block throws tells the others as it unwinds: they do
// not run the block but throw std::runtime_error naming the failed main
// process, so every rank ends with a clear message instead of waiting for
// ddp_timeout. Without a group (or a world of one) the guard does nothing.
//
#pragma once

#include <cstdint>
#include <string>

namespace trainhook::distributed {

class ProcessGroup;

struct MainProcessFirstOptions {
  bool local = true;          // HF's default: local rank 0 of each machine goes first
  std::string desc = "work";  // what the block does, for messages
  int32_t local_rank = -1;    // -1: LOCAL_RANK of the launcher's environment

  MainProcessFirstOptions& set_local(bool v) {
    local = v;
    return *this;
  }
  MainProcessFirstOptions& set_desc(std::string v) {
    desc = std::move(v);
    return *this;
  }
};

class MainProcessFirst {
 public:
  // A non-main process waits here; throws std::runtime_error when a main
  // process failed in its block (or CollectiveError when the group fails).
  explicit MainProcessFirst(ProcessGroup* group, MainProcessFirstOptions options = {});
  // A main process releases the others here (reporting whether its block threw).
  ~MainProcessFirst() noexcept(false);
  MainProcessFirst(const MainProcessFirst&) = delete;
  MainProcessFirst& operator=(const MainProcessFirst&) = delete;

 private:
  ProcessGroup* group_ = nullptr;
  MainProcessFirstOptions options_;
  bool main_ = true;
  int uncaught_ = 0;
};

}  // namespace trainhook::distributed
