// What the check helper tells the `trainhook plugin check` command
// (plugin_host/check/plugin_check.cpp), which owns the table and the exit status
// and the rules of the result channel (read them there):
//  - one JSON line per result on fd 3 ({"token", "check", "verdict", "detail"}),
//    each carrying the token the command gave on stdin, and a last {"token",
//    "end"} line written just before the helper's _exit(0);
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

// Reads the command's token from stdin, then puts /dev/null there: called
// first thing, before the library is loaded, so no code of the plugin's can
// read it from the descriptor. False when stdin cannot be read or reopened.
bool take_token();

// One result line on fd 3. Never throws; a closed fd 3 loses the line.
void report(const std::string& check, Verdict verdict, const std::string& detail);

// The group's last line, then _exit(0): the command takes the group's results
// only from a helper that wrote it and exited 0.
[[noreturn]] void end_group();

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
