// call_watch (core/src/plugin_host/check/): around each call, a setting left
// changed names the call, one changed and put back while the call ran is seen
// by the sampler, one changed between two calls names the call it preceded,
// and an untouched process shows nothing.
#include "call_watch.hpp"

#include <doctest/doctest.h>

#include <signal.h>
#include <unistd.h>
#include <chrono>
#include <string>
#include <thread>

namespace check = trainhook::plugin_check;

namespace {

// SIGUSR2 ignored for the life of the object, then as it was.
struct IgnoreUsr2 {
  struct sigaction old {};
  IgnoreUsr2() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    REQUIRE(::sigaction(SIGUSR2, &ignore, &old) == 0);
  }
  ~IgnoreUsr2() { ::sigaction(SIGUSR2, &old, nullptr); }
};

bool has(const check::CallWatch::Kind& kind, const std::string& text) {
  for (const auto& s : kind.seen)
    if (s == text) return true;
  return false;
}

}  // namespace

TEST_CASE("calls that change nothing show nothing") {
  check::CallWatch watch;
  watch.start();
  for (int i = 0; i < 20; ++i) {
    watch.begin("quiet", "on_log", i);
    watch.end();
  }
  watch.stop();
  CHECK(watch.signals().count == 0);
  CHECK(watch.std_fds().count == 0);
  CHECK(watch.cwd().count == 0);
}

TEST_CASE("a disposition left changed names the call") {
  check::CallWatch watch;
  watch.start();
  watch.begin("careless", "create", 0);
  {
    IgnoreUsr2 ignored;
    watch.end();
    watch.begin("careless", "on_log", 2);  // no new change: nothing more
    watch.end();
  }
  watch.stop();
  REQUIRE(watch.signals().count == 1);
  CHECK(watch.signals().seen[0] ==
        "careless.create at step 0: changed the disposition of SIGUSR2 (still so when it returned)");
}

TEST_CASE("a disposition changed between two calls names the call it preceded") {
  check::CallWatch watch;
  watch.start();
  {
    IgnoreUsr2 ignored;
    watch.begin("careless", "on_step_end", 3);
    watch.end();
  }
  watch.stop();
  CHECK(
      has(watch.signals(),
          "between two calls, before careless.on_step_end at step 3 (a thread of the plugin's): changed the "
          "disposition of SIGUSR2"));
}

TEST_CASE("a disposition changed and put back inside a call is seen while the call runs") {
  check::CallWatch watch;
  watch.start();
  // Each call holds the change 20 ms; the sampler reads every millisecond. Bounded: 100 calls.
  int calls = 0;
  while (watch.signals().count == 0 && calls < 100) {
    watch.begin("careless", "on_step_end", ++calls);
    {
      IgnoreUsr2 ignored;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    watch.end();
  }
  watch.stop();
  REQUIRE(watch.signals().count == 1);
  CHECK(watch.signals().seen[0] ==
        "careless.on_step_end at step " + std::to_string(calls) +
            ": changed the disposition of SIGUSR2 while it ran (put back before it "
            "returned)");
}

TEST_CASE("a working directory changed inside a call, and a watch not started, which sees nothing") {
  char here[4096];
  REQUIRE(::getcwd(here, sizeof here) != nullptr);
  check::CallWatch idle;
  idle.begin("careless", "on_log", 1);
  REQUIRE(::chdir("/") == 0);
  idle.end();
  REQUIRE(::chdir(here) == 0);
  CHECK(idle.cwd().count == 0);

  check::CallWatch watch;
  watch.start();
  watch.begin("careless", "on_train_begin", 0);
  REQUIRE(::chdir("/") == 0);
  watch.end();
  REQUIRE(::chdir(here) == 0);
  watch.stop();
  REQUIRE(watch.cwd().count == 1);
  CHECK(watch.cwd().seen[0] == "careless.on_train_begin at step 0: changed the working directory from " +
                                   std::string(here) + " to / (still so when it returned)");
}
