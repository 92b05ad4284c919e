// The training thread's cost of the prometheus plugin, through the C ABI as
// a host calls it (testkit): nanoseconds per step of STEP_BEGIN + STEP_END +
// a LOG of 6 numbers, alone and while another thread scrapes /metrics as fast
// as it can. Prints figures; never asserts on time (the machine is shared).
//
//   bench_prometheus_hooks [steps=200000]
#include <free_port.hpp>
#include <plugin_driver.hpp>

#include <trainhook/support/http_client.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

using Clock = std::chrono::steady_clock;

namespace {

// ns per step of `steps` steps (one LOG every step: the worst case, logging_steps 1).
double per_step_ns(testkit::Instance& cb, testkit::Run& run, int64_t steps) {
  testkit::Values logs({{"loss", 0.5},
                        {"learning_rate", 1e-3},
                        {"grad_norm", 1.25},
                        {"epoch", 0.1},
                        {"eval/acc", 0.5},
                        {"num_input_tokens_seen", 10}});
  const th_values* view = logs.view();
  const auto t0 = Clock::now();
  for (int64_t i = 0; i < steps; ++i) {
    cb.fire(TH_EVENT_STEP_BEGIN, run);
    ++run.state.global_step;
    cb.fire(TH_EVENT_STEP_END, run);
    cb.fire(TH_EVENT_LOG, run, view);
  }
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / static_cast<double>(steps);
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t steps = argc > 1 ? std::atoll(argv[1]) : 200000;
  try {
    testkit::Library lib(testkit::plugin_path("prometheus"));
    testkit::FakeHost host;
    host.echo_prefix = "prometheus";
    host.echo_min_level = TH_LOG_WARN;
    const int port = trainhook::testkit::free_port();
    testkit::Instance cb(lib.callback("prometheus"), host,
                         R"({"listen":"127.0.0.1:)" + std::to_string(port) + R"("})");
    testkit::Run run;
    run.state.train_batch_size = 32;
    cb.fire(TH_EVENT_TRAIN_BEGIN, run);
    per_step_ns(cb, run, steps / 10);  // warm-up: families registered, caches warm
    const double alone = per_step_ns(cb, run, steps);

    std::atomic<bool> stop{false};
    std::atomic<int64_t> scrapes{0};
    std::vector<double> latency_ms;
    std::thread scraper([&] {
      trainhook::support::HttpClient http;
      const auto request =
          trainhook::support::HttpRequest::get("http://127.0.0.1:" + std::to_string(port) + "/metrics");
      while (!stop) {
        const auto t0 = Clock::now();
        if (http.perform(request).ok()) {
          latency_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
          ++scrapes;
        }
      }
    });
    const double scraped = per_step_ns(cb, run, steps);
    stop = true;
    scraper.join();
    cb.fire(TH_EVENT_TRAIN_END, run);
    std::sort(latency_ms.begin(), latency_ms.end());
    std::printf("training thread per step (step begin + step end + a 6-number log): %.0f ns\n", alone);
    std::printf("the same while /metrics is scraped back to back: %.0f ns (%lld scrapes)\n", scraped,
                static_cast<long long>(scrapes.load()));
    if (!latency_ms.empty())
      std::printf("scrape latency back to back, beside the step loop: median %.3f ms, p99 %.3f ms\n",
                  latency_ms[latency_ms.size() / 2],
                  latency_ms[std::min(latency_ms.size() - 1, latency_ms.size() * 99 / 100)]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_prometheus_hooks: %s\n", e.what());
    return 1;
  }
  return 0;
}
