// The crash handler outside any callback call: a loaded plugin library is
// found by address; a crash on a thread the plugin started, or in its library
// destructor at exit, is named by the library that holds it; once the run's
// results are marked complete a crash ends the process with the run's status
// and says so; a crash in the host's own code before that prints nothing and
// dies of the signal as before. The plugin is tests/reliability's
// process_end_plugin.c, driven through its C table here (no trainer). Each
// case runs in a child process (a crash ends it).
#include "containment/crash_handler.hpp"
#include "containment/plugin_address_table.hpp"
#include "registry/plugin_loader.hpp"

#include <trainhook/plugin_host/containment/process_end.hpp>
#include <trainhook/plugin_host/registry/plugin_file_name.hpp>

#include <doctest/doctest.h>
#include <child_process.hpp>

#include <signal.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>

namespace fs = std::filesystem;
using namespace trainhook;

namespace {

const fs::path kPluginFolder = fs::path(TRAINHOOK_TEST_PLUGIN_ROOT) / "crash_attribution";

fs::path plugin_file() { return kPluginFolder / plugin_file_name("process_end"); }

using Ended = testkit::ChildEnd;

// A crash case in a child: no core file, and the test runner's own crash
// handlers (not the ones under test) out of the way.
Ended run_child(const std::function<void()>& body) {
  return testkit::run_in_child([&body] {
    const struct rlimit no_core = {0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) ::signal(sig, SIG_DFL);
    body();
  });
}

// The library loaded as the trainer loads it, and one of its callbacks created.
struct Loaded {
  std::shared_ptr<const detail::PluginLibrary> library;
  const th_callback_info* callback = nullptr;
  void* self = nullptr;
};

Loaded load(const std::string& callback) {
  LibraryRecord rec;
  rec.path = plugin_file();
  Loaded out;
  out.library = detail::load_plugin_library(plugin_file(), rec);
  if (!out.library) {
    std::fprintf(stderr, "cannot load %s: %s\n", plugin_file().c_str(), rec.refused_reason.c_str());
    ::_exit(98);
  }
  out.callback = detail::find_callback(*out.library, callback);
  char err[256] = "";
  if (out.callback == nullptr || out.callback->create(nullptr, "{}", &out.self, err, sizeof err) != TH_OK)
    ::_exit(97);
  return out;
}

bool has(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return true;
  MESSAGE("stderr was: " << text);
  return false;
}

}  // namespace

TEST_CASE("a loaded plugin library is found by its addresses, the host's code is not") {
  const Ended e = run_child([] {
    const Loaded l = load("thread_crash");
    const auto entry = reinterpret_cast<std::uintptr_t>(l.callback->create);
    const detail::PluginAddressEntry found = detail::plugin_library_at(entry);
    const detail::PluginAddressEntry host =
        detail::plugin_library_at(reinterpret_cast<std::uintptr_t>(&run_child));
    const bool ok = found.file != nullptr && plugin_file().string() == found.file && found.name != nullptr &&
                    std::strcmp(found.name, "process_end") == 0 && host.file == nullptr;
    ::_exit(ok ? 0 : 1);
  });
  CHECK(e.status == 0);
}

TEST_CASE("the process-end bound: a process that does not end is ended with the run's status") {
  const Ended e = run_child([] {
    (void)load("thread_crash");
    mark_run_results_complete("/runs/out", 0);
    bound_process_end(0.2, "--callback_end_timeout", 0);
    for (;;) ::pause();  // as an exit-time destructor that never returns
  });
  CHECK(e.status == 0);
  CHECK(has(e.err, "trainhook: the process did not end within --callback_end_timeout 0.2 s"));
  CHECK(has(e.err, plugin_file().string()));
}

#if defined(__SANITIZE_ADDRESS__)
// AddressSanitizer keeps its own handler (install_crash_handler does nothing):
// the cases below need ours.
TEST_CASE("crash attribution: not under AddressSanitizer" * doctest::skip()) {}
#else
namespace {

void fire(const Loaded& l, int32_t event, int64_t step) {
  th_state state{};
  state.struct_size = TH_STATE_STRUCT_SIZE;
  state.global_step = step;
  th_control control{};
  control.struct_size = TH_CONTROL_STRUCT_SIZE;
  th_event_args args{};
  args.struct_size = TH_EVENT_ARGS_STRUCT_SIZE;
  args.event = event;
  args.state = &state;
  args.control = &control;
  char err[256] = "";
  if (l.callback->vtable->on_event(l.self, &args, err, sizeof err) != TH_OK) ::_exit(96);
}

// Waits (bounded) for the plugin's thread to end the process.
void wait_for_the_crash() {
  for (int i = 0; i < 600; ++i) {
    struct timespec t = {0, 100 * 1000 * 1000};
    ::nanosleep(&t, nullptr);
  }
}

int* volatile g_nowhere = nullptr;
void host_null_write() { *g_nowhere = 1; }


}  // namespace


TEST_CASE("a thread the plugin started crashes: named by address, dies of SIGSEGV") {
  const Ended e = run_child([] {
    detail::install_crash_handler();
    const Loaded l = load("thread_crash");
    fire(l, TH_EVENT_TRAIN_BEGIN, 0);  // starts the thread; returns
    fire(l, TH_EVENT_STEP_END, 2);     // wakes it; returns
    wait_for_the_crash();
  });
  CHECK(e.signal == SIGSEGV);
  CHECK(has(e.err,
            "trainhook: fatal: SIGSEGV (invalid memory access) in plugin code: plugin 'process_end' from " +
                plugin_file().string() + ", outside any callback call"));
  CHECK(has(e.err, "found by the faulting instruction"));
  CHECK(e.err.find("results are complete") == std::string::npos);
}

TEST_CASE("the library destructor crashes at exit after the results are complete: the run's status") {
  const Ended e = run_child([] {
    const Loaded l = load("unload_crash");  // arms the library destructor
    mark_run_results_complete("/runs/out", 0);
    bound_process_end(0, "--callback_end_timeout", 0);  // no bound; marks the start of exit()
    std::exit(0);
  });
  CHECK(e.status == 0);
  CHECK(has(e.err, "unload_crash: writing through a null pointer in the library destructor"));
  CHECK(has(e.err, "in plugin code: plugin 'process_end' from " + plugin_file().string() +
                       ", while the process ends (its library's destructors run at exit)"));
  CHECK(has(e.err, "the run's results are complete: everything it writes is in /runs/out"));
  CHECK(has(e.err, "exiting with the run's status 0 instead of dying of the signal"));
}

TEST_CASE("a crash in the host's own code: silent before the results are complete, said after") {
  const Ended before = run_child([] {
    detail::install_crash_handler();
    (void)load("thread_crash");
    host_null_write();
  });
  CHECK(before.signal == SIGSEGV);
  CHECK(before.err.find("trainhook: fatal") == std::string::npos);
  const Ended after = run_child([] {
    (void)load("thread_crash");
    mark_run_results_complete("/runs/out", 3);
    host_null_write();
  });
  CHECK(after.status == 3);
  CHECK(has(after.err, "after the run, in code that no plugin library holds"));
  CHECK(has(after.err, "exiting with the run's status 3"));
}

#endif
