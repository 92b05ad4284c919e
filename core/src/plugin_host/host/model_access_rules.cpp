// The rules of abi.h's "tensor views" table and of the 1.1 host functions,
// written once (ModelAccess implementations call these before acting).
#include <trainhook/callbacks/callback_handler.hpp>
#include <trainhook/plugin_host/host/model_access.hpp>

#include <cmath>

namespace trainhook::model_access_rules {
namespace {

const char* kind_name(int32_t kind) {
  switch (kind) {
    case TH_TENSORS_PARAMETERS:
      return "parameters";
    case TH_TENSORS_GRADIENTS:
      return "gradients";
    case TH_TENSORS_BUFFERS:
      return "buffers";
    default:
      return nullptr;
  }
}

bool readable(int32_t event, int32_t kind) {
  if (kind != TH_TENSORS_GRADIENTS) return true;
  return event == TH_EVENT_SUBSTEP_END || event == TH_EVENT_PRE_OPTIMIZER_STEP ||
         event == TH_EVENT_OPTIMIZER_STEP;
}

bool writable(int32_t event, int32_t kind) {
  if (kind == TH_TENSORS_GRADIENTS) return event == TH_EVENT_PRE_OPTIMIZER_STEP;
  return event == TH_EVENT_OPTIMIZER_STEP || event == TH_EVENT_STEP_END || event == TH_EVENT_EVALUATE_BEGIN ||
         event == TH_EVENT_EVALUATE || event == TH_EVENT_TRAIN_END;
}

std::string event_text(int32_t event) {
  return event < 0 ? std::string("outside any event") : event_name(event);
}

}  // namespace

std::string check_tensors(int32_t event, int32_t kind, int32_t access) {
  const char* name = kind_name(kind);
  if (name == nullptr)
    return "tensors: unknown kind " + std::to_string(kind) +
           " (expected TH_TENSORS_PARAMETERS, TH_TENSORS_GRADIENTS or TH_TENSORS_BUFFERS)";
  if (access != TH_ACCESS_READ && access != TH_ACCESS_WRITE)
    return "tensors: unknown access " + std::to_string(access) +
           " (expected TH_ACCESS_READ or TH_ACCESS_WRITE)";
  if (!readable(event, kind))
    return std::string("tensors: ") + name + " are not readable in " + event_text(event) +
           " (gradients are readable in on_substep_end, on_pre_optimizer_step and on_optimizer_step)";
  if (access == TH_ACCESS_WRITE && !writable(event, kind)) {
    return std::string("tensors: ") + name + " may not be written in " + event_text(event) +
           (kind == TH_TENSORS_GRADIENTS ? " (gradients are writable in on_pre_optimizer_step only)"
                                         : " (writable in on_optimizer_step, on_step_end, on_evaluate_begin, "
                                           "on_evaluate and on_train_end)");
  }
  return "";
}

std::string check_factor(double factor) {
  if (!std::isfinite(factor) || factor <= 0)
    return "set_lr_factor: the factor must be a finite number > 0, got " + std::to_string(factor);
  return "";
}

std::string check_metric(const std::string& name, double value) {
  if (name.empty()) return "add_metric: the metric name is empty";
  if (name.size() > 256) return "add_metric: the metric name is longer than 256 characters";
  for (const char c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return "add_metric: the metric name '" + name + "' has a control character";
  }
  static const char* const own[] = {"loss", "learning_rate", "grad_norm", "epoch", "step"};
  for (const char* o : own) {
    if (name == o)
      return "add_metric: '" + name + "' is one of the trainer's own log keys; choose another name";
  }
  if (!std::isfinite(value))
    return "add_metric: the value of '" + name + "' is " + (std::isnan(value) ? "NaN" : "infinite") +
           " (log_history is JSON, which cannot hold it)";
  return "";
}

std::string check_skip(int32_t event) {
  if (event != TH_EVENT_PRE_OPTIMIZER_STEP)
    return "skip_optimizer_step: only in on_pre_optimizer_step, not " + event_text(event);
  return "";
}

}  // namespace trainhook::model_access_rules
