// Prints throughput and ratios; never asserts on time (the machine is shared).
//
//   bench_tensorboard [scalars=2000000] [steps=1500]
#include <trainhook/tensorboard/event_builder.hpp>
#include <trainhook/tensorboard/record_writer.hpp>
#include <trainhook/tensorboard/tensorboard_callback.hpp>

#include <plugin_driver.hpp>

#include <unistd.h>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using trainhook::tensorboard::TensorBoardCallback;

namespace {

double secs(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// CPU seconds used by the whole process / this thread: on a shared machine
// they show the cost that wall time hides behind other processes' load.
double cpu_secs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// The shared testkit's host (testkit/plugin_driver.hpp): output_dir and args,
// warnings and errors echoed to stderr.
void set_up(testkit::FakeHost& host, const fs::path& dir) {
  host.output_dir = dir.string();
  host.args_json = R"({"learning_rate": 0.001, "seed": 42})";
  host.echo_prefix = "tensorboard";
  host.echo_min_level = TH_LOG_WARN;
}

// One callback instance driven through the same C entry points a host uses
// (the testkit's Instance over the callback's th_callback_info); a failing
// call ends the benchmark.
class Driver {
 public:
  Driver(const th_callback_info& info, testkit::FakeHost& host, const char* config) try
      : instance_(info, host, config) {
  } catch (const testkit::CallError& e) {
    std::fprintf(stderr, "create: %s\n", e.what());
    std::exit(1);
  }
  void fire(int32_t event, const th_values* values = nullptr) {
    try {
      instance_.fire(event, run_, values);
    } catch (const testkit::CallError& e) {
      std::fprintf(stderr, "event %d: %s\n", event, e.what());
      std::exit(1);
    }
  }
  th_state& state() { return run_.state; }

 private:
  testkit::Instance instance_;
  testkit::Run run_;
};

// Stand-in for a training step's compute: ~`us` microseconds of arithmetic.
double busy_work(int us) {
  volatile double acc = 0;
  const auto end = Clock::now() + std::chrono::microseconds(us);
  while (Clock::now() < end)
    for (int i = 0; i < 200; ++i) acc = acc + std::sqrt(static_cast<double>(i) + acc);
  return acc;
}

}  // namespace

int main(int argc, char** argv) {
  const long total = argc > 1 ? std::atol(argv[1]) : 2000000;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 1500;
  const auto dir = fs::temp_directory_path() / ("bench_tensorboard_" + std::to_string(::getpid()));
  const th_callback_info info =
      trainhook::callback<TensorBoardCallback>("tensorboard", "1", trainhook::Kind::integration, "");
  fs::create_directories(dir);
  ::unsetenv("TENSORBOARD_LOGGING_DIR");

  const char* keys[] = {"loss",      "grad_norm",     "learning_rate", "epoch",
                        "eval_loss", "eval_accuracy", "eval_runtime",  "eval_samples_per_second"};
  const int per_log = 8;
  double values[per_log];

  // 1. Encoding alone: Event + Summary + framing with CRC32C, into memory.
  {
    std::string event, records;
    records.reserve(64 << 20);
    const auto t0 = Clock::now();
    const double c0 = cpu_secs(CLOCK_THREAD_CPUTIME_ID);
    long n = 0;
    for (long step = 0; n < total; ++step) {
      event.clear();
      trainhook::tensorboard::encode_summary_event(
          event, 1.7e9, step, [&](trainhook::tensorboard::ProtoWriter& s) {
            for (int k = 0; k < per_log; ++k)
              trainhook::tensorboard::write_scalar_value(s, "train/", keys[k],
                                                         static_cast<float>(step * 0.001 + k));
          });
      trainhook::tensorboard::append_record(records, event);
      n += per_log;
      if (records.size() > (60 << 20)) records.clear();
    }
    const double s = secs(t0, Clock::now());
    const double c = cpu_secs(CLOCK_THREAD_CPUTIME_ID) - c0;
    std::printf("encode+frame: %.2f M scalars/s wall, %.2f M per CPU second (%ld scalars)\n", n / s / 1e6,
                n / c / 1e6, n);
  }

  // 2. End to end: on_log on this thread, encoding and write(2) on the writer's.
  {
    testkit::FakeHost host;
    set_up(host, dir / "e2e");
    Driver d(info, host, R"({"queue_size": 1000000})");
    d.fire(TH_EVENT_TRAIN_BEGIN);
    th_values v{TH_VALUES_STRUCT_SIZE, per_log, keys, values, 0, nullptr, nullptr};
    const auto t0 = Clock::now();
    const double p0 = cpu_secs(CLOCK_PROCESS_CPUTIME_ID);
    const double c0 = cpu_secs(CLOCK_THREAD_CPUTIME_ID);
    long n = 0;
    for (long step = 1; n < total; ++step) {
      for (int k = 0; k < per_log; ++k) values[k] = step * 0.001 + k;
      d.state().global_step = step;
      d.fire(TH_EVENT_LOG, &v);
      n += per_log;
    }
    const double c1 = cpu_secs(CLOCK_THREAD_CPUTIME_ID);
    d.fire(TH_EVENT_TRAIN_END);  // drains the queue, writes, fsyncs, closes
    const auto t2 = Clock::now();
    const double p2 = cpu_secs(CLOCK_PROCESS_CPUTIME_ID);
    uintmax_t bytes = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir / "e2e"))
      if (e.is_regular_file()) bytes += e.file_size();
    std::printf(
        "end to end:   %.2f M scalars/s to disk wall, %.2f M per CPU second of both threads "
        "(target >= 1 M/s; %ld scalars, %.1f MB)\n",
        n / secs(t0, t2) / 1e6, n / (p2 - p0) / 1e6, n, bytes / 1e6);
    std::printf("on_log cost:  %.0f ns CPU per call of %d scalars on the training thread\n",
                (c1 - c0) / (n / per_log) * 1e9, per_log);
  }

  // 3. Step-time ratio: a simulated loop (~1 ms steps, HF logging every step
  //    with 4 scalars), with the callback vs without.
  {
    const int work_us = 1000;
    double in_log = 0;  // wall seconds the training thread spent inside on_log
    auto loop = [&](Driver* d) {
      th_values v{TH_VALUES_STRUCT_SIZE, 4, keys, values, 0, nullptr, nullptr};
      if (d) d->fire(TH_EVENT_TRAIN_BEGIN);
      const auto t0 = Clock::now();
      for (int step = 1; step <= steps; ++step) {
        values[0] = busy_work(work_us);
        if (d) {
          d->state().global_step = step;
          const auto l0 = Clock::now();
          d->fire(TH_EVENT_LOG, &v);
          in_log += secs(l0, Clock::now());
        }
      }
      const double s = secs(t0, Clock::now());
      if (d) d->fire(TH_EVENT_TRAIN_END);
      return s;
    };
    testkit::FakeHost host;
    set_up(host, dir / "ratio");
    double off = 0, on = 0;
    for (int round = 0; round < 3; ++round) {  // interleaved, to spread machine noise
      off += loop(nullptr);
      Driver d(info, host, "{}");
      on += loop(&d);
    }
    std::printf(
        "step time:    on/off = %.4f measured (target <= 1.01; %d steps of ~%d us, 3 rounds each); "
        "on_log itself takes %.4f%% of the step time\n",
        on / off, steps, work_us, 100.0 * in_log / off);
  }
  fs::remove_all(dir);
  return 0;
}
