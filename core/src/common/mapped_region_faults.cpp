#include <trainhook/common/mapped_region_faults.hpp>

#include <trainhook/common/fatal_error_file.hpp>
#include <trainhook/common/signal_safe_write.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <atomic>
#include <cstring>
#include <mutex>

namespace trainhook {
namespace {

// Slots are claimed under a mutex (registration is rare) and read by the
// handler without it: `begin` is published last and cleared first.
constexpr int kSlots = 4096;
struct Region {
  std::atomic<std::uintptr_t> begin{0};
  std::atomic<uint64_t> size{0};
  std::atomic<const char*> file{nullptr};
};
Region g_regions[kSlots];
std::mutex g_register_mutex;
std::atomic<bool> g_installed{false};
struct sigaction g_previous {};

void append(char* buf, size_t& used, size_t cap, const char* text) noexcept {
  for (const char* p = text; *p != '\0' && used + 1 < cap; ++p) buf[used++] = *p;
  buf[used] = '\0';
}

void append_number(char* buf, size_t& used, size_t cap, uint64_t v) noexcept {
  char digits[24];
  char* p = digits + sizeof digits;
  *--p = '\0';
  do {
    *--p = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v > 0);
  append(buf, used, cap, p);
}

void on_sigbus(int sig, siginfo_t* info, void* context) {
  report_mapped_region_fault(sig, info);
  // Not ours: back to the handler before (the crash handler, ASan's or the
  // default) and return, so the read faults again and it sees the real fault.
  ::sigaction(SIGBUS, &g_previous, nullptr);
  (void)context;
  if (info == nullptr || info->si_code <= 0) ::raise(sig);  // sent, not a fault: nothing re-raises it
}

void install_once() noexcept {
  if (g_installed.exchange(true)) return;
  struct sigaction sa {};
  sa.sa_sigaction = on_sigbus;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  ::sigaction(SIGBUS, &sa, &g_previous);
}

}  // namespace

void register_mapped_region(const void* begin, uint64_t size, const char* file) noexcept {
  if (begin == nullptr || size == 0) return;
  try {
    const size_t len = std::strlen(file);
    char* copy = new char[len + 1];  // freed with the slot's next owner (rare: files open once)
    std::memcpy(copy, file, len + 1);
    std::lock_guard<std::mutex> lock(g_register_mutex);
    // A SIGBUS handler that chains must be in place before the first read.
    prepare_torchelastic_error_file();
    install_once();
    for (auto& r : g_regions) {
      if (r.begin.load() != 0) continue;
      delete[] r.file.exchange(nullptr);
      r.size.store(size);
      r.file.store(copy);
      r.begin.store(reinterpret_cast<std::uintptr_t>(begin));
      return;
    }
    delete[] copy;
  } catch (...) {
    // out of memory: the mapping is simply not named
  }
}

void unregister_mapped_region(const void* begin) noexcept {
  const auto b = reinterpret_cast<std::uintptr_t>(begin);
  if (b == 0) return;
  std::lock_guard<std::mutex> lock(g_register_mutex);
  for (auto& r : g_regions) {
    if (r.begin.load() != b) continue;
    r.begin.store(0);  // the name stays until the slot is reused: a handler may be reading it
    return;
  }
}

void report_mapped_region_fault(int sig, const void* info_in) noexcept {
  const auto* info = static_cast<const siginfo_t*>(info_in);
  if (sig != SIGBUS || info == nullptr || info->si_code <= 0) return;  // si_code <= 0: sent, not a fault
  const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (const auto& r : g_regions) {
    const std::uintptr_t begin = r.begin.load();
    if (begin == 0 || address < begin || address - begin >= r.size.load()) continue;
    const char* file = r.file.load();
    if (file == nullptr) continue;
    static char line[6144];
    size_t n = 0;
    append(line, n, sizeof line, "trainhook: fatal: data file ");
    append(line, n, sizeof line, file);
    append(line, n, sizeof line, " changed while the run had it mapped: it was ");
    append_number(line, n, sizeof line, r.size.load());
    append(line, n, sizeof line, " bytes when opened");
    struct stat st {};
    if (::stat(file, &st) == 0) {  // async-signal-safe
      append(line, n, sizeof line, " and is ");
      append_number(line, n, sizeof line, static_cast<uint64_t>(st.st_size));
      append(line, n, sizeof line, " bytes now");
    } else {
      append(line, n, sizeof line, " and is gone now");
    }
    append(line, n, sizeof line, "; reading byte ");
    append_number(line, n, sizeof line, address - begin);
    append(line, n, sizeof line,
           " found no data (SIGBUS): the file was truncated or rewritten in place under the run. Do not "
           "change data files during a run (write a new file and rename it over the old one instead); "
           "the run stops here, checkpoints saved before are intact");
    write_stderr_signal_safe(line);
    write_stderr_signal_safe("\n");
    write_torchelastic_error_file_signal_safe(line + std::strlen("trainhook: fatal: "));
    ::_exit(kMappedFileChangedStatus);
  }
}

}  // namespace trainhook
