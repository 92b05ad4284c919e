// A th_host for driving plugin callbacks in tests without the trainer: records
// log lines and the resume checkpoint a plugin asks for.
#pragma once

#include <trainhook/abi.h>

#include <mutex>
#include <string>
#include <vector>

struct FakeHost {
  std::string output_dir;
  std::string args_json = "{}";
  std::string state_json = "{}";
  std::string run_name = "test-run";
  std::string resume_checkpoint;  // what set_resume_checkpoint received
  std::mutex mu;
  std::vector<std::pair<int, std::string>> logs;
  th_host table{};

  FakeHost() {
    table.struct_size = sizeof(th_host);
    table.abi_major = 1;
    table.ctx = this;
    table.log = [](void* c, int32_t level, const char* m) {
      auto* h = static_cast<FakeHost*>(c);
      std::lock_guard<std::mutex> lock(h->mu);
      h->logs.emplace_back(level, m);
    };
    table.output_dir = [](void* c) { return static_cast<FakeHost*>(c)->output_dir.c_str(); };
    table.training_args_json = [](void* c) { return static_cast<FakeHost*>(c)->args_json.c_str(); };
    table.request_stop = [](void*, const char*) {};
    table.trainer_state_json = [](void* c) { return static_cast<FakeHost*>(c)->state_json.c_str(); };
    table.model_description = [](void*) { return ""; };
    table.set_resume_checkpoint = [](void* c, const char* path, char*, size_t) -> th_status {
      static_cast<FakeHost*>(c)->resume_checkpoint = path;
      return TH_OK;
    };
    table.run_name = [](void* c) { return static_cast<FakeHost*>(c)->run_name.c_str(); };
  }
  bool logged(const std::string& needle) {
    std::lock_guard<std::mutex> lock(mu);
    for (auto& [l, m] : logs)
      if (m.find(needle) != std::string::npos) return true;
    return false;
  }
  std::string all_logs() {
    std::lock_guard<std::mutex> lock(mu);
    std::string s;
    for (auto& [l, m] : logs) s += std::to_string(l) + " " + m + "\n";
    return s;
  }
};

// Fires events at one callback instance through its C vtable.
struct EventFirer {
  const th_callback_info* info;
  void* self;
  th_state state{};
  th_control control{};

  EventFirer(const th_callback_info* i, void* s) : info(i), self(s) {
    state.struct_size = sizeof(th_state);
    state.is_local_process_zero = 1;
    state.is_world_process_zero = 1;
    state.world_size = 1;
    control.struct_size = sizeof(th_control);
  }
  th_status fire(int32_t event, const char* checkpoint_dir = nullptr, std::string* error = nullptr) {
    th_event_args a{};
    a.struct_size = sizeof a;
    a.event = event;
    a.state = &state;
    a.control = &control;
    a.checkpoint_dir = checkpoint_dir;
    a.batch_index = -1;
    a.batch_count = -1;
    char err[1024] = {0};
    th_status st = info->vtable->on_event(self, &a, err, sizeof err);
    if (error != nullptr) *error = err;
    return st;
  }
};
