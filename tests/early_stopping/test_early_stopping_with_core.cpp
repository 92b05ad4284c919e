// The early_stopping plugin as the trainer uses it: found by core's
// PluginRegistry, driven by core's CallbackHandler (HF flag reset rules), its
// counter saved into TrainerState.stateful_callbacks and restored from it.
#include <trainhook/callbacks/callback_handler.hpp>
#include <trainhook/plugin_host/host/host_services.hpp>
#include <trainhook/plugin_host/registry/plugin_registry.hpp>
#include <trainhook/callbacks/state.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

using namespace trainhook;

namespace {

class Services final : public HostServices {
 public:
  std::string args_json;
  std::vector<std::string> warnings;
  void log(int32_t level, const std::string&, const std::string& message) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (level >= TH_LOG_WARN) warnings.push_back(message);
  }
  std::string output_dir() const override { return "."; }
  std::string training_args_json() const override { return args_json; }
  void request_stop(const std::string&, const std::string&) override {}
  std::string trainer_state_json() const override { return "{}"; }
  std::string model_description() const override { return ""; }
  std::string run_name() const override { return "test"; }
  std::string set_resume_checkpoint(const std::string&) override { return "not supported"; }

 private:
  std::mutex mu_;
};

PluginSearchOptions search() {
  PluginSearchOptions o;
  o.plugin_dirs = {std::string(std::getenv("TRAINHOOK_BUILD_DIR")) + "/lib/trainhook/plugins"};
  o.use_environment = false;
  o.default_dir = o.plugin_dirs.front();
  return o;
}

std::string args_json() {
  return nlohmann::json{{"metric_for_best_model", "eval_loss"},
                        {"greater_is_better", false},
                        {"eval_strategy", "steps"},
                        {"load_best_model_at_end", true}}
      .dump();
}

// One evaluation as the trainer runs it: on_evaluate, then the best-metric update.
bool evaluate(CallbackHandler& handler, TrainerState& state, TrainerControl& control, double eval_loss) {
  state.global_step += 5;
  const char* keys[] = {"eval_loss"};
  const double values[] = {eval_loss};
  th_values v{TH_VALUES_STRUCT_SIZE, 1, keys, values, 0, nullptr, nullptr};
  EventPayload payload;
  payload.values = &v;
  handler.fire(TH_EVENT_EVALUATE, state, control, payload);
  if (!state.best_metric || eval_loss < *state.best_metric) state.best_metric = eval_loss;
  return control.should_training_stop;
}

}  // namespace

TEST_CASE("the registry finds early_stopping, progress and printer as callbacks, not integrations") {
  PluginRegistry registry(search());
  CHECK(registry.has("early_stopping"));
  CHECK(registry.has("progress"));
  CHECK(registry.has("printer"));
  const auto integrations = registry.resolve_report_to({"all"});
  for (const char* name : {"early_stopping", "progress", "printer"})
    CHECK(std::find(integrations.begin(), integrations.end(), name) == integrations.end());
  CHECK_NOTHROW(registry.check_callbacks({"early_stopping"}));
}

// Open problem: in the ASan+UBSan build this case passes but LeakSanitizer's
// exit-time tracer then dies of SIGSEGV ("Tracer caught signal 11") after a
// plugin's create() has thrown with every plugin of the folder loaded; it runs
// in the main build only until that is understood.
#if !defined(__SANITIZE_ADDRESS__)
TEST_CASE("a bad plugin_config section is refused at creation, naming the key") {
  PluginRegistry registry(search());
  Services host;
  CHECK_THROWS_WITH_AS(registry.create("early_stopping", host, R"({"patients": 2})"),
                       doctest::Contains("patients"), PluginError);
}
#endif

TEST_CASE("through the handler: stops after patience, and the counter survives save_states/load_states") {
  PluginRegistry registry(search());
  Services host;
  host.args_json = args_json();
  TrainerState state;
  TrainerControl control;
  {
    CallbackHandler handler(PluginErrorPolicy::fail);
    handler.add(registry.create("early_stopping", host, R"({"patience": 3})"));
    handler.fire(TH_EVENT_TRAIN_BEGIN, state, control);
    CHECK_FALSE(evaluate(handler, state, control, 1.0));
    CHECK_FALSE(evaluate(handler, state, control, 1.0));  // counter 1
    CHECK_FALSE(evaluate(handler, state, control, 1.0));  // counter 2
    handler.save_states(state, control);
  }
  const nlohmann::json& saved = state.stateful_callbacks.at("EarlyStoppingCallback");
  CHECK(saved.at("attributes").at("early_stopping_patience_counter") == 2);
  CHECK(saved.at("args").at("early_stopping_patience") == 3);

  // A resumed run: a new instance, the state restored, one more plateau evaluation stops it.
  CallbackHandler handler(PluginErrorPolicy::fail);
  handler.add(registry.create("early_stopping", host, R"({"patience": 3})"));
  handler.load_states(state);
  handler.fire(TH_EVENT_TRAIN_BEGIN, state, control);
  CHECK(evaluate(handler, state, control, 1.0));
}

TEST_CASE("under PluginErrorPolicy::fail, a run without metric_for_best_model fails at train begin") {
  PluginRegistry registry(search());
  Services host;
  host.args_json = R"({"eval_strategy": "steps", "metric_for_best_model": null})";
  CallbackHandler handler(PluginErrorPolicy::fail);
  handler.add(registry.create("early_stopping", host, "{}"));
  TrainerState state;
  TrainerControl control;
  CHECK_THROWS_WITH_AS(handler.fire(TH_EVENT_TRAIN_BEGIN, state, control),
                       doctest::Contains("metric_for_best_model"), CallbackError);
}
