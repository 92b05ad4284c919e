// train() ending by an error (train_failure.cpp, run_failure.cpp): on_exception
// fires once on every callback that asks for it, with the kind read from the
// error, its message and global_step; on_train_end does not follow; the
// error reaches the caller unchanged; a callback failing in on_exception is
// logged and the others still hear it.
#include "trainer_test_support.hpp"

#include <trainhook/common/errors.hpp>

#include <doctest/doctest.h>

#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

using namespace trainhook;
using namespace trainhook::test;

namespace {

struct Heard {
  std::vector<std::string> events;  // on_exception and on_train_end, in order
  int32_t kind = -1;
  std::string message;
  int64_t step = -1;
  int64_t state_step = -1;
};

// Hears on_exception and on_train_end; fails its step end at `fail_at`, or
// its on_exception when `throw_in_exception`.
class FailureProbe final : public trainhook::Callback {
 public:
  FailureProbe(Heard* heard, int64_t fail_at = -1, bool throw_in_exception = false)
      : heard_(heard), fail_at_(fail_at), throw_in_exception_(throw_in_exception) {}
  void on_step_end(Event& e) override {
    if (e.state().global_step == fail_at_) throw std::runtime_error("probe failed at its step end");
  }
  void on_train_end(Event&) override { heard_->events.push_back("on_train_end"); }
  void on_exception(Event& e) override {
    heard_->events.push_back("on_exception");
    const th_failure* f = e.failure();
    REQUIRE(f != nullptr);
    heard_->kind = f->kind;
    heard_->message = f->message;
    heard_->step = f->step;
    heard_->state_step = e.state().global_step;
    if (throw_in_exception_) throw std::runtime_error("the probe's own on_exception failed");
  }

 private:
  Heard* heard_;
  int64_t fail_at_;
  bool throw_in_exception_;
};

// A classifier whose loss throws what `fail` throws at its `at`-th call (1-based).
template <class Fail>
std::shared_ptr<Model> failing_model(int at, Fail fail) {
  torch::manual_seed(3);
  torch::nn::Sequential net(torch::nn::Linear(4, 8), torch::nn::ReLU(), torch::nn::Linear(8, 3));
  auto calls = std::make_shared<int>(0);
  return make_model(net, [calls, at, fail](const torch::Tensor& out, const torch::Tensor& labels) {
    if (++*calls == at) fail();
    return torch::nn::functional::cross_entropy(out, labels);
  });
}

TrainingArguments failure_args(const TempDir& dir) {
  auto args = small_args(dir.path.string());
  args.max_steps = 10;
  return args;
}

std::string error_of(Trainer& trainer) {
  try {
    trainer.train();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("an error from the loss at step 4 fires on_exception once with kind error and no on_train_end") {
  TempDir dir("trainhook-failure-error");
  Heard heard;
  std::vector<NamedCallback> cbs;
  cbs.push_back(make_callback<FailureProbe>("probe", &heard));
  Trainer trainer(failing_model(5, [] { throw std::runtime_error("row 17: a bad batch"); }),
                  failure_args(dir), synthetic_data(64), nullptr, plugin_free(std::move(cbs)));
  CHECK(error_of(trainer) == "row 17: a bad batch");  // the caller's error is unchanged
  CHECK(heard.events == std::vector<std::string>{"on_exception"});
  CHECK(heard.kind == TH_FAILURE_ERROR);
  CHECK(heard.message == "row 17: a bad batch");
  CHECK(heard.step == 4);
  CHECK(heard.state_step == 4);
}

TEST_CASE("std::bad_alloc is kind out_of_memory") {
  TempDir dir("trainhook-failure-oom");
  Heard heard;
  std::vector<NamedCallback> cbs;
  cbs.push_back(make_callback<FailureProbe>("probe", &heard));
  Trainer trainer(failing_model(3, [] { throw std::bad_alloc(); }), failure_args(dir), synthetic_data(64),
                  nullptr, plugin_free(std::move(cbs)));
  CHECK_THROWS_AS(trainer.train(), std::bad_alloc);
  CHECK(heard.events == std::vector<std::string>{"on_exception"});
  CHECK(heard.kind == TH_FAILURE_OUT_OF_MEMORY);
  CHECK(heard.message.find("out of memory") != std::string::npos);
  CHECK(heard.step == 2);
}

TEST_CASE("a non-finite loss under debug underflow_overflow is kind non_finite") {
  TempDir dir("trainhook-failure-nan");
  Heard heard;
  std::vector<NamedCallback> cbs;
  cbs.push_back(make_callback<FailureProbe>("probe", &heard));
  torch::manual_seed(3);
  torch::nn::Sequential net(torch::nn::Linear(4, 8), torch::nn::ReLU(), torch::nn::Linear(8, 3));
  auto calls = std::make_shared<int>(0);
  auto model = make_model(net, [calls](const torch::Tensor& out, const torch::Tensor& labels) {
    auto loss = torch::nn::functional::cross_entropy(out, labels);
    // The 3rd step's loss is NaN.
    return ++*calls == 3 ? loss * std::numeric_limits<double>::quiet_NaN() : loss;
  });
  auto args = failure_args(dir);
  args.debug = {"underflow_overflow"};
  Trainer trainer(model, args, synthetic_data(64), nullptr, plugin_free(std::move(cbs)));
  const std::string error = error_of(trainer);
  CHECK(error.find("inf/nan") != std::string::npos);
  CHECK(heard.events == std::vector<std::string>{"on_exception"});
  CHECK(heard.kind == TH_FAILURE_NON_FINITE);
  CHECK(heard.message == error);
  CHECK(heard.step == 2);
}

TEST_CASE(
    "a callback failing under plugin_error_policy fail is kind plugin and every other callback hears it") {
  TempDir dir("trainhook-failure-plugin");
  Heard failing, before, after;
  std::vector<NamedCallback> cbs;
  cbs.push_back(make_callback<FailureProbe>("before", &before, -1, /*throw_in_exception=*/true));
  cbs.push_back(make_callback<FailureProbe>("failing", &failing, 3));
  cbs.push_back(make_callback<FailureProbe>("after", &after));
  auto args = failure_args(dir);
  args.plugin_error_policy = PluginErrorPolicy::fail;
  Trainer trainer(tiny_model(4), args, synthetic_data(64), nullptr, plugin_free(std::move(cbs)));
  const std::string want = "callback 'failing' failed in on_step_end: probe failed at its step end";
  std::string error;
  try {
    trainer.train();
  } catch (const CallbackError& e) {
    error = e.what();
  }
  // "before" threw in on_exception: logged, the run's own error stands, "after" still heard it.
  CHECK(error == want);
  for (const Heard* h : {&before, &after}) {
    CHECK(h->events == std::vector<std::string>{"on_exception"});
    CHECK(h->kind == TH_FAILURE_PLUGIN);
    CHECK(h->message == want);
    CHECK(h->step == 3);
  }
  // The failed callback was taken out of the run when it failed.
  CHECK(failing.events.empty());
  bool before_listed = false;
  for (const auto& d : trainer.callback_handler().disabled())
    if (d.callback == "before" && d.event == "on_exception") before_listed = true;
  CHECK(before_listed);
}

TEST_CASE("a run that ends well hears on_train_end and no on_exception") {
  TempDir dir("trainhook-failure-none");
  Heard heard;
  std::vector<NamedCallback> cbs;
  cbs.push_back(make_callback<FailureProbe>("probe", &heard));
  Trainer trainer(tiny_model(4), failure_args(dir), synthetic_data(64), nullptr, plugin_free(std::move(cbs)));
  trainer.train();
  CHECK(heard.events == std::vector<std::string>{"on_train_end"});
}
