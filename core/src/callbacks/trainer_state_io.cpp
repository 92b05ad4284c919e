// trainer_state.json in the Hugging Face layout. HF writes
// json.dumps(asdict(state), indent=2, sort_keys=True) + "\n" and reads it back
// with TrainerState(**json.loads(text)), so we write exactly HF's keys (no
// extras: HF would reject an unknown key) and null for absent optionals.
#include <trainhook/callbacks/trainer_state_io.hpp>
#include <trainhook/common/checked_json.hpp>

#include <unistd.h>
#include <cmath>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

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

const char* type_name(const json& v) {
  if (v.is_number_integer()) return "an integer";
  if (v.is_number_float()) return "a number";
  return v.type_name();
}

[[noreturn]] void bad_key(const std::string& key, const char* expected, const json& got) {
  throw std::runtime_error("key '" + key + "': expected " + expected + ", got " + type_name(got) + " (" +
                           got.dump() + ")");
}

// ---- one codec per field type: how a TrainerState field is written and read ----

template <class T>
struct Codec;
template <>
struct Codec<int64_t> {
  static json write(int64_t v) { return v; }
  // Every integer of the state is a count (steps, batch size, tokens): a value
  // below 0 or beyond 2^53 (the largest count a double still holds exactly,
  // what HF's Python floats can round-trip) is a damaged file, never used.
  static constexpr double kMaxCount = 9007199254740992.0;
  static int64_t read(const std::string& key, const json& v) {
    if (v.is_number_unsigned()) {
      if (v.get<uint64_t>() <= static_cast<uint64_t>(kMaxCount))
        return static_cast<int64_t>(v.get<uint64_t>());
    } else if (v.is_number_integer()) {
      const int64_t i = v.get<int64_t>();
      if (i >= 0 && i <= static_cast<int64_t>(kMaxCount)) return i;
    } else if (v.is_number_float()) {
      // Python may write 10.0 for an int field that went through float arithmetic.
      const double d = v.get<double>();
      if (d == std::floor(d) && d >= 0 && d <= kMaxCount) return static_cast<int64_t>(d);
      if (d != std::floor(d)) bad_key(key, "an integer", v);
    } else {
      bad_key(key, "an integer", v);
    }
    bad_key(key, "a count in [0, 2^53]", v);
  }
};
template <>
struct Codec<double> {
  static json write(double v) { return v; }
  static double read(const std::string& key, const json& v) {
    if (v.is_number() && std::isfinite(v.get<double>())) return v.get<double>();
    bad_key(key, "a finite number", v);
  }
};
// epoch, num_train_epochs, total_flos: amounts that cannot be negative.
double read_amount(const std::string& key, const json& v) {
  const double d = Codec<double>::read(key, v);
  if (d < 0) bad_key(key, "a number >= 0", v);
  return d;
}
template <>
struct Codec<bool> {
  static json write(bool v) { return v; }
  static bool read(const std::string& key, const json& v) {
    if (v.is_boolean()) return v.get<bool>();
    bad_key(key, "true or false", v);
  }
};
template <>
struct Codec<std::string> {
  static json write(const std::string& v) { return v; }
  static std::string read(const std::string& key, const json& v) {
    if (v.is_string()) return v.get<std::string>();
    bad_key(key, "a string or null", v);
  }
};
template <class T>
struct Codec<std::optional<T>> {
  static json write(const std::optional<T>& v) { return v ? Codec<T>::write(*v) : json(nullptr); }
  static std::optional<T> read(const std::string& key, const json& v) { return Codec<T>::read(key, v); }
};

// One row per key of HF's trainer_state.json: writing and reading both walk
// this table, so a field cannot be written and forgotten on load (or back).
// A key that is missing or null on load keeps TrainerState's default.
struct StateField {
  const char* key;
  std::function<json(const TrainerState&)> write;
  std::function<void(TrainerState&, const json&)> read;  // never given null
};

template <class T>
StateField field(const char* key, T TrainerState::*member) {
  return {key, [member](const TrainerState& s) { return Codec<T>::write(s.*member); },
          [member, key](TrainerState& s, const json& v) { s.*member = Codec<T>::read(key, v); }};
}

StateField amount_field(const char* key, double TrainerState::*member) {
  return {key, [member](const TrainerState& s) { return Codec<double>::write(s.*member); },
          [member, key](TrainerState& s, const json& v) { s.*member = read_amount(key, v); }};
}

const std::vector<StateField>& state_fields() {
  static const std::vector<StateField> fields = [] {
    std::vector<StateField> f;
    f.push_back(field("best_global_step", &TrainerState::best_global_step));
    f.push_back(field("best_metric", &TrainerState::best_metric));
    f.push_back(field("best_model_checkpoint", &TrainerState::best_model_checkpoint));
    f.push_back(amount_field("epoch", &TrainerState::epoch));
    f.push_back(field("eval_steps", &TrainerState::eval_steps));
    f.push_back(field("global_step", &TrainerState::global_step));
    f.push_back(field("is_hyper_param_search", &TrainerState::is_hyper_param_search));
    f.push_back(field("is_local_process_zero", &TrainerState::is_local_process_zero));
    f.push_back(field("is_world_process_zero", &TrainerState::is_world_process_zero));
    f.push_back({"log_history",
                 [](const TrainerState& s) {
                   json a = json::array();
                   for (const auto& entry : s.log_history) a.push_back(entry);
                   return a;
                 },
                 [](TrainerState& s, const json& v) {
                   if (!v.is_array()) bad_key("log_history", "a list of objects", v);
                   for (size_t i = 0; i < v.size(); ++i) {
                     if (!v[i].is_object())
                       bad_key("log_history[" + std::to_string(i) + "]", "an object", v[i]);
                     s.log_history.push_back(v[i]);
                   }
                 }});
    f.push_back(field("logging_steps", &TrainerState::logging_steps));
    f.push_back(field("max_steps", &TrainerState::max_steps));
    f.push_back(field("num_input_tokens_seen", &TrainerState::num_input_tokens_seen));
    f.push_back(
        {"num_train_epochs", [](const TrainerState& s) { return epochs_value(s.num_train_epochs); },
         [](TrainerState& s, const json& v) { s.num_train_epochs = read_amount("num_train_epochs", v); }});
    f.push_back(field("save_steps", &TrainerState::save_steps));
    f.push_back({"stateful_callbacks",
                 [](const TrainerState& s) {
                   return s.stateful_callbacks.is_null() ? json::object() : s.stateful_callbacks;
                 },
                 [](TrainerState& s, const json& v) {
                   if (!v.is_object()) bad_key("stateful_callbacks", "an object keyed by callback name", v);
                   s.stateful_callbacks = v;
                 }});
    f.push_back(amount_field("total_flos", &TrainerState::total_flos));
    f.push_back(field("train_batch_size", &TrainerState::train_batch_size));
    f.push_back(field("trial_name", &TrainerState::trial_name));
    f.push_back({"trial_params", [](const TrainerState& s) { return s.trial_params; },
                 [](TrainerState& s, const json& v) { s.trial_params = v; }});
    return f;
  }();
  return fields;
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
  for (const auto& f : state_fields()) j[f.key] = f.write(s);
  return j;
}

TrainerState state_from_json(const json& j) {
  if (!j.is_object()) throw std::runtime_error(std::string("expected a JSON object, got ") + type_name(j));
  TrainerState s;
  for (const auto& f : state_fields()) {
    auto it = j.find(f.key);
    if (it != j.end() && !it->is_null()) f.read(s, *it);
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
  // A JsonInputError (a std::runtime_error) already names the file.
  const json j = read_checked_json_file(file.string());
  try {
    return state_from_json(j);
  } catch (const std::exception& e) {
    throw std::runtime_error(file.string() + ": " + e.what());
  }
}

}  // namespace trainhook
