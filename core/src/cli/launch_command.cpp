// trainhook launch: torchrun's static launch (--standalone / --nnodes M
// --node_rank R) for users without Python. It starts N processes of this
// program on this machine with torchrun's environment, then supervises them:
// SIGINT/SIGTERM are forwarded, the first process that fails stops the others
// (SIGTERM, then SIGKILL after a grace period), and the exit code is the worst
// one (a process killed by signal S counts as 128+S, as in a shell).
#include <trainhook/cli/commands.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace trainhook::cli {
namespace {

constexpr const char* kUsage =
    "usage: trainhook launch --nproc_per_node N [--nnodes M --node_rank R] [--master_addr A]\n"
    "                        [--master_port P] [--grace_seconds S] -- <command> [args...]\n"
    "Runs `trainhook <command> args...` in N processes with torchrun's environment (RANK,\n"
    "WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT). On several machines,\n"
    "run it once per machine with the same --nnodes, --master_addr (machine 0's address) and\n"
    "--master_port, and --node_rank 0..M-1. One machine: master_addr 127.0.0.1 and a free port\n"
    "by default. When a process fails the others are stopped (SIGTERM, SIGKILL after\n"
    "--grace_seconds, default 15); the exit code is the worst of all processes.\n"
    "example: trainhook launch --nproc_per_node 2 -- train --train_file data.csv --do_train\n";

struct Options {
  int nproc = 0;
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;  // 0: a free port (one machine), 29500 (several)
  int grace_seconds = 15;
  std::vector<std::string> command;
};

int to_int(const std::string& flag, const std::string& v, int lo, int hi) {
  char* end = nullptr;
  errno = 0;
  const long x = std::strtol(v.c_str(), &end, 10);
  if (errno != 0 || end == v.c_str() || *end != '\0' || x < lo || x > hi) {
    throw std::invalid_argument(flag + ": expected an integer in [" + std::to_string(lo) + ", " +
                                std::to_string(hi) + "], got '" + v + "'");
  }
  return static_cast<int>(x);
}

Options parse(const std::vector<std::string>& args) {
  Options o;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a.rfind("--", 0) != 0) break;  // the command starts
    std::string name = a, value;
    const auto eq = a.find('=');
    if (eq != std::string::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
    } else {
      if (i + 1 >= args.size()) throw std::invalid_argument(a + ": expected a value");
      value = args[++i];
    }
    if (name == "--nproc_per_node" || name == "--nproc-per-node") {
      o.nproc = to_int(name, value, 1, 4096);
    } else if (name == "--nnodes") {
      o.nnodes = to_int(name, value, 1, 65536);
    } else if (name == "--node_rank" || name == "--node-rank") {
      o.node_rank = to_int(name, value, 0, 65535);
    } else if (name == "--master_addr" || name == "--master-addr") {
      o.master_addr = value;
    } else if (name == "--master_port" || name == "--master-port") {
      o.master_port = to_int(name, value, 1, 65535);
    } else if (name == "--grace_seconds") {
      o.grace_seconds = to_int(name, value, 0, 3600);
    } else {
      throw std::invalid_argument(
          "unknown option '" + name +
          "' (launch options: --nproc_per_node, --nnodes, --node_rank, --master_addr, "
          "--master_port, --grace_seconds; put the command after --)");
    }
  }
  o.command.assign(args.begin() + static_cast<std::ptrdiff_t>(std::min(i, args.size())), args.end());
  if (o.nproc == 0) throw std::invalid_argument("--nproc_per_node is required");
  if (o.node_rank >= o.nnodes) {
    throw std::invalid_argument("--node_rank " + std::to_string(o.node_rank) + " is not below --nnodes " +
                                std::to_string(o.nnodes));
  }
  if (o.command.empty()) throw std::invalid_argument("no command given (e.g. -- train --train_file ...)");
  if (o.command[0] == "launch") throw std::invalid_argument("launch cannot launch itself");
  if (o.master_port == 0) {
    if (o.nnodes > 1) {
      o.master_port = 29500;  // torchrun's default: every machine must agree
    } else {
      // A port free now; rank 0's store binds it a moment later.
      const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      socklen_t len = sizeof(addr);
      if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
          ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        if (fd >= 0) ::close(fd);
        throw std::runtime_error(std::string("cannot find a free port: ") + std::strerror(errno) +
                                 " (pass --master_port)");
      }
      o.master_port = ntohs(addr.sin_port);
      ::close(fd);
    }
  }
  return o;
}

std::string self_executable(const std::string& fallback) {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return fallback;
  buf[n] = '\0';
  return buf;
}

struct Child {
  int rank = 0;
  pid_t pid = -1;
  bool running = false;
  int code = 0;
};

std::string describe(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = ::strsignal(sig);
    return "was killed by signal " + std::to_string(sig) + " (" + (name ? name : "?") + ")";
  }
  return "ended with status " + std::to_string(status);
}

}  // namespace

int launch_command(const std::vector<std::string>& args, const std::string& program_path) {
  for (const auto& a : args) {
    if (a == "--") break;
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
  }
  Options o;
  try {
    o = parse(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trainhook launch: error: %s\n%s", e.what(), kUsage);
    return 2;
  }
  const std::string exe = self_executable(program_path);
  const int world = o.nproc * o.nnodes;

  // Signals are taken synchronously (sigtimedwait) so forwarding needs no handler.
  sigset_t watched;
  sigemptyset(&watched);
  sigaddset(&watched, SIGINT);
  sigaddset(&watched, SIGTERM);
  sigaddset(&watched, SIGCHLD);
  sigset_t previous;
  sigprocmask(SIG_BLOCK, &watched, &previous);

  std::vector<Child> children;
  const pid_t launcher = ::getpid();
  for (int local = 0; local < o.nproc; ++local) {
    const int rank = o.node_rank * o.nproc + local;
    std::vector<std::string> env_pairs = {
        "RANK=" + std::to_string(rank),
        "WORLD_SIZE=" + std::to_string(world),
        "LOCAL_RANK=" + std::to_string(local),
        "LOCAL_WORLD_SIZE=" + std::to_string(o.nproc),
        "GROUP_RANK=" + std::to_string(o.node_rank),
        "MASTER_ADDR=" + o.master_addr,
        "MASTER_PORT=" + std::to_string(o.master_port),
    };
    const pid_t pid = ::fork();
    if (pid < 0) {
      std::fprintf(stderr, "trainhook launch: error: cannot start rank %d: %s\n", rank, std::strerror(errno));
      for (auto& c : children) ::kill(c.pid, SIGTERM);
      break;
    }
    if (pid == 0) {
      sigprocmask(SIG_SETMASK, &previous, nullptr);
      // The process must not outlive a launcher killed with SIGKILL.
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != launcher) ::_exit(1);
      for (const auto& kv : env_pairs) {
        const auto eq = kv.find('=');
        ::setenv(kv.substr(0, eq).c_str(), kv.substr(eq + 1).c_str(), 1);
      }
      // torchrun's default: one compute thread per process unless told otherwise.
      if (o.nproc > 1) ::setenv("OMP_NUM_THREADS", "1", 0);
      std::vector<char*> argv;
      argv.push_back(const_cast<char*>(program_path.c_str()));
      for (const auto& a : o.command) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(exe.c_str(), argv.data());
      std::fprintf(stderr, "trainhook launch: error: cannot run %s: %s\n", exe.c_str(), std::strerror(errno));
      ::_exit(127);
    }
    children.push_back(Child{rank, pid, true, 0});
  }

  int worst = 0;
  bool stopping = static_cast<int>(children.size()) != o.nproc;
  auto kill_deadline = std::chrono::steady_clock::time_point::max();
  auto stop_all = [&](int sig) {
    for (const auto& c : children) {
      if (c.running) ::kill(c.pid, sig);
    }
  };
  if (stopping) kill_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.grace_seconds);
  auto running = [&] {
    for (const auto& c : children) {
      if (c.running) return true;
    }
    return false;
  };
  while (running()) {
    timespec wait{0, 200 * 1000 * 1000};
    const int sig = ::sigtimedwait(&watched, nullptr, &wait);
    if (sig == SIGINT || sig == SIGTERM) {
      std::fprintf(stderr, "trainhook launch: got %s, forwarding it to every process\n", ::strsignal(sig));
      stop_all(sig);
      if (!stopping) {
        stopping = true;
        kill_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.grace_seconds);
      }
    }
    int status = 0;
    pid_t pid;
    while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
      for (auto& c : children) {
        if (c.pid != pid) continue;
        c.running = false;
        c.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        worst = std::max(worst, c.code);
        if (c.code != 0) {
          std::fprintf(stderr, "trainhook launch: rank %d (pid %d) %s\n", c.rank, static_cast<int>(pid),
                       describe(status).c_str());
          if (!stopping) {
            std::fprintf(stderr, "trainhook launch: stopping the other processes\n");
            stopping = true;
            stop_all(SIGTERM);
            kill_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.grace_seconds);
          }
        }
      }
    }
    if (stopping && std::chrono::steady_clock::now() > kill_deadline) {
      std::fprintf(stderr, "trainhook launch: processes still running after %ds, killing them\n",
                   o.grace_seconds);
      stop_all(SIGKILL);
      kill_deadline = std::chrono::steady_clock::time_point::max();
    }
  }
  sigprocmask(SIG_SETMASK, &previous, nullptr);
  return worst;
}

}  // namespace trainhook::cli
