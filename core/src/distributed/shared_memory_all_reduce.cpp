// SharedMemoryAllReduce (see shared_memory_all_reduce.hpp). The segment:
//   header (magic, world, slot size, rank 0's pid namespace, every rank's pid)
//   three counters per rank, one cache line each (0: my slot holds my chunk;
//     1: my share of the result is written; 2: I have left)
//   two small areas per rank (all-reduces up to 64 KB: one exchange)
//   one slot per rank, then the result
// Chunk by chunk (a slot's size at most), each rank: copies its chunk into its
// slot, arrives at phase 0, waits for all; sums its share over every slot into
// the result, arrives at phase 1, waits for all; copies the result out. A slot
// is rewritten only after every rank has passed phase 1 of the chunk before
// (all reads of it done), the result only after every rank has passed phase 0
// of the next chunk (its copy out done).
#include <trainhook/distributed/shared_memory_all_reduce.hpp>

#include <trainhook/common/cpu_relax.hpp>

#include <torch/torch.h>

#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace trainhook::distributed {

namespace {

constexpr uint64_t kMagic = 0x7472686b73686d31ULL;  // "trhkshm1"
constexpr size_t kLine = 64;
// Up to this size an all-reduce takes one exchange: every rank reads every
// rank's copy and reduces the whole of it (flags, losses, a small bucket).
// Two areas per rank, used in turn: one is rewritten only after every rank
// has arrived at the next all-reduce, so has finished reading it.
constexpr size_t kSmallBytes = 64 * 1024;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

struct Fixed {
  uint64_t magic;
  uint64_t world;
  uint64_t slot_bytes;
  uint64_t pid_namespace;  // rank 0's; a rank in another one does not watch pids
};

uint64_t own_pid_namespace() {
  struct stat st {};
  return ::stat("/proc/self/ns/pid", &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
}

// Whether process `pid` has ended (gone, or a zombie not yet reaped by its parent).
bool has_exited(pid_t pid) {
  if (pid <= 0) return false;
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return false;
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() &&
         (text[close + 2] == 'Z' || text[close + 2] == 'X');
}

void futex_wait(std::atomic<uint32_t>* word, uint32_t seen, std::chrono::milliseconds at_most) {
  timespec ts{static_cast<time_t>(at_most.count() / 1000),
              static_cast<long>(at_most.count() % 1000) * 1000000L};
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, seen, &ts, nullptr, 0);
}

void futex_wake_all(std::atomic<uint32_t>* word) {
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

// Sequence numbers wrap; `seen` has reached `want` when it is not behind it.
bool reached(uint32_t seen, uint32_t want) { return static_cast<int32_t>(seen - want) >= 0; }

}  // namespace

struct SharedMemoryAllReduce::Layout {
  size_t pids, counters, small, slots, result, total;
  Layout(size_t world, size_t slot_bytes) {
    pids = sizeof(Fixed);
    counters = round_up(pids + world * sizeof(int64_t), kLine);
    small = round_up(counters + 3 * world * kLine, 4096);
    slots = small + 2 * world * kSmallBytes;
    result = slots + world * slot_bytes;
    total = result + slot_bytes;
  }
};

namespace {

Fixed* fixed_of(void* base) { return static_cast<Fixed*>(base); }

}  // namespace

std::unique_ptr<SharedMemoryAllReduce> SharedMemoryAllReduce::create(const std::string& name, int world,
                                                                     size_t slot_bytes, std::string& why) {
  slot_bytes = round_up(std::max<size_t>(slot_bytes, 4096), 4096);
  const Layout layout(static_cast<size_t>(world), slot_bytes);
  const int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) {
    why = "shm_open(" + name + "): " + std::strerror(errno);
    return nullptr;
  }
  // posix_fallocate: a full /dev/shm is an error here, not a SIGBUS later.
  const int rc = ::posix_fallocate(fd, 0, static_cast<off_t>(layout.total));
  void* base =
      rc == 0 ? ::mmap(nullptr, layout.total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
  ::close(fd);
  if (base == MAP_FAILED) {
    why = "cannot allocate " + std::to_string(layout.total) +
          " bytes in /dev/shm: " + std::strerror(rc != 0 ? rc : errno);
    ::shm_unlink(name.c_str());
    return nullptr;
  }
  std::memset(base, 0, layout.slots);
  auto* f = fixed_of(base);
  f->world = static_cast<uint64_t>(world);
  f->slot_bytes = slot_bytes;
  f->pid_namespace = own_pid_namespace();
  reinterpret_cast<int64_t*>(static_cast<char*>(base) + layout.pids)[0] = ::getpid();
  std::atomic_thread_fence(std::memory_order_release);
  f->magic = kMagic;
  std::unique_ptr<SharedMemoryAllReduce> self(new SharedMemoryAllReduce());
  self->name_ = name;
  self->base_ = base;
  self->bytes_ = layout.total;
  self->rank_ = 0;
  self->world_ = world;
  self->slot_bytes_ = slot_bytes;
  return self;
}

std::unique_ptr<SharedMemoryAllReduce> SharedMemoryAllReduce::attach(const std::string& name, int rank,
                                                                     int world, std::string& why) {
  const int fd = ::shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) {
    why = "shm_open(" + name + "): " + std::strerror(errno) + " (is rank 0 on another machine?)";
    return nullptr;
  }
  struct stat st {};
  void* base = MAP_FAILED;
  if (::fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) >= sizeof(Fixed)) {
    base = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  ::close(fd);
  if (base == MAP_FAILED) {
    why = "cannot map " + name;
    return nullptr;
  }
  auto* f = fixed_of(base);
  std::atomic_thread_fence(std::memory_order_acquire);
  const Layout layout(static_cast<size_t>(world), f->slot_bytes);
  if (f->magic != kMagic || f->world != static_cast<uint64_t>(world) ||
      layout.total != static_cast<size_t>(st.st_size)) {
    ::munmap(base, static_cast<size_t>(st.st_size));
    why = name + " is not a segment for " + std::to_string(world) + " ranks";
    return nullptr;
  }
  reinterpret_cast<int64_t*>(static_cast<char*>(base) + layout.pids)[rank] = ::getpid();
  std::unique_ptr<SharedMemoryAllReduce> self(new SharedMemoryAllReduce());
  self->name_ = name;
  self->base_ = base;
  self->bytes_ = layout.total;
  self->rank_ = rank;
  self->world_ = world;
  self->slot_bytes_ = f->slot_bytes;
  return self;
}

SharedMemoryAllReduce::~SharedMemoryAllReduce() {
  if (!base_) return;
  // Counter 2 of a rank: it has left (its group was destroyed); a peer waiting
  // for it fails at once instead of after the timeout.
  const Layout layout(static_cast<size_t>(world_), slot_bytes_);
  auto word = [&](size_t phase) {
    return reinterpret_cast<std::atomic<uint32_t>*>(
        static_cast<char*>(base_) + layout.counters +
        (phase * static_cast<size_t>(world_) + static_cast<size_t>(rank_)) * kLine);
  };
  word(2)->store(1, std::memory_order_release);
  futex_wake_all(word(0));
  futex_wake_all(word(1));
  ::munmap(base_, bytes_);
}

void SharedMemoryAllReduce::unlink() noexcept {
  if (rank_ == 0) ::shm_unlink(name_.c_str());
}

void SharedMemoryAllReduce::wait_for_all(size_t phase, uint32_t seq,
                                         std::chrono::steady_clock::time_point deadline) const {
  const Layout layout(static_cast<size_t>(world_), slot_bytes_);
  char* base = static_cast<char*>(base_);
  const auto* pids = reinterpret_cast<const int64_t*>(base + layout.pids);
  const bool watch_pids = fixed_of(base_)->pid_namespace == own_pid_namespace();
  for (int r = 0; r < world_; ++r) {
    if (r == rank_) continue;
    auto* word = reinterpret_cast<std::atomic<uint32_t>*>(
        base + layout.counters + (phase * static_cast<size_t>(world_) + static_cast<size_t>(r)) * kLine);
    const auto* left = reinterpret_cast<const std::atomic<uint32_t>*>(
        base + layout.counters + (2 * static_cast<size_t>(world_) + static_cast<size_t>(r)) * kLine);
    // A short spin: the peer is often a few microseconds away; then sleep in the kernel.
    bool done = false;
    for (int i = 0; i < 256 && !done; ++i) {
      done = reached(word->load(std::memory_order_acquire), seq);
      if (!done) cpu_relax();
    }
    auto next_check = std::chrono::steady_clock::now();
    while (!done) {
      const uint32_t seen = word->load(std::memory_order_acquire);
      if (reached(seen, seq)) break;
      if (aborted_.load()) throw std::runtime_error("the process group is being destroyed");
      if (left->load(std::memory_order_acquire) != 0 &&
          !reached(word->load(std::memory_order_acquire), seq)) {
        throw std::runtime_error("rank " + std::to_string(r) +
                                 " left the group during a shared-memory all-reduce");
      }
      const auto now = std::chrono::steady_clock::now();
      if (now >= next_check) {
        if (watch_pids && has_exited(static_cast<pid_t>(pids[r]))) {
          throw std::runtime_error("rank " + std::to_string(r) + " (pid " + std::to_string(pids[r]) +
                                   ") exited during a shared-memory all-reduce");
        }
        if (now >= deadline) {
          throw std::runtime_error("no answer from rank " + std::to_string(r) +
                                   " in a shared-memory all-reduce within the timeout");
        }
        next_check = now + std::chrono::milliseconds(100);
      }
      futex_wait(word, seen, std::chrono::milliseconds(100));
    }
  }
}

void SharedMemoryAllReduce::all_reduce(const torch::Tensor& t, Op op, std::chrono::milliseconds timeout) {
  if (broken_) throw std::runtime_error("an earlier shared-memory all-reduce failed");
  if (!t.is_contiguous() || !t.device().is_cpu())
    throw std::invalid_argument("shared-memory all-reduce: the tensor must be contiguous on the CPU");
  const Layout layout(static_cast<size_t>(world_), slot_bytes_);
  char* base = static_cast<char*>(base_);
  const size_t elem = t.element_size();
  const auto n_total = static_cast<size_t>(t.numel());
  const size_t per_chunk = slot_bytes_ / elem;
  auto* data = static_cast<char*>(t.data_ptr());
  const auto options = torch::TensorOptions().dtype(t.scalar_type());
  auto counter = [&](size_t phase, int r) {
    return reinterpret_cast<std::atomic<uint32_t>*>(
        base + layout.counters + (phase * static_cast<size_t>(world_) + static_cast<size_t>(r)) * kLine);
  };
  auto arrive = [&](size_t phase, uint32_t seq) {
    auto* word = counter(phase, rank_);
    word->store(seq, std::memory_order_release);
    futex_wake_all(word);
  };
  torch::NoGradGuard no_grad;
  auto reduce_into = [&](torch::Tensor out, auto&& part) {
    if (op == Op::sum) {
      torch::add_out(out, part(0), part(1));
      for (int r = 2; r < world_; ++r) out.add_(part(r));
    } else {
      torch::maximum_out(out, part(0), part(1));
      for (int r = 2; r < world_; ++r) torch::maximum_out(out, out, part(r));
    }
  };
  try {
    if (n_total * elem <= kSmallBytes) {
      const uint32_t seq = ++seq_;
      auto area = [&](int r) {
        return base + layout.small +
               ((seq % 2) * static_cast<size_t>(world_) + static_cast<size_t>(r)) * kSmallBytes;
      };
      std::memcpy(area(rank_), data, n_total * elem);
      arrive(0, seq);
      wait_for_all(0, seq, std::chrono::steady_clock::now() + timeout);
      if (n_total > 0) {
        reduce_into(t.view({-1}), [&](int r) {
          return torch::from_blob(area(r), {static_cast<int64_t>(n_total)}, options);
        });
      }
      return;
    }
    for (size_t off = 0; off < n_total; off += per_chunk) {
      const size_t n = std::min(per_chunk, n_total - off);
      const uint32_t seq = ++seq_;
      const auto deadline = std::chrono::steady_clock::now() + timeout;
      std::memcpy(base + layout.slots + static_cast<size_t>(rank_) * slot_bytes_, data + off * elem,
                  n * elem);
      arrive(0, seq);
      wait_for_all(0, seq, deadline);
      // My share, cache-line aligned: [lo, hi).
      const size_t share = round_up((n + static_cast<size_t>(world_) - 1) / static_cast<size_t>(world_), 16);
      const size_t lo = std::min(n, static_cast<size_t>(rank_) * share);
      const size_t hi = std::min(n, lo + share);
      if (hi > lo) {
        auto slot = [&](int r) {
          return torch::from_blob(base + layout.slots + static_cast<size_t>(r) * slot_bytes_ + lo * elem,
                                  {static_cast<int64_t>(hi - lo)}, options);
        };
        reduce_into(
            torch::from_blob(base + layout.result + lo * elem, {static_cast<int64_t>(hi - lo)}, options),
            slot);
      }
      arrive(1, seq);
      wait_for_all(1, seq, deadline);
      std::memcpy(data + off * elem, base + layout.result, n * elem);
    }
  } catch (...) {
    broken_ = true;
    throw;
  }
}

}  // namespace trainhook::distributed
