// The one file that talks to c10d (TCPStore, PrefixStore, ProcessGroupGloo,
// ProcessGroupNCCL). Calls used here exist with the same signatures in LibTorch
// 1.13 and 2.x: the constructors of TCPStore(host, TCPStoreOptions), PrefixStore
// and ProcessGroupGloo(store, rank, size, Options), and allreduce/broadcast/
// barrier returning a Work to wait() on. Debian's libtorch-dev builds c10d with
// Gloo (libgloo-dev) but its headers guard ProcessGroupGloo behind USE_C10D_GLOO.
//
// --ddp_backend nccl (a CUDA LibTorch linked whole, -DTRAINHOOK_TORCH_CUDA=ON,
// whose `torch` target defines USE_C10D_NCCL): CUDA tensors (gradient buckets,
// parameters) go to NCCL, CPU tensors (flags, losses, RNG states, gathered
// predictions) to Gloo, as PyTorch's "cpu:gloo,cuda:nccl" group does.
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO
#endif

#include <trainhook/distributed/process_group.hpp>

#include <trainhook/distributed/agent_store_client.hpp>
#include <trainhook/distributed/shared_memory_all_reduce.hpp>

#include <spdlog/spdlog.h>
#include <torch/version.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef USE_C10D_NCCL
#include <torch/cuda.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <random>
#include <thread>

namespace trainhook::distributed {

namespace {

// One thread that runs shared-memory all-reduces in the order they were
// started, so backward goes on while a gradient bucket is reduced (DDP's
// reducer runs its buckets on Gloo's threads the same way). Collectives are
// started from one thread at a time (the training loop's), as c10d requires.
class CommThread {
 public:
  using Job = std::function<void()>;
  ~CommThread() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  std::shared_future<void> submit(Job job) {
    std::packaged_task<void()> task(std::move(job));
    auto done = task.get_future().share();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
      jobs_.push_back(std::move(task));
      ++unfinished_;
    }
    wake_.notify_one();
    return done;
  }
  // Whether every job submitted has finished (then the caller may run one itself).
  bool idle() {
    std::lock_guard<std::mutex> lock(mutex_);
    return unfinished_ == 0;
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      auto task = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      task();  // its exception goes to its future
      lock.lock();
      --unfinished_;
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::packaged_task<void()>> jobs_;
  size_t unfinished_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace

struct ProcessGroup::Impl {
  int rank = 0;
  int size = 1;
  std::chrono::seconds timeout{1800};
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo;
#ifdef USE_C10D_NCCL
  c10::intrusive_ptr<c10d::ProcessGroupNCCL> nccl;  // --ddp_backend nccl only
#endif
  // Every rank on this machine: CPU all-reduces go through shared memory
  // (shared_memory_all_reduce.hpp), the other collectives through Gloo.
  std::unique_ptr<SharedMemoryAllReduce> shm;
  std::unique_ptr<CommThread> comm;  // runs the shared-memory all-reduces started without waiting
  ~Impl() {
    // A bucket still in flight (the loop ended by an exception) gives up
    // rather than wait for a peer that may never come.
    if (shm) shm->abort();
    comm.reset();
  }

  // Whether an all-reduce of `tensors` goes through shared memory.
  bool through_shm(const std::vector<torch::Tensor>& tensors) const {
    if (!shm || tensors.size() != 1) return false;
    const auto& t = tensors.front();
    return t.device().is_cpu() && t.is_contiguous() && !t.is_complex() && t.scalar_type() != torch::kBool;
  }
  std::chrono::milliseconds op_timeout() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(timeout);
  }
  // A blocking shared-memory all-reduce, after those started before it (the
  // order of collectives is the same on every rank).
  void shm_all_reduce(const torch::Tensor& t, SharedMemoryAllReduce::Op op, const char* what);

  // The backend of a collective on `tensors`: NCCL for CUDA tensors when there is one.
  template <typename Call>
  c10::intrusive_ptr<c10d::Work> on_backend_of(const std::vector<torch::Tensor>& tensors, Call&& call) {
#ifdef USE_C10D_NCCL
    if (nccl && !tensors.empty() && tensors.front().is_cuda()) return call(*nccl);
#endif
    (void)tensors;
    return call(*gloo);
  }

  [[noreturn]] void fail(const char* op, const char* what, const std::string& cause) const {
    // With two ranks the peer is known; with more, Gloo names only its address.
    const std::string who = size == 2 ? "rank " + std::to_string(1 - rank) + " (the only other rank)"
                                      : "another rank (the launcher's or its own error names it)";
    throw CollectiveError("rank " + std::to_string(rank) + " of " + std::to_string(size) + ": " + op + " (" +
                          what + ") failed: " + cause + " -- " + who +
                          " has most likely exited or been killed, or the network between ranks failed; "
                          "ddp_timeout is " +
                          std::to_string(timeout.count()) + "s");
  }

  template <typename F>
  void run(const char* op, const char* what, F&& start) {
    try {
      auto work = start();
      work->wait();
    } catch (const c10::Error& e) {
      fail(op, what, e.what_without_backtrace());
    } catch (const std::exception& e) {
      fail(op, what, e.what());
    }
  }
};

namespace {

// LibTorch 2.x speaks the TCPStore protocol of torchrun's 2.x agent; 1.13 does not.
constexpr bool kClientOfAgentStore = TORCH_VERSION_MAJOR >= 2;

// Where the ranks meet (the c10d store every rank is a client of).
enum class StoreMode {
  own,        // rank 0 serves it on MASTER_PORT (trainhook launch, Slurm) or TRAINHOOK_STORE_PORT
  agent,      // torchrun's agent store on MASTER_PORT (a LibTorch 2.x build under torchrun)
  published,  // rank 0 serves it on a port the kernel chooses and publishes its address
              // in torchrun's agent store (a 1.13 build under torchrun: nothing to collide with)
};

// torchrun's store outlives a restart of the workers: each attempt has its own keys.
std::string attempt_prefix() {
  const char* attempt = std::getenv("TORCHELASTIC_RESTART_COUNT");
  return std::string("trainhook/attempt_") + (attempt && *attempt ? attempt : "0");
}

// The local address that routes to `host`: Gloo must listen on an address the
// other ranks can reach, which is the one this machine uses towards rank 0's
// store (a connected UDP socket sends nothing; it only picks the route).
std::string local_address_towards(const std::string& host, uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) != 0 || !res) {
    throw CollectiveError("MASTER_ADDR '" + host + "' does not resolve to an IPv4 address");
  }
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  std::string out;
  if (fd >= 0 && ::connect(fd, res->ai_addr, res->ai_addrlen) == 0) {
    sockaddr_in local{};
    socklen_t len = sizeof(local);
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0) {
      char buf[INET_ADDRSTRLEN] = {};
      if (inet_ntop(AF_INET, &local.sin_addr, buf, sizeof(buf))) out = buf;
    }
  }
  if (fd >= 0) ::close(fd);
  freeaddrinfo(res);
  if (out.empty()) throw CollectiveError("no network route from this machine to MASTER_ADDR '" + host + "'");
  return out;
}

std::string boot_id() {
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(f, id);
  return id;
}

std::string to_text(const std::vector<uint8_t>& bytes) { return std::string(bytes.begin(), bytes.end()); }

// Shared memory for the all-reduces when every rank runs on this machine (the
// launcher says so: LOCAL_WORLD_SIZE == WORLD_SIZE; the kernel's boot id
// confirms it) and TRAINHOOK_DDP_SHM is not 0. Rank 0 makes the segment and
// publishes its name in the store; every rank attaches; one Gloo all-reduce
// tells whether all did (else all keep Gloo); then the name is removed, so
// nothing is left in /dev/shm whatever happens to the processes later.
std::unique_ptr<SharedMemoryAllReduce> join_shared_memory(ProcessGroup::Impl& g, const LaunchEnv& env,
                                                          DdpBackend backend, std::string& why) {
  const char* opt = std::getenv("TRAINHOOK_DDP_SHM");
  bool wanted = backend == DdpBackend::gloo && env.local_world_size == env.world_size;
  if (!wanted) why = "the ranks are on more than one machine (LOCAL_WORLD_SIZE < WORLD_SIZE)";
  if (opt && std::string(opt) == "0") {
    wanted = false;
    why = "TRAINHOOK_DDP_SHM=0";
  }
  if (backend != DdpBackend::gloo) why = "--ddp_backend is not gloo";
  // About 32 MB in all, at most 8 MB a slot (DDP's gradient buckets go in one or a few chunks).
  const size_t slot =
      std::clamp<size_t>((32u << 20) / static_cast<size_t>(env.world_size + 1), 1u << 20, 8u << 20);
  std::unique_ptr<SharedMemoryAllReduce> shm;
  const std::string key = "shared_memory_all_reduce";
  if (env.rank == 0) {
    std::string name;
    if (wanted) {
      std::random_device rd;
      name = "/trainhook-" + std::to_string(::getpid()) + "-" + std::to_string(rd()) + std::to_string(rd());
      shm = SharedMemoryAllReduce::create(name, env.world_size, slot, why);
      if (!shm) name.clear();
    }
    const std::string text = name + "\n" + boot_id();
    g.store->set(key, std::vector<uint8_t>(text.begin(), text.end()));
  } else {
    const std::string text = to_text(g.store->get(key));
    const auto nl = text.find('\n');
    const std::string name = text.substr(0, nl);
    const std::string boot = nl == std::string::npos ? "" : text.substr(nl + 1);
    if (wanted && name.empty()) {
      why = "rank 0 could not make the shared-memory segment";
    } else if (wanted && boot != boot_id()) {
      why = "rank 0 runs on another machine (another kernel boot id)";
    } else if (wanted) {
      shm = SharedMemoryAllReduce::attach(name, env.rank, env.world_size, why);
    }
  }
  auto failed = torch::tensor({shm ? 0 : 1}, torch::kInt);
  std::vector<torch::Tensor> t{failed};
  g.run("all_reduce", "shared-memory setup", [&] {
    c10d::AllreduceOptions o;
    o.reduceOp = c10d::ReduceOp::MAX;
    return g.gloo->allreduce(t, o);
  });
  if (shm) shm->unlink();
  if (failed.item<int>() != 0) {
    if (shm && why.empty()) why = "another rank could not attach to the shared-memory segment";
    shm.reset();
  }
  return shm;
}

}  // namespace

ProcessGroup::ProcessGroup(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ProcessGroup::~ProcessGroup() = default;

std::shared_ptr<ProcessGroup> ProcessGroup::create(const LaunchEnv& env, DdpBackend backend,
                                                   std::chrono::seconds timeout) {
  if (backend == DdpBackend::nccl) {
#ifdef USE_C10D_NCCL
    if (!torch::cuda::is_available()) {
      throw CollectiveError(
          "--ddp_backend nccl needs CUDA GPUs, and this machine has none visible to LibTorch; "
          "use --ddp_backend gloo");
    }
#else
    throw CollectiveError(
        "--ddp_backend nccl: this trainhook was built without NCCL (Debian's LibTorch 1.13, or a CUDA "
        "LibTorch "
        "linked CPU-only); build against a CUDA LibTorch with -DTRAINHOOK_TORCH_CUDA=ON, or use "
        "--ddp_backend gloo");
#endif
  }
  if (env.world_size < 2) throw CollectiveError("a process group needs WORLD_SIZE >= 2");
  auto impl = std::make_unique<Impl>();
  impl->rank = env.rank;
  impl->size = env.world_size;
  impl->timeout = timeout;
  // Under torchrun (TORCHELASTIC_USE_AGENT_STORE) its agent serves a store on
  // MASTER_PORT in the wire protocol of torchrun's PyTorch. Built on LibTorch 2.x,
  // every rank joins it as a client, as PyTorch's own workers do. A 1.13 client
  // cannot talk to a 2.x store, so there rank 0 serves trainhook's own store on
  // a port the kernel picks (so no other process can hold it) and publishes its
  // address in the agent store through a small client of that protocol
  // (agent_store_client.hpp); the other ranks read it there. TRAINHOOK_STORE_PORT:
  // trainhook's own store on that port, whatever the launcher.
  int port = env.master_port;
  StoreMode mode = !env.agent_store      ? StoreMode::own
                   : kClientOfAgentStore ? StoreMode::agent
                                         : StoreMode::published;
  if (const char* p = std::getenv("TRAINHOOK_STORE_PORT"); p && *p) {
    char* end = nullptr;
    const long v = std::strtol(p, &end, 10);
    if (*end != '\0' || v < 1 || v > 65535)
      throw CollectiveError(std::string("TRAINHOOK_STORE_PORT='") + p + "': expected a port in [1, 65535]");
    port = static_cast<int>(v);
    mode = StoreMode::own;
  }
  const std::string who = "rank " + std::to_string(env.rank) + " of " + std::to_string(env.world_size);
  std::string host = env.master_addr;
  const std::string prefix = attempt_prefix();
  // Not per attempt: the agents of one job may count a restart differently
  // (torchrun does not count one that another agent's rejoining caused), so
  // TORCHELASTIC_RESTART_COUNT is not the same on every rank. Each attempt's
  // rank 0 writes it anew; an earlier attempt's value names a store that is gone
  // (torchrun stops every worker before the next rendezvous), so a rank that
  // finds it refused reads the key again until the new one is there.
  const std::string address_key = "trainhook/store_address";
  const auto ms_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(timeout);
  // The agent store, as MASTER_ADDR:MASTER_PORT names it in errors.
  const std::string agent_what = "torchrun's store, MASTER_ADDR:MASTER_PORT";
  std::unique_ptr<AgentStoreClient> agent;
  bool agent_of_1x = false;  // torchrun's store is not a 2.x one: a torchrun of our own generation
  if (mode == StoreMode::published) {
    try {
      agent = std::make_unique<AgentStoreClient>(env.master_addr, env.master_port, ms_timeout, agent_what);
    } catch (const NotA2xStore& e) {
      // Debian's torchrun 1.13 serves a 1.13 store: our own c10d client joins it (every rank sees the same).
      spdlog::debug(
          "torchrun's store does not speak PyTorch 2.x's protocol ({}); joining it as a 1.13 client",
          e.what());
      mode = StoreMode::agent;
      agent_of_1x = true;
    } catch (const std::exception& e) {
      throw CollectiveError(who + ": " + e.what());
    }
  }
  if (mode == StoreMode::published && env.rank != 0) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    bool said_stale = false;
    for (;;) {
      std::string text;
      try {
        text = agent->wait_get(address_key);
      } catch (const std::exception& e) {
        throw CollectiveError(who + ": rank 0's store address (key '" + address_key +
                              "') did not come from torchrun's store within ddp_timeout " +
                              std::to_string(timeout.count()) + "s: " + e.what());
      }
      std::string problem;
      const auto address = agent_store::parse_store_address(text, problem);
      if (!address) {
        throw CollectiveError(who + ": torchrun's store at " + env.master_addr + ":" +
                              std::to_string(env.master_port) + " holds '" + text.substr(0, 80) +
                              "' under key '" + address_key +
                              "' (expected rank 0's store address, host:port: " + problem + ")");
      }
      host = address->host;
      port = address->port;
      // Each try bounded: an earlier rank 0's machine may be gone (no refusal, only silence).
      const auto try_until = std::min(deadline, std::chrono::steady_clock::now() + std::chrono::seconds(2));
      if (accepts_connections(host, address->port, try_until, problem)) break;
      if (std::chrono::steady_clock::now() >= deadline) {
        throw CollectiveError(who + ": rank 0's store at " + text +
                              " (as published in torchrun's store under key '" + address_key +
                              "') refused connections for ddp_timeout " + std::to_string(timeout.count()) +
                              "s (" + problem + "): expected this attempt's rank 0 to serve it");
      }
      if (!said_stale) {
        spdlog::warn(
            "{}: torchrun's store names {} as rank 0's store, which refuses connections ({}): an earlier "
            "attempt's; waiting for this attempt's rank 0 to publish its own",
            who, text, problem);
        said_stale = true;
      }
      std::this_thread::sleep_for(
          std::chrono::milliseconds(50));  // an earlier attempt's address: read it again
    }
  }
  if (mode == StoreMode::published && env.rank == 0) {
    host = local_address_towards(env.master_addr, env.master_port);  // the address the other ranks can reach
    port = 0;                                                        // the kernel chooses
  }
  auto where = agent_store::format_store_address(host, static_cast<uint16_t>(port));
  const bool serves = mode != StoreMode::agent && env.rank == 0;
  // PyTorch's Python binding reads GLOO_SOCKET_IFNAME, not ProcessGroupGloo: as
  // there, a list gives one device per interface (Gloo spreads pairs over them).
  std::vector<std::string> interfaces;
  try {
    interfaces = gloo_socket_interfaces();
  } catch (const std::exception& e) {
    throw CollectiveError(who + ": " + e.what());
  }
  try {
    c10d::TCPStoreOptions so;
    so.port = static_cast<uint16_t>(port);
    so.isServer = serves;
    so.numWorkers = env.world_size;
    so.waitWorkers = false;
    so.timeout = ms_timeout;
    auto tcp = c10::make_intrusive<c10d::TCPStore>(host, so);
    where = agent_store::format_store_address(host, tcp->getPort());
    // trainhook's own store is new each attempt: no attempt in its keys (the ranks may count them
    // differently).
    impl->store = c10::make_intrusive<c10d::PrefixStore>(
        (mode == StoreMode::agent ? prefix : std::string("trainhook")) + "/default_pg", tcp);
  } catch (const std::exception& e) {
    throw CollectiveError(who + ": the rendezvous store at " + where +
                          (mode == StoreMode::agent       ? " (torchrun's store, MASTER_ADDR:MASTER_PORT)"
                           : mode == StoreMode::published ? (serves ? " (a port the kernel chooses)"
                                                                    : " (rank 0's, as published in "
                                                                      "torchrun's store)")
                           : std::getenv("TRAINHOOK_STORE_PORT") ? " (MASTER_ADDR:TRAINHOOK_STORE_PORT)"
                                                                 : " (MASTER_ADDR:MASTER_PORT)") +
                          (serves ? " could not be served" : " could not be reached") +
                          " within ddp_timeout " + std::to_string(timeout.count()) + "s: " + e.what());
  }
  if (mode == StoreMode::published && env.rank == 0) {
    try {
      agent->set(address_key, where);
    } catch (const std::exception& e) {
      throw CollectiveError(who + ": could not publish its store's address " + where +
                            " in torchrun's store: " + e.what());
    }
  }
  try {
    auto options = c10d::ProcessGroupGloo::Options::create(
        std::chrono::duration_cast<std::chrono::milliseconds>(timeout));
    for (const auto& name : interfaces)
      options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(name));
    if (interfaces.empty()) {
      options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(
          local_address_towards(env.master_addr, env.master_port)));
    }
    options->threads = 2;
    impl->gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(impl->store, env.rank, env.world_size, options);
#ifdef USE_C10D_NCCL
    if (backend == DdpBackend::nccl) {
      auto nccl_options = c10d::ProcessGroupNCCL::Options::create();
      nccl_options->timeout = std::chrono::duration_cast<std::chrono::milliseconds>(timeout);
      impl->nccl = c10::make_intrusive<c10d::ProcessGroupNCCL>(
          c10::make_intrusive<c10d::PrefixStore>("nccl", impl->store), env.rank, env.world_size,
          nccl_options);
    }
#endif
  } catch (const CollectiveError&) {
    throw;
  } catch (const std::exception& e) {
    throw CollectiveError(who + ": the rendezvous at " + where + " did not complete within ddp_timeout " +
                          std::to_string(timeout.count()) + "s (are all " + std::to_string(env.world_size) +
                          " ranks started with the same MASTER_ADDR/MASTER_PORT?): " + e.what());
  }
  auto group = std::shared_ptr<ProcessGroup>(new ProcessGroup(std::move(impl)));
  // Every rank is connected once a first collective completes.
  group->barrier("rendezvous");
  std::string no_shm;
  group->impl_->shm = join_shared_memory(*group->impl_, env, backend, no_shm);
  if (group->impl_->shm) group->impl_->comm = std::make_unique<CommThread>();
  if (env.rank == 0) {
    spdlog::info("data parallel: {} ranks over {}{}{} at {}", env.world_size,
                 backend == DdpBackend::nccl ? "NCCL (CUDA tensors) and Gloo" : "Gloo",
                 group->impl_->shm ? ", all-reduces through shared memory"
                                   : ", all-reduces through Gloo (" + no_shm + ")",
                 agent_of_1x ? ", rendezvous in torchrun's store (a LibTorch 1.x one, joined as it is)"
                 : mode == StoreMode::agent     ? ", rendezvous in torchrun's store"
                 : mode == StoreMode::published ? ", rendezvous in trainhook's store (its port published in "
                                                  "torchrun's store)"
                                                : ", rendezvous in trainhook's store",
                 where);
  }
  return group;
}

int ProcessGroup::rank() const noexcept { return impl_->rank; }
int ProcessGroup::size() const noexcept { return impl_->size; }
bool ProcessGroup::all_reduces_in_shared_memory() const noexcept { return impl_->shm != nullptr; }

void ProcessGroup::Impl::shm_all_reduce(const torch::Tensor& t, SharedMemoryAllReduce::Op op,
                                        const char* what) {
  try {
    if (comm->idle()) {
      shm->all_reduce(t, op, op_timeout());
    } else {
      comm->submit([this, t, op] { shm->all_reduce(t, op, op_timeout()); }).get();
    }
  } catch (const std::exception& e) {
    fail("all_reduce", what, e.what());
  }
}

void ProcessGroup::all_reduce_sum(std::vector<torch::Tensor>& tensors, const char* what) {
  if (impl_->through_shm(tensors))
    return impl_->shm_all_reduce(tensors[0], SharedMemoryAllReduce::Op::sum, what);
  impl_->run("all_reduce", what, [&] {
    c10d::AllreduceOptions o;
    o.reduceOp = c10d::ReduceOp::SUM;
    return impl_->on_backend_of(tensors, [&](auto& backend) { return backend.allreduce(tensors, o); });
  });
}

struct ProcessGroup::Pending::Impl {
  ProcessGroup::Impl* group = nullptr;
  c10::intrusive_ptr<c10d::Work> work;  // through Gloo (or NCCL)
  std::shared_future<void> done;        // or through shared memory, on the group's CommThread
  const char* what = "";
};

ProcessGroup::Pending::Pending() = default;
ProcessGroup::Pending::~Pending() = default;
ProcessGroup::Pending::Pending(Pending&&) noexcept = default;
ProcessGroup::Pending& ProcessGroup::Pending::operator=(Pending&&) noexcept = default;

void ProcessGroup::Pending::wait() {
  if (impl_ && impl_->done.valid()) {
    auto done = std::move(impl_->done);
    try {
      done.get();
    } catch (const std::exception& e) {
      impl_->group->fail("all_reduce", impl_->what, e.what());
    }
    return;
  }
  if (!impl_ || !impl_->work) return;
  auto work = std::move(impl_->work);
  impl_->group->run("all_reduce", impl_->what, [&] { return work; });
}

ProcessGroup::Pending ProcessGroup::start_all_reduce_sum(torch::Tensor flat, const char* what) {
  Pending p;
  p.impl_ = std::make_unique<Pending::Impl>();
  p.impl_->group = impl_.get();
  p.impl_->what = what;
  if (impl_->through_shm({flat})) {
    auto* g = impl_.get();
    p.impl_->done = g->comm->submit(
        [g, flat] { g->shm->all_reduce(flat, SharedMemoryAllReduce::Op::sum, g->op_timeout()); });
    return p;
  }
  try {
    std::vector<torch::Tensor> one{std::move(flat)};
    c10d::AllreduceOptions o;
    o.reduceOp = c10d::ReduceOp::SUM;
    p.impl_->work = impl_->on_backend_of(one, [&](auto& backend) { return backend.allreduce(one, o); });
  } catch (const c10::Error& e) {
    impl_->fail("all_reduce", what, e.what_without_backtrace());
  } catch (const std::exception& e) {
    impl_->fail("all_reduce", what, e.what());
  }
  return p;
}

void ProcessGroup::all_reduce_max(std::vector<torch::Tensor>& tensors, const char* what) {
  if (impl_->through_shm(tensors))
    return impl_->shm_all_reduce(tensors[0], SharedMemoryAllReduce::Op::max, what);
  impl_->run("all_reduce", what, [&] {
    c10d::AllreduceOptions o;
    o.reduceOp = c10d::ReduceOp::MAX;
    return impl_->on_backend_of(tensors, [&](auto& backend) { return backend.allreduce(tensors, o); });
  });
}

void ProcessGroup::broadcast(std::vector<torch::Tensor>& tensors, int root, const char* what) {
  impl_->run("broadcast", what, [&] {
    c10d::BroadcastOptions o;
    o.rootRank = root;
    return impl_->on_backend_of(tensors, [&](auto& backend) { return backend.broadcast(tensors, o); });
  });
}

void ProcessGroup::barrier(const char* what) {
  impl_->run("barrier", what, [&] { return impl_->gloo->barrier(); });
}

torch::Tensor ProcessGroup::gather_rows(const torch::Tensor& local, const char* what) {
  // Row counts first, then every rank's rows in its slot of a zero buffer
  // summed over ranks (x + 0 is exact, so values arrive unchanged).
  auto counts = torch::zeros({impl_->size}, torch::kLong);
  counts[impl_->rank] = local.size(0);
  std::vector<torch::Tensor> c{counts};
  all_reduce_sum(c, what);
  const auto n = counts.accessor<int64_t, 1>();
  int64_t most = 0;
  for (int r = 0; r < impl_->size; ++r) most = std::max(most, n[r]);
  auto shape = local.sizes().vec();
  shape[0] = most;
  shape.insert(shape.begin(), impl_->size);
  auto buffer = torch::zeros(shape, local.options());
  if (local.size(0) > 0) buffer[impl_->rank].narrow(0, 0, local.size(0)).copy_(local);
  std::vector<torch::Tensor> b{buffer};
  all_reduce_sum(b, what);
  std::vector<torch::Tensor> parts;
  for (int r = 0; r < impl_->size; ++r) parts.push_back(buffer[r].narrow(0, 0, n[r]));
  return torch::cat(parts);
}

void broadcast_from_rank0(ProcessGroup& group, const std::vector<torch::Tensor>& tensors) {
  torch::NoGradGuard no_grad;
  for (const auto& t : tensors) {
    std::vector<torch::Tensor> one{t.detach()};
    if (!one[0].is_contiguous()) {
      auto c = one[0].contiguous();
      std::vector<torch::Tensor> tmp{c};
      group.broadcast(tmp, 0, "parameters");
      one[0].copy_(c);
    } else {
      group.broadcast(one, 0, "parameters");
    }
  }
}

}  // namespace trainhook::distributed
