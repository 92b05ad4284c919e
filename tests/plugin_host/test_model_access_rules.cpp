// The rules abi.h states for ABI 1.1's host services (model_access_rules.cpp):
// which tensors are readable/writable at which event, the LR factor, plugin
// metric names and values, skipping an optimizer step. Torch-free.
#include <trainhook/plugin_host/host/model_access.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

using namespace trainhook::model_access_rules;

TEST_CASE("parameters and buffers: readable at every event, writable only at the safe points") {
  for (int32_t kind : {TH_TENSORS_PARAMETERS, TH_TENSORS_BUFFERS}) {
    for (int32_t ev = 0; ev < TH_EVENT_COUNT; ++ev) {
      CAPTURE(ev);
      CHECK(check_tensors(ev, kind, TH_ACCESS_READ).empty());
      const bool safe = ev == TH_EVENT_OPTIMIZER_STEP || ev == TH_EVENT_STEP_END ||
                        ev == TH_EVENT_EVALUATE_BEGIN || ev == TH_EVENT_EVALUATE || ev == TH_EVENT_TRAIN_END;
      CHECK(check_tensors(ev, kind, TH_ACCESS_WRITE).empty() == safe);
    }
  }
  CHECK(check_tensors(TH_EVENT_LOG, TH_TENSORS_PARAMETERS, TH_ACCESS_WRITE) ==
        "tensors: parameters may not be written in on_log (writable in on_optimizer_step, on_step_end, "
        "on_evaluate_begin, on_evaluate and on_train_end)");
}

TEST_CASE("gradients: readable around the optimizer step, writable at on_pre_optimizer_step only") {
  for (int32_t ev = 0; ev < TH_EVENT_COUNT; ++ev) {
    CAPTURE(ev);
    const bool readable =
        ev == TH_EVENT_SUBSTEP_END || ev == TH_EVENT_PRE_OPTIMIZER_STEP || ev == TH_EVENT_OPTIMIZER_STEP;
    CHECK(check_tensors(ev, TH_TENSORS_GRADIENTS, TH_ACCESS_READ).empty() == readable);
    CHECK(check_tensors(ev, TH_TENSORS_GRADIENTS, TH_ACCESS_WRITE).empty() ==
          (ev == TH_EVENT_PRE_OPTIMIZER_STEP));
  }
  CHECK(check_tensors(TH_EVENT_STEP_END, TH_TENSORS_GRADIENTS, TH_ACCESS_READ) ==
        "tensors: gradients are not readable in on_step_end (gradients are readable in on_substep_end, "
        "on_pre_optimizer_step and on_optimizer_step)");
  CHECK(check_tensors(-1, TH_TENSORS_GRADIENTS, TH_ACCESS_READ).find("outside any event") !=
        std::string::npos);
  CHECK(check_tensors(TH_EVENT_STEP_END, 7, TH_ACCESS_READ).find("unknown kind 7") != std::string::npos);
  CHECK(check_tensors(TH_EVENT_STEP_END, TH_TENSORS_PARAMETERS, 5).find("unknown access 5") !=
        std::string::npos);
}

TEST_CASE("the learning-rate factor must be finite and > 0") {
  CHECK(check_factor(0.5).empty());
  CHECK(check_factor(3).empty());
  CHECK(check_factor(0) == "set_lr_factor: the factor must be a finite number > 0, got 0.000000");
  CHECK_FALSE(check_factor(-1).empty());
  CHECK_FALSE(check_factor(std::nan("")).empty());
  CHECK_FALSE(check_factor(std::numeric_limits<double>::infinity()).empty());
}

TEST_CASE("plugin metrics: a printable name that is not the trainer's own, a finite value") {
  CHECK(check_metric("grad_norm/layer1", 1.5).empty());
  CHECK(check_metric("", 1) == "add_metric: the metric name is empty");
  CHECK(check_metric("a\nb", 1) == "add_metric: the metric name 'a\nb' has a control character");
  CHECK(check_metric(std::string(300, 'x'), 1).find("longer than 256") != std::string::npos);
  CHECK(check_metric("loss", 1).find("one of the trainer's own log keys") != std::string::npos);
  CHECK(check_metric("x", std::nan("")) ==
        "add_metric: the value of 'x' is NaN (log_history is JSON, which cannot hold it)");
  CHECK(check_metric("x", -std::numeric_limits<double>::infinity()).find("infinite") != std::string::npos);
}

TEST_CASE("skipping the optimizer step: only at on_pre_optimizer_step") {
  CHECK(check_skip(TH_EVENT_PRE_OPTIMIZER_STEP).empty());
  CHECK(check_skip(TH_EVENT_STEP_END) ==
        "skip_optimizer_step: only in on_pre_optimizer_step, not on_step_end");
}
