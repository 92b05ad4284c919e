// What the check helper tells the `trainhook plugin check` command
// (plugin_host/check/plugin_check.cpp), which owns the table and the exit status:
//  - one JSON line per result on fd 3 ({"check", "verdict", "detail"});
//  - a progress marker in a small shared file: which callback and event runs
//    now and whether a plugin call is under way, so the command can name the
//    event a crash or a hang happened in (the helper cannot say it then).
// The marker is written into a mapped page: no system call per event, so the
// per-event times stay the plugin's own.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

namespace trainhook::plugin_check {

enum class Verdict { pass, warn, fail, skip };

// One result line on fd 3. Never throws; a closed fd 3 loses the line.
void report(const std::string& check, Verdict verdict, const std::string& detail);

class Progress {
 public:
  // Maps `file` (created, 4 KiB). Throws std::runtime_error when it cannot.
  void open(const std::string& file);
  // "<callback>.<event> at step <step>", with the in-call flag set until done().
  void enter(const char* callback, const char* event, int64_t step) noexcept;
  void done() noexcept;
  // What the run is doing ("NaN and infinite losses"), shown before the event; "" for none.
  void set_phase(std::string phase) { phase_ = std::move(phase); }

 private:
  char* page_ = nullptr;
  std::string phase_;
};

// The marker's layout, read by the command: byte 0 is '1' while a plugin call
// runs ('0' otherwise), the text from byte 1 to its NUL says where.
constexpr size_t kProgressSize = 4096;

}  // namespace trainhook::plugin_check
