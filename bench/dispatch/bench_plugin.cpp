// Four identical callbacks (bench_0..bench_3) that count on_step_end events:
// the smallest real work, so bench_dispatch measures the dispatch path. And
// bench_observer, which counts on_step_end and on_log and declares both
// observe-only (ABI 1.6), for bench_isolation's events without a round trip.
#include <trainhook/plugin.hpp>

namespace {
class Counter final : public trainhook::Callback {
 public:
  explicit Counter(trainhook::Setup&) {}
  void on_step_end(trainhook::Event& e) override { count_ += e.state().global_step & 1; }

 private:
  int64_t count_ = 0;
};

class Observer final : public trainhook::Callback {
 public:
  static constexpr uint64_t observed_events = TH_EVENT_BIT(TH_EVENT_STEP_END) | TH_EVENT_BIT(TH_EVENT_LOG);
  explicit Observer(trainhook::Setup&) {}
  void on_step_end(trainhook::Event& e) override { count_ += e.state().global_step & 1; }
  void on_log(trainhook::Event& e) override { count_ += e.values().size(); }

 private:
  int64_t count_ = 0;
};
}  // namespace

TRAINHOOK_PLUGIN("bench_dispatch", "1.0.0",
                 trainhook::callback<Counter>("bench_0", "1.0.0", trainhook::Kind::callback, "counts"),
                 trainhook::callback<Counter>("bench_1", "1.0.0", trainhook::Kind::callback, "counts"),
                 trainhook::callback<Counter>("bench_2", "1.0.0", trainhook::Kind::callback, "counts"),
                 trainhook::callback<Counter>("bench_3", "1.0.0", trainhook::Kind::callback, "counts"),
                 trainhook::callback<Observer>("bench_observer", "1.0.0", trainhook::Kind::callback,
                                               "counts, observing only"))
