// trainhook-plugin-scanner FILE [PARENT_PID [IDENTITY]]: loads one plugin library in this
// short-lived process and writes what it exports (library_record_json.hpp) to
// fd 3, one JSON document on one line: the caller takes the line's end as the
// end of the answer, since a process the library forked may keep fd 3 open.
// The registry starts it for each library it has not seen (as GStreamer's
// registry starts gst-plugin-scanner), so a library that crashes,
// hangs or exits while loading takes down this process, never the caller.
// Whatever the library prints goes to stdout/stderr, which the caller keeps
// apart from the result. The caller starts it in a process group of its own
// (plugin_scan.cpp), out of reach of the terminal's Ctrl-C, so it ends itself
// when the caller (PARENT_PID) dies. IDENTITY (plugin_file.hpp, FileIdentity)
// is the version of FILE the caller judged: the scanner opens FILE once and
// reads and loads that descriptor only if it is that version, so its verdict
// is about the caller's bytes and never about a file put there meanwhile.
#include "../library_record_json.hpp"
#include "../plugin_loader.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

namespace {

constexpr int kResultFd = 3;

bool write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 4) {
    std::fprintf(stderr,
                 "usage: trainhook-plugin-scanner FILE [PARENT_PID [IDENTITY]] (the result goes to fd %d)\n",
                 kResultFd);
    return 2;
  }
  std::optional<trainhook::detail::FileIdentity> expected;
  if (argc == 4) {
    expected = trainhook::detail::FileIdentity::parse(argv[3]);
    if (!expected) {
      std::fprintf(stderr,
                   "trainhook-plugin-scanner: IDENTITY '%s' is not dev:inode:size:mtime_ns:ctime_ns\n",
                   argv[3]);
      return 2;
    }
  }
  if (argc >= 3) {
    // Killed with the caller; checked after arming, in case the caller is already gone.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != static_cast<pid_t>(std::strtol(argv[2], nullptr, 10))) ::_exit(4);
  }
  trainhook::LibraryRecord rec;
  rec.path = argv[1];
  std::string text;
  try {
    const auto library =
        trainhook::detail::load_plugin_library(rec.path, rec, expected ? &*expected : nullptr);
    text = trainhook::detail::record_to_json(rec).dump();
  } catch (const std::exception& e) {
    rec.loaded = false;
    rec.refused_reason = std::string("the scanner failed while reading it: ") + e.what();
    text = trainhook::detail::record_to_json(rec).dump();
  }
  const bool ok = write_all(kResultFd, text + "\n");
  // _exit: the library stays mapped and its destructors and atexit handlers do
  // not run; the caller judges the library by what it did while loading.
  ::_exit(ok ? 0 : 3);
}
