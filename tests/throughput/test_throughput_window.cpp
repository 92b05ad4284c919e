// The throughput arithmetic (LibTorch-free): Composer's names over the last
// window_size steps, the per-device shares, MFU, and what is left out.
#include <trainhook/throughput/throughput_callback.hpp>
#include <trainhook/throughput/throughput_options.hpp>
#include <trainhook/throughput/throughput_window.hpp>

#include <trainhook/plugin.hpp>

#include <doctest/doctest.h>

#include <map>
#include <string>

using namespace trainhook::throughput;

namespace {

std::map<std::string, double> as_map(const std::vector<std::pair<std::string, double>>& v) {
  return {v.begin(), v.end()};
}

}  // namespace

TEST_CASE("nothing until window_size steps are in the window") {
  ThroughputWindow w(3);
  w.add({0, 0, 0, 0});
  w.add({1, 8, 0, 0});
  w.add({2, 16, 0, 0});
  CHECK_FALSE(w.full());
  CHECK(w.metrics({}).empty());
  w.add({3, 24, 0, 0});
  CHECK(w.full());
  CHECK_FALSE(w.metrics({}).empty());
}

TEST_CASE("rates over the window only") {
  ThroughputWindow w(2);
  // A slow first step falls out of the window.
  w.add({0, 0, 0, 0});
  w.add({10, 32, 320, 1000});
  w.add({11, 64, 640, 2000});
  w.add({13, 96, 960, 3000});  // window: steps 2 and 3, 3 s, 64 samples
  WindowSettings s;
  s.world_size = 2;
  s.peak_flops = 250.0;
  const auto m = as_map(w.metrics(s));
  CHECK(m.at("throughput/batches_per_sec") == doctest::Approx(2.0 / 3.0));
  CHECK(m.at("throughput/samples_per_sec") == doctest::Approx(64.0 / 3.0));
  CHECK(m.at("throughput/tokens_per_sec") == doctest::Approx(640.0 / 3.0));
  CHECK(m.at("throughput/flops_per_sec") == doctest::Approx(2000.0 / 3.0));
  CHECK(m.at("throughput/device/batches_per_sec") == doctest::Approx(1.0 / 3.0));
  CHECK(m.at("throughput/device/samples_per_sec") == doctest::Approx(32.0 / 3.0));
  CHECK(m.at("throughput/device/tokens_per_sec") == doctest::Approx(320.0 / 3.0));
  CHECK(m.at("throughput/device/flops_per_sec") == doctest::Approx(1000.0 / 3.0));
  CHECK(m.at("throughput/device/mfu") == doctest::Approx(1000.0 / 3.0 / 250.0));
  CHECK(m.size() == 9);
}

TEST_CASE("tokens and FLOPs that were not counted are left out and so is mfu without a peak") {
  ThroughputWindow w(1);
  w.add({0, 0, 0, 0});
  w.add({0.5, 4, 0, 0});
  const auto m = as_map(w.metrics({}));
  CHECK(m.count("throughput/tokens_per_sec") == 0);
  CHECK(m.count("throughput/flops_per_sec") == 0);
  CHECK(m.count("throughput/device/mfu") == 0);
  CHECK(m.at("throughput/samples_per_sec") == doctest::Approx(8.0));
}

TEST_CASE("no time in the window gives nothing rather than infinities") {
  ThroughputWindow w(1);
  w.add({2, 0, 0, 0});
  w.add({2, 4, 0, 0});
  CHECK(w.metrics({}).empty());
}

TEST_CASE("throughput options and their errors") {
  const ThroughputOptions d = ThroughputOptions::from_json("{}");
  CHECK(d.window_size() == 100);
  CHECK_FALSE(d.peak_flops().has_value());
  const ThroughputOptions o =
      ThroughputOptions::from_json(R"({"window_size": "5", "peak_flops": 3.12e14, "flops_per_sample": 600})");
  CHECK(o.window_size() == 5);
  CHECK(*o.peak_flops() == 3.12e14);
  CHECK(*o.flops_per_sample() == 600.0);
  CHECK_THROWS_WITH_AS(ThroughputOptions::from_json(R"({"window_size": 0})"),
                       doctest::Contains("plugin_config throughput.window_size"), trainhook::ConfigError);
  CHECK_THROWS_WITH_AS(ThroughputOptions::from_json(R"({"peak_flops": -1})"),
                       doctest::Contains("plugin_config throughput.peak_flops"), trainhook::ConfigError);
  CHECK_THROWS_WITH_AS(ThroughputOptions::from_json(R"({"window": 5})"), doctest::Contains("unknown key"),
                       trainhook::ConfigError);
}
