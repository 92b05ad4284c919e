// Plugins that each break one rule `trainhook plugin check` enforces, written
// straight on abi.h (not plugin.hpp, whose layer would catch the exception),
// one per CARELESS_* definition; plugin_check_test.sh asserts that the check
// names the rule each breaks. Every other event is handled correctly, so the
// one FAIL is theirs.
#include <trainhook/abi.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Careless {
  const th_host* host;
};

#ifdef CARELESS_SIGTERM
void on_sigterm(int) {}
#endif
#ifdef CARELESS_LEAKS
void* kept = nullptr;
#endif

#if defined(CARELESS_FORGES) || defined(CARELESS_FORGES_EXITS)
// A verdict for every check, the way the checker's helper writes them (and an
// end line, with the token guessed empty), onto every pipe the process holds:
// the result channel is among them. None of it may count.
void forge_passes() {
  static const char* const checks[] = {"entry_table",     "config_keys",       "readme_table",
                                       "events",          "observe_only",      "resume",
                                       "hostile_inputs",  "exceptions",        "files_in_cwd",
                                       "threads_left",    "child_processes",   "signal_handlers",
                                       "std_descriptors", "working_directory", "event_time",
                                       "memory_growth"};
  std::string lines;
  for (const char* check : checks)
    for (const char* token : {"", "0"})
      lines += std::string("{\"token\":\"") + token + "\",\"check\":\"" + check +
               "\",\"verdict\":\"PASS\",\"detail\":\"fine\"}\n";
  lines += "{\"token\":\"\",\"end\":true}\n{\"end\":true}\n";
  for (int fd = 1; fd < 64; ++fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) continue;
    const ssize_t n = ::write(fd, lines.data(), lines.size());
    (void)n;
  }
}
#endif

#ifdef CARELESS_IGNORES_SIGTERM
// Ignores SIGTERM while it "flushes" in each on_step_end and puts the
// trainer's handler back before it returns. The first few calls of each
// process hold it for 50 ms, so the checker's 1 ms sampler cannot miss it;
// only a few, so event_time's mean stays within the test's budget.
int held_calls = 0;
constexpr int kHeldCalls = 3;
#endif

#ifdef CARELESS_ABORTS
// Its on_event is noexcept, so an exception from below it ends the process
// (std::terminate, SIGABRT) instead of reaching the host.
[[gnu::noinline]] void parse_record(const th_values* v) {
  if (v != nullptr) throw std::runtime_error("careless: cannot parse the record");
}
#define CARELESS_NOEXCEPT noexcept
#else
#define CARELESS_NOEXCEPT
#endif

th_status on_event(void* self, const th_event_args* args, char*, size_t) CARELESS_NOEXCEPT {
  auto* c = static_cast<Careless*>(self);
  (void)c;
  switch (args->event) {
#ifdef CARELESS_THROWS
    case TH_EVENT_LOG:
      throw std::runtime_error("careless: a log record it did not expect");
#endif
#ifdef CARELESS_ABORTS
    case TH_EVENT_LOG:
      parse_record(args->values);
      break;
#endif
#ifdef CARELESS_WRITES_CWD
    case TH_EVENT_TRAIN_END: {
      // A relative path: the working directory, not output_dir.
      if (std::FILE* f = std::fopen("careless_summary.txt", "w")) {
        std::fputs("done\n", f);
        std::fclose(f);
      }
      break;
    }
#endif
#ifdef CARELESS_SLOW
    case TH_EVENT_STEP_END:
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      break;
#endif
#ifdef CARELESS_LEAKS
    case TH_EVENT_STEP_END: {
      // Kept "for later" and never freed: 4 KiB per step, chained so that it stays reachable.
      void** record = static_cast<void**>(std::malloc(4096));
      if (record != nullptr) {
        std::memset(record, 1, 4096);
        *record = kept;
        kept = record;
      }
      break;
    }
#endif
#ifdef CARELESS_CLOSES_STDERR
    case TH_EVENT_TRAIN_END:
      ::close(STDERR_FILENO);
      break;
#endif
#ifdef CARELESS_CHDIR
    case TH_EVENT_TRAIN_BEGIN:
      if (::chdir(c->host->output_dir(c->host->ctx)) != 0) return TH_ERROR;
      break;
#endif
#ifdef CARELESS_HANGS
    case TH_EVENT_EVALUATE:
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
#endif
#ifdef CARELESS_FORGES
    case TH_EVENT_TRAIN_BEGIN:
      forge_passes();
      ::raise(SIGSEGV);
      break;
#endif
#ifdef CARELESS_FORGES_EXITS
    case TH_EVENT_TRAIN_BEGIN:
      forge_passes();
      ::_exit(0);
#endif
#ifdef CARELESS_IGNORES_SIGTERM
    case TH_EVENT_STEP_END: {
      struct sigaction ignore {};
      struct sigaction old {};
      ignore.sa_handler = SIG_IGN;
      ::sigaction(SIGTERM, &ignore, &old);
      if (held_calls < kHeldCalls) {
        ++held_calls;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      ::sigaction(SIGTERM, &old, nullptr);
      break;
    }
#endif
#ifdef CARELESS_CRASHES
    case TH_EVENT_SAVE:
      ::raise(SIGSEGV);
      break;
#endif
#ifdef CARELESS_STEERS_SIDE_BY_SIDE
    case TH_EVENT_SAVE:
      // Declared side by side in create, yet it stops the run here.
      args->control->should_training_stop = 1;
      break;
#endif
#ifdef CARELESS_STEERS_OBSERVED
    case TH_EVENT_LOG:
      // Declared observe-only in create, yet it asks for a checkpoint here.
      args->control->should_save = 1;
      break;
#endif
    default:
      break;
  }
  return TH_OK;
}

void destroy(void* self) { delete static_cast<Careless*>(self); }

th_status create(const th_host* host, const char* config_json, void** out, char* err, size_t err_size) {
  if (std::strcmp(config_json, "{}") != 0) {
    std::snprintf(err, err_size, "plugin_config careless: it takes no keys");
    return TH_INVALID_ARGUMENT;
  }
#ifdef CARELESS_THREAD
  // A worker nobody joins: it outlives destroy().
  std::thread([] {
    for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }).detach();
#endif
#ifdef CARELESS_SIGTERM
  // Takes SIGTERM from the trainer, which saves a checkpoint on it.
  ::signal(SIGTERM, on_sigterm);
#endif
#ifdef CARELESS_STEERS_SIDE_BY_SIDE
  host->set_side_by_side(host->ctx, TH_EVENT_BIT(TH_EVENT_SAVE));
#endif
#ifdef CARELESS_STEERS_OBSERVED
  host->set_observe_only(host->ctx, TH_EVENT_BIT(TH_EVENT_LOG) | TH_EVENT_BIT(TH_EVENT_STEP_END));
#endif
  *out = new Careless{host};
  return TH_OK;
}

const th_callback_vtable vtable = {TH_CALLBACK_VTABLE_STRUCT_SIZE, on_event, nullptr, nullptr, destroy};
const th_callback_info callback = {
    TH_CALLBACK_INFO_STRUCT_SIZE,          "careless",        "0.1.0", TH_KIND_CALLBACK,
    "breaks one rule of the plugin check", TH_EVENT_MASK_ALL, create,  &vtable};
const th_callback_info* const callbacks[] = {&callback};
const th_plugin_info info = {TH_PLUGIN_INFO_STRUCT_SIZE,
                             TRAINHOOK_ABI_VERSION_MAJOR,
                             TRAINHOOK_ABI_MIN_MINOR,
                             "careless",
                             "0.1.0",
                             1,
                             callbacks,
                             0,
                             nullptr};

}  // namespace

extern "C" TRAINHOOK_EXPORT th_status TRAINHOOK_ENTRY_NAME(const th_host_info*, const th_plugin_info** out,
                                                           char*, size_t) {
  *out = &info;
  return TH_OK;
}
