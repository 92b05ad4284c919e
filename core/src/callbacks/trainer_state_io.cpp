// trainer_state.json in the Hugging Face layout. HF writes
// json.dumps(asdict(state), indent=2, sort_keys=True) + "\n" and reads it back
// with TrainerState(**json.loads(text)), so we write exactly HF's keys (no
// extras: HF would reject an unknown key) and null for absent optionals.
#include <trainhook/callbacks/trainer_state_io.hpp>

#include <unistd.h>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>

namespace trainhook {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// HF stores num_train_epochs as an int (math.ceil of the argument); keep a
// fractional value when the run really has one.
json epochs_value(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e15) return static_cast<int64_t>(v);
  return v;
}

template <class T>
json optional_value(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

const char* type_name(const json& v) {
  if (v.is_number_integer()) return "an integer";
  if (v.is_number_float()) return "a number";
  return v.type_name();
}

[[noreturn]] void bad_key(const std::string& key, const char* expected, const json& got) {
  throw std::runtime_error("key '" + key + "': expected " + expected + ", got " + type_name(got) + " (" +
                           got.dump() + ")");
}

int64_t get_int(const json& j, const char* key, int64_t fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (it->is_number_integer()) return it->get<int64_t>();
  // Python may write 10.0 for an int field that went through float arithmetic.
  if (it->is_number_float() && it->get<double>() == std::floor(it->get<double>()))
    return static_cast<int64_t>(it->get<double>());
  bad_key(key, "an integer", *it);
}

double get_double(const json& j, const char* key, double fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (it->is_number()) return it->get<double>();
  bad_key(key, "a number", *it);
}

bool get_bool(const json& j, const char* key, bool fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (it->is_boolean()) return it->get<bool>();
  bad_key(key, "true or false", *it);
}

std::optional<std::string> get_opt_string(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  bad_key(key, "a string or null", *it);
}

}  // namespace

json control_to_stateful(const TrainerControl& c) {
  return json{{"args",
               {{"should_epoch_stop", c.should_epoch_stop},
                {"should_evaluate", c.should_evaluate},
                {"should_log", c.should_log},
                {"should_save", c.should_save},
                {"should_training_stop", c.should_training_stop}}},
              {"attributes", json::object()}};
}

json to_json(const TrainerState& s) {
  json j = json::object();  // std::map underneath: keys come out sorted, as sort_keys=True
  j["best_global_step"] = optional_value(s.best_global_step);
  j["best_metric"] = optional_value(s.best_metric);
  j["best_model_checkpoint"] = optional_value(s.best_model_checkpoint);
  j["epoch"] = s.epoch;
  j["eval_steps"] = s.eval_steps;
  j["global_step"] = s.global_step;
  j["is_hyper_param_search"] = s.is_hyper_param_search;
  j["is_local_process_zero"] = s.is_local_process_zero;
  j["is_world_process_zero"] = s.is_world_process_zero;
  j["log_history"] = json::array();
  for (const auto& entry : s.log_history) j["log_history"].push_back(entry);
  j["logging_steps"] = s.logging_steps;
  j["max_steps"] = s.max_steps;
  j["num_input_tokens_seen"] = s.num_input_tokens_seen;
  j["num_train_epochs"] = epochs_value(s.num_train_epochs);
  j["save_steps"] = s.save_steps;
  j["stateful_callbacks"] = s.stateful_callbacks.is_null() ? json::object() : s.stateful_callbacks;
  j["total_flos"] = s.total_flos;
  j["train_batch_size"] = s.train_batch_size;
  j["trial_name"] = optional_value(s.trial_name);
  j["trial_params"] = s.trial_params;
  return j;
}

TrainerState state_from_json(const json& j) {
  if (!j.is_object()) throw std::runtime_error(std::string("expected a JSON object, got ") + type_name(j));
  TrainerState s;
  s.epoch = get_double(j, "epoch", 0.0);
  s.global_step = get_int(j, "global_step", 0);
  s.max_steps = get_int(j, "max_steps", 0);
  s.logging_steps = get_int(j, "logging_steps", 500);
  s.eval_steps = get_int(j, "eval_steps", 500);
  s.save_steps = get_int(j, "save_steps", 500);
  s.train_batch_size = get_int(j, "train_batch_size", 0);
  s.num_train_epochs = get_double(j, "num_train_epochs", 0);
  s.num_input_tokens_seen = get_int(j, "num_input_tokens_seen", 0);
  s.total_flos = get_double(j, "total_flos", 0);
  if (auto it = j.find("log_history"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) bad_key("log_history", "a list of objects", *it);
    for (size_t i = 0; i < it->size(); ++i) {
      if (!(*it)[i].is_object()) bad_key("log_history[" + std::to_string(i) + "]", "an object", (*it)[i]);
      s.log_history.push_back((*it)[i]);
    }
  }
  if (auto it = j.find("best_metric"); it != j.end() && !it->is_null()) {
    if (!it->is_number()) bad_key("best_metric", "a number or null", *it);
    s.best_metric = it->get<double>();
  }
  if (auto it = j.find("best_global_step"); it != j.end() && !it->is_null())
    s.best_global_step = get_int(j, "best_global_step", 0);
  s.best_model_checkpoint = get_opt_string(j, "best_model_checkpoint");
  s.is_local_process_zero = get_bool(j, "is_local_process_zero", true);
  s.is_world_process_zero = get_bool(j, "is_world_process_zero", true);
  s.is_hyper_param_search = get_bool(j, "is_hyper_param_search", false);
  s.trial_name = get_opt_string(j, "trial_name");
  if (auto it = j.find("trial_params"); it != j.end()) s.trial_params = *it;
  if (auto it = j.find("stateful_callbacks"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) bad_key("stateful_callbacks", "an object keyed by callback name", *it);
    s.stateful_callbacks = *it;
  }
  return s;
}

void save_trainer_state(const TrainerState& s, const fs::path& file) {
  // indent 2, ensure_ascii as Python's json.dumps default, final newline.
  const std::string text = to_json(s).dump(2, ' ', true) + "\n";
  fs::path tmp = file;
  tmp += ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + tmp.string() + ": cannot open for writing");
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + tmp.string() + ": write failed (disk full?)");
  }
  std::error_code ec;
  fs::rename(tmp, file, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw std::runtime_error("cannot write " + file.string() + ": rename failed");
  }
}

TrainerState load_trainer_state(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error(file.string() + ": cannot open trainer state (missing or unreadable)");
  std::stringstream buf;
  buf << in.rdbuf();
  json j;
  try {
    j = json::parse(buf.str());
  } catch (const json::parse_error& e) {
    throw std::runtime_error(file.string() + ": not valid JSON: " + e.what());
  }
  try {
    return state_from_json(j);
  } catch (const std::exception& e) {
    throw std::runtime_error(file.string() + ": " + e.what());
  }
}

}  // namespace trainhook
