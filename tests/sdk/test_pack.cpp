// An "enterprise pack": one library, two callbacks and one CLI command, written
// with the C++ layer (plugin.hpp). The registry and handler tests drive it and
// observe it through the host's log lines.
//
//  pack_recorder (callback): logs "<event> step=<n>" for the events it
//    overrides; config {"stop_at_step": N} sets should_training_stop at
//    on_step_end once global_step >= N; {"throw_in": "on_log"} throws there;
//    stateful: {"args": {"stop_at_step": N}, "attributes": {"seen": k}}.
//  pack_reporter (integration): logs on_log's values; with
//    {"stop_from_thread": true} asks the host to stop from a worker thread.
//  pack-hello (command): logs "hello <args>" and returns the argument count.
#include <trainhook/plugin.hpp>

#include <nlohmann/json.hpp>

#include <sstream>
#include <thread>

namespace {

class Recorder final : public trainhook::Callback {
 public:
  explicit Recorder(trainhook::Setup& setup) : host_(setup.host()) {
    const auto cfg = nlohmann::json::parse(setup.config_json());
    if (!cfg.is_object()) throw trainhook::ConfigError("pack_recorder: configuration must be an object");
    stop_at_step_ = cfg.value("stop_at_step", int64_t{-1});
    throw_in_ = cfg.value("throw_in", std::string());
    if (stop_at_step_ == 0) throw trainhook::ConfigError("pack_recorder: stop_at_step must be >= 1, got 0");
  }
  void on_train_begin(trainhook::Event& e) override { record("on_train_begin", e); }
  void on_step_end(trainhook::Event& e) override {
    record("on_step_end", e);
    if (stop_at_step_ > 0 && e.state().global_step >= stop_at_step_) e.control().should_training_stop = 1;
  }
  void on_log(trainhook::Event& e) override {
    e.control().should_save = 1;  // rolled back by the host when we throw below
    record("on_log", e);
  }
  void on_save(trainhook::Event& e) override {
    record("on_save", e);
    host_.info("checkpoint=" + std::string(e.checkpoint_dir()));
  }
  std::string save_state() override {
    return nlohmann::json{{"args", {{"stop_at_step", stop_at_step_}}}, {"attributes", {{"seen", seen_}}}}
        .dump();
  }
  void load_state(const std::string& text) override {
    seen_ = nlohmann::json::parse(text).at("attributes").at("seen").get<int64_t>();
    host_.info("restored seen=" + std::to_string(seen_));
  }

 private:
  void record(const char* event, trainhook::Event& e) {
    ++seen_;
    host_.info(std::string(event) + " step=" + std::to_string(e.state().global_step));
    if (throw_in_ == event) throw std::runtime_error("pack_recorder was told to fail in " + throw_in_);
  }
  trainhook::Host host_;
  int64_t stop_at_step_ = -1;
  std::string throw_in_;
  int64_t seen_ = 0;
};

class Reporter final : public trainhook::Callback {
 public:
  explicit Reporter(trainhook::Setup& setup) : host_(setup.host()) {
    stop_from_thread_ = nlohmann::json::parse(setup.config_json()).value("stop_from_thread", false);
  }
  ~Reporter() override {
    if (worker_.joinable()) worker_.join();
  }
  void on_train_begin(trainhook::Event&) override {
    host_.info("output_dir=" + host_.output_dir() + " run_name=" + host_.run_name());
    if (stop_from_thread_)
      worker_ = std::thread([h = host_] { h.request_stop("reporter worker says stop"); });
  }
  void on_log(trainhook::Event& e) override {
    std::ostringstream line;
    line << "log";
    const trainhook::Values v = e.values();
    for (uint32_t i = 0; i < v.size(); ++i) line << " " << v.key(i) << "=" << v.value(i);
    for (uint32_t i = 0; i < v.string_size(); ++i) line << " " << v.string_key(i) << "=" << v.string_value(i);
    host_.info(line.str());
  }
  void on_train_end(trainhook::Event&) override {
    if (worker_.joinable()) worker_.join();
  }

 private:
  trainhook::Host host_;
  bool stop_from_thread_ = false;
  std::thread worker_;
};

int hello(const trainhook::Host& host, const std::vector<std::string>& args) {
  std::string line = "hello";
  for (const auto& a : args) line += " " + a;
  host.info(line);
  if (!args.empty() && args[0] == "--fail") throw std::runtime_error("pack-hello: --fail was given");
  return static_cast<int>(args.size());
}

}  // namespace

TRAINHOOK_COMMANDS(trainhook::command<&hello>("pack-hello", "prints hello and its arguments"))

TRAINHOOK_PLUGIN("test_pack", "2.1.0",
                 trainhook::callback<Recorder>("pack_recorder", "2.1.0", trainhook::Kind::callback,
                                               "records events (test pack)"),
                 trainhook::callback<Reporter>("pack_reporter", "2.1.0", trainhook::Kind::integration,
                                               "reports logs (test pack)"))
