#include <trainhook/ema/ema_callback.hpp>

#include <trainhook/support/base64.hpp>
#include <trainhook/support/tensor_math.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <stdexcept>

namespace trainhook::ema {

EmaCallback::EmaCallback(trainhook::Setup& setup)
    : EmaCallback(setup.host(), EmaOptions::from_json(setup.config_json())) {}

EmaCallback::EmaCallback(const trainhook::Host& host, const EmaOptions& options)
    : host_(host), options_(options) {
  if (!host_.has_model_access()) throw ConfigError("ema needs a trainer with ABI 1.1 (tensor views)");
}

void EmaCallback::initialise() {
  names_.clear();
  shadow_.clear();
  for (const TensorView t : host_.tensors(Tensors::parameters)) {
    names_.emplace_back(t.name());
    shadow_.emplace_back(t);
  }
}

void EmaCallback::on_train_begin(trainhook::Event&) {
  if (shadow_.empty()) {
    initialise();  // a fresh run: the EMA starts at the initial weights
    return;
  }
  // Restored from a checkpoint: the model must be the one it was saved for.
  const TensorList params = host_.tensors(Tensors::parameters);
  if (params.size() != shadow_.size())
    throw std::runtime_error("ema: the checkpoint has EMA weights for " + std::to_string(shadow_.size()) +
                             " parameters, the model has " + std::to_string(params.size()));
  for (uint32_t i = 0; i < params.size(); ++i) {
    if (params[i].name() != names_[i] || params[i].numel() != shadow_[i].numel())
      throw std::runtime_error("ema: the checkpoint's EMA weight '" + names_[i] +
                               "' does not match the model's '" + std::string(params[i].name()) + "'");
    // A state saved before EMA weights took the parameter's dtype holds doubles.
    if (shadow_[i].bits() != params[i].dl().dtype.bits)
      shadow_[i] = shadow_[i].converted(params[i].dl().dtype.bits);
  }
}

void EmaCallback::on_step_end(trainhook::Event&) {
  if (shadow_.empty()) initialise();
  if (++steps_seen_ % options_.update_every() != 0) return;
  const double n = static_cast<double>(updates_);
  const double d = options_.warmup() ? std::min(options_.decay(), (1 + n) / (10 + n)) : options_.decay();
  uint32_t i = 0;
  for (const TensorView t : host_.tensors(Tensors::parameters)) shadow_[i++].scale_add(d, t, 1 - d);
  ++updates_;
}

void EmaCallback::on_evaluate_begin(trainhook::Event&) {
  if (!options_.evaluate_with_ema() || shadow_.empty()) return;
  backup_.clear();
  uint32_t i = 0;
  for (const TensorView t : host_.tensors(Tensors::parameters, Access::write)) {
    backup_.emplace_back(t);
    shadow_[i++].write_to(t);
  }
}

void EmaCallback::on_evaluate(trainhook::Event&) {
  if (backup_.empty()) return;
  uint32_t i = 0;
  for (const TensorView t : host_.tensors(Tensors::parameters, Access::write)) backup_[i++].write_to(t);
  backup_.clear();
}

uint64_t EmaCallback::checksum() const noexcept {
  uint64_t h = 1469598103934665603ull;
  for (const auto& v : shadow_) {
    const auto* p = static_cast<const unsigned char*>(v.data());
    for (size_t i = 0; i < v.size_bytes(); ++i) h = (h ^ p[i]) * 1099511628211ull;
  }
  return h;
}

void EmaCallback::on_train_end(trainhook::Event& e) {
  // abi.h: parameters written at on_train_end are what the final save writes.
  if (options_.final_weights() && !shadow_.empty()) {
    const std::vector<support::TensorCopy> best = best_checkpoint_weights(e.state());
    const std::vector<support::TensorCopy>& w = best.empty() ? shadow_ : best;
    uint32_t i = 0;
    for (const TensorView t : host_.tensors(Tensors::parameters, Access::write)) w[i++].write_to(t);
  }
  const std::string line = "rank " + std::to_string(e.state().process_index) + ": " +
                           std::to_string(updates_) + " EMA updates, weights checksum " +
                           std::to_string(checksum());
  if (options_.log_checksum()) {
    host_.warn(line);
  } else {
    host_.info(line);
  }
}

std::string EmaCallback::save_state() {
  nlohmann::json weights = nlohmann::json::object();
  std::vector<int> bits;
  for (size_t i = 0; i < shadow_.size(); ++i) {
    weights[names_[i]] = support::base64_encode(shadow_[i].data(), shadow_[i].size_bytes());
    bits.push_back(shadow_[i].bits());
  }
  nlohmann::json args = {{"decay", options_.decay()},
                         {"warmup", options_.warmup()},
                         {"evaluate_with_ema", options_.evaluate_with_ema()},
                         {"update_every", options_.update_every()}};
  nlohmann::json attrs = {{"num_updates", updates_}, {"steps_seen", steps_seen_}, {"weights", weights}};
  // Names in the module's order (a JSON object is sorted by key when written).
  attrs["names"] = names_;
  attrs["bits"] = bits;  // per name: 32 or 64 (states without it hold doubles)
  return nlohmann::json{{"args", args}, {"attributes", attrs}}.dump();
}

namespace {

// The EMA weights of a saved state's "attributes" (names in the module's order).
std::vector<support::TensorCopy> decode_weights(const nlohmann::json& attrs,
                                                const std::vector<std::string>& names) {
  // States written before "bits" existed hold doubles.
  const std::vector<int> bits =
      attrs.contains("bits") ? attrs.at("bits").get<std::vector<int>>() : std::vector<int>(names.size(), 64);
  if (bits.size() != names.size())
    throw std::runtime_error("ema: the saved state has " + std::to_string(bits.size()) + " dtypes for " +
                             std::to_string(names.size()) + " EMA weights");
  std::vector<support::TensorCopy> out;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string bytes = support::base64_decode(attrs.at("weights").at(names[i]).get<std::string>());
    out.push_back(support::TensorCopy::from_bytes(bits[i], bytes, "ema: EMA weight '" + names[i] + "'"));
  }
  return out;
}

}  // namespace

void EmaCallback::load_state(const std::string& state_json) {
  const nlohmann::json j = nlohmann::json::parse(state_json);
  const nlohmann::json& a = j.at("attributes");
  updates_ = a.at("num_updates").get<int64_t>();
  steps_seen_ = a.at("steps_seen").get<int64_t>();
  names_ = a.at("names").get<std::vector<std::string>>();
  shadow_ = decode_weights(a, names_);
}

// With --load_best_model_at_end the trainer has loaded the best checkpoint's
// weights before on_train_end; the EMA weights saved with that checkpoint (in
// its trainer_state.json, this callback's state) are the ones its evaluation
// used. Empty when there is no best checkpoint or it cannot be read (then the
// trainer kept the last weights too, and the current EMA weights are used).
std::vector<support::TensorCopy> EmaCallback::best_checkpoint_weights(const th_state& st) const {
  if (st.best_model_checkpoint == nullptr) return {};
  if (!host_.training_arg<bool>("load_best_model_at_end", false)) return {};
  const std::string path = std::string(st.best_model_checkpoint) + "/trainer_state.json";
  try {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot be opened");
    const nlohmann::json j = nlohmann::json::parse(in);
    const nlohmann::json& a = j.at("stateful_callbacks").at("ema").at("attributes");
    const auto names = a.at("names").get<std::vector<std::string>>();
    if (names != names_) throw std::runtime_error("its EMA weights are for other parameters");
    auto w = decode_weights(a, names);
    for (size_t i = 0; i < w.size(); ++i) {
      if (w[i].numel() != shadow_[i].numel())
        throw std::runtime_error("EMA weight '" + names[i] + "' has another size");
    }
    return w;
  } catch (const std::exception& ex) {
    host_.warn("ema: the best checkpoint's EMA weights (" + path + ") could not be read (" + ex.what() +
               "); the final model gets the last EMA weights");
    return {};
  }
}

}  // namespace trainhook::ema
