// Runs a helper program the trainer starts and watches: the plugin scanner
// (registry/plugin_scan.cpp) and the plugin checker (check/plugin_check.cpp)
// load a library the trainer must not trust, so the helper gets a process
// group of its own, default signal dispositions, /dev/null as input (or the
// caller's few bytes, then end of file), its output captured, and a result
// descriptor for its answer. The wait never blocks on the helper's pipes (a
// process the library forked may hold them open), and the whole group is
// killed when the wait ends, so nothing the library started outlives the run.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace trainhook::detail {

struct HelperCall {
  std::vector<std::string> argv;        // argv[0]: the helper's path
  const char* purpose = "";             // "the plugin scanner": named in errors
  int result_fd = 3;                    // where the helper writes its answer
  size_t max_answer = size_t{1} << 20;  // bytes of the answer kept (the rest is cut)
  size_t output_tail = 2000;            // the last bytes of stdout+stderr kept
  std::chrono::milliseconds limit{10000};
  // The answer is one line: the wait ends once it is complete, even if the
  // helper has not exited yet (it is killed then, as it has nothing more to say).
  bool one_line_answer = false;
  // Its stdin: these bytes, then end of file (at most PIPE_BUF, written before
  // it starts); /dev/null when empty. Only the helper reads them, before it
  // reopens stdin: the plugin checker's record token (check/plugin_check.cpp).
  std::string input;
};

struct HelperRun {
  std::string answer;
  std::string output;
  int status = 0;  // waitpid's status (killed by SIGKILL after a time-out)
  bool timed_out = false;
};

// Throws PluginError naming `purpose` when the helper cannot be started or
// waiting for it fails.
HelperRun run_helper(const HelperCall& call);

}  // namespace trainhook::detail
