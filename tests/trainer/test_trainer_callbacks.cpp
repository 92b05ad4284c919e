// Trainer::add_callback / pop_callback / remove_callback (HF's callback list
// management): between evaluate() and train() calls, by name and by instance,
// order kept; removing DefaultFlowCallback stops interval logging as in HF.
#include "trainer_test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>

using namespace trainhook;
using namespace trainhook::test;

namespace {

// Appends "<name>:<event>" to a shared journal, so the order of callbacks shows.
class Journal final : public trainhook::Callback {
 public:
  Journal(std::string name, std::vector<std::string>* out) : name_(std::move(name)), out_(out) {}
  void on_evaluate(Event&) override { out_->push_back(name_ + ":on_evaluate"); }
  void on_log(Event& e) override {
    out_->push_back(name_ + ":on_log@" + std::to_string(e.state().global_step));
  }

 private:
  std::string name_;
  std::vector<std::string>* out_;
};

NamedCallback journal(const std::string& name, std::vector<std::string>* out, Journal** instance = nullptr) {
  auto cb = make_callback<Journal>(name, name, out);
  if (instance != nullptr) *instance = static_cast<Journal*>(cb.callback.get());
  return cb;
}

std::vector<std::string> evaluated(Trainer& t, std::vector<std::string>& journal_lines) {
  journal_lines.clear();
  t.evaluate();
  std::vector<std::string> out;
  for (const auto& l : journal_lines)
    if (l.find(":on_evaluate") != std::string::npos) out.push_back(l.substr(0, l.find(':')));
  return out;
}

}  // namespace

TEST_CASE("callbacks are added, popped and removed between evaluate() calls, order kept") {
  TempDir dir("trainhook-cblist");
  std::vector<std::string> lines;
  Journal* a_instance = nullptr;
  std::vector<NamedCallback> initial;
  initial.push_back(journal("A", &lines, &a_instance));
  initial.push_back(journal("B", &lines));
  Trainer t(tiny_model(1), small_args(dir.path.string()), synthetic_data(16), synthetic_data(8),
            plugin_free(std::move(initial)));
  CHECK(t.callback_names() == std::vector<std::string>{"DefaultFlowCallback", "A", "B"});
  CHECK(evaluated(t, lines) == std::vector<std::string>{"A", "B"});

  // pop by name returns the callback; it no longer sees events.
  auto b = t.pop_callback("B");
  REQUIRE(b.has_value());
  CHECK(b->name() == "B");
  CHECK(b->callback() != nullptr);
  CHECK(evaluated(t, lines) == std::vector<std::string>{"A"});
  CHECK_FALSE(t.pop_callback("B").has_value());  // absent: nothing
  t.remove_callback("nope");                     // absent: nothing happens

  // add puts new ones last; a popped one can come back.
  t.add_callback(journal("C", &lines));
  t.add_callback(std::move(*b));
  CHECK(t.callback_names() == std::vector<std::string>{"DefaultFlowCallback", "A", "C", "B"});
  CHECK(evaluated(t, lines) == std::vector<std::string>{"A", "C", "B"});

  // by instance: the embedder's own object.
  auto a = t.pop_callback(*a_instance);
  REQUIRE(a.has_value());
  CHECK(a->callback() == a_instance);
  CHECK(evaluated(t, lines) == std::vector<std::string>{"C", "B"});
  t.remove_callback(*a_instance);  // already out: nothing happens
  Journal stranger("X", &lines);
  CHECK_FALSE(t.pop_callback(stranger).has_value());

  // a duplicate name is refused (names key the saved callback states).
  CHECK_THROWS_WITH_AS(t.add_callback(journal("C", &lines)), doctest::Contains("'C' is already"),
                       std::invalid_argument);
  // plugins by name need use_plugins.
  CHECK_THROWS_WITH_AS(t.add_callback(std::string("early_stopping")), doctest::Contains("use_plugins"),
                       std::invalid_argument);
  t.remove_callback("C");
  CHECK(evaluated(t, lines) == std::vector<std::string>{"B"});
}

TEST_CASE("without DefaultFlowCallback nothing is logged at steps, adding it back restores logging") {
  TempDir dir("trainhook-cblist-flow");
  auto args = small_args(dir.path.string());
  args.logging_steps = 1;
  args.max_steps = 4;  // one epoch of 16 samples in batches of 4
  std::vector<std::string> lines;
  std::vector<NamedCallback> initial;
  initial.push_back(journal("J", &lines));
  Trainer t(tiny_model(2), args, synthetic_data(16), synthetic_data(8), plugin_free(std::move(initial)));
  auto flow = t.pop_callback("DefaultFlowCallback");
  REQUIRE(flow.has_value());
  t.train();
  // Only train()'s closing log (HF logs the train metrics whatever the flow).
  CHECK(lines == std::vector<std::string>{"J:on_log@4"});
  lines.clear();
  t.add_callback(std::string("DefaultFlowCallback"));
  CHECK(t.callback_names() == std::vector<std::string>{"J", "DefaultFlowCallback"});
  t.train();
  CHECK(std::count_if(lines.begin(), lines.end(), [](const std::string& l) {
          return l.rfind("J:on_log@", 0) == 0;
        }) == 5);  // steps 1 to 4 and the closing log
}

TEST_CASE("a plugin added by name goes through the isolation policy, as the run's own plugins do") {
  TempDir dir("trainhook-cblist-isolated");
  // A site that trusts nothing (ctest's own site file trusts the whole build folder).
  const std::string site = (dir.path / "site.json").string();
  { std::ofstream(site) << "{}\n"; }
  struct SiteEnv {
    std::string saved;
    bool had;
    explicit SiteEnv(const std::string& file) : had(std::getenv("TRAINHOOK_SITE_CONFIG") != nullptr) {
      if (had) saved = std::getenv("TRAINHOOK_SITE_CONFIG");
      ::setenv("TRAINHOOK_SITE_CONFIG", file.c_str(), 1);
    }
    ~SiteEnv() { had ? (void)::setenv("TRAINHOOK_SITE_CONFIG", saved.c_str(), 1) : (void)::unsetenv("TRAINHOOK_SITE_CONFIG"); }
  } site_env(site);
  auto args = small_args(dir.path.string());
  // The host's keys are consumed, never passed on (the plugin refuses unknown keys).
  args.plugin_config = {{"isolated_faults", {{"isolation_timeout", 20}}}};
  TrainerOptions options;
  options.plugin_search.plugin_dirs = {std::string(TRAINHOOK_TEST_PLUGIN_ROOT) + "/isolated_faults"};
  options.plugin_search.use_environment = false;
  options.plugin_search.default_dir = "/nonexistent";
  Trainer t(tiny_model(3), args, synthetic_data(16), synthetic_data(8), std::move(options));
  t.add_callback(std::string("isolated_faults"));
  // Not in the trainer's own folder, nor trusted or pinned: under auto it runs in a helper process.
  const auto& cbs = t.callback_names();
  CHECK(std::find(cbs.begin(), cbs.end(), "isolated_faults") != cbs.end());
  auto popped = t.pop_callback("isolated_faults");
  REQUIRE(popped.has_value());
  const std::unique_ptr<trainhook::detail::InternalCallback> cb = popped->release();
  CHECK(cb->isolated());
}
