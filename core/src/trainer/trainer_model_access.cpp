#include "trainer_model_access.hpp"

#include <trainhook/optim/optimizer_factory.hpp>

#include <cmath>
#include <limits>

namespace trainhook {
namespace {

DLDataType dl_dtype(const torch::Tensor& t) {
  DLDataType d{};
  d.lanes = 1;
  d.bits = static_cast<uint8_t>(t.element_size() * 8);
  switch (t.scalar_type()) {
    case torch::kFloat:
    case torch::kDouble:
    case torch::kHalf:
      d.code = kDLFloat;
      break;
    case torch::kBFloat16:
      d.code = kDLBfloat;
      break;
    case torch::kBool:
    case torch::kByte:
      d.code = kDLUInt;
      break;
    default:
      d.code = kDLInt;
      break;
  }
  return d;
}

// Points `dl` at `t` (no copy). `t` must stay alive: the views keep the handle.
void fill(DLTensor& dl, const torch::Tensor& t) {
  if (!t.defined()) {
    dl = DLTensor{};
    return;
  }
  dl.data = t.data_ptr();
  dl.device.device_type = t.is_cuda() ? kDLCUDA : kDLCPU;
  dl.device.device_id = t.is_cuda() ? t.device().index() : 0;
  dl.ndim = static_cast<int32_t>(t.dim());
  dl.dtype = dl_dtype(t);
  dl.shape = const_cast<int64_t*>(t.sizes().data());
  dl.strides = const_cast<int64_t*>(t.strides().data());
  dl.byte_offset = 0;  // data_ptr() already includes the storage offset
}

class LrFactorState final : public detail::InternalCallback {
 public:
  explicit LrFactorState(double& factor) : factor_(factor) {}
  std::string name() const override { return kLrFactorCallbackName; }
  uint64_t event_mask() const override { return 0; }
  void on_event(EventId, const th_event_args&) override {}
  std::optional<nlohmann::json> save_state() override {
    if (factor_ == 1.0) return std::nullopt;  // the plain schedule: nothing to keep
    return nlohmann::json{{"args", nlohmann::json::object()}, {"attributes", {{"lr_factor", factor_}}}};
  }
  void load_state(const nlohmann::json& state) override {
    const auto& attrs = state.at("attributes");
    const double f = attrs.at("lr_factor").get<double>();
    const std::string why = model_access_rules::check_factor(f);
    if (!why.empty()) throw std::runtime_error("checkpoint lr_factor: " + why);
    factor_ = f;
  }

 private:
  double& factor_;
};

}  // namespace

TrainerModelAccess::Views& TrainerModelAccess::views(int32_t kind) {
  auto& slot = kind == TH_TENSORS_PARAMETERS ? params_ : kind == TH_TENSORS_GRADIENTS ? grads_ : buffers_;
  if (!slot) {
    // Names and handles once: the module's structure does not change in a run.
    Views v;
    auto& module = trainer_.model->module();
    if (kind == TH_TENSORS_BUFFERS) {
      for (const auto& item : module.named_buffers(true)) {
        v.names.push_back(item.key());
        v.tensors.push_back(item.value());
      }
    } else {
      for (const auto& item : module.named_parameters(true)) {
        v.names.push_back(item.key());
        v.tensors.push_back(item.value());
      }
    }
    for (const auto& n : v.names) v.name_ptrs.push_back(n.c_str());
    v.dl.resize(v.tensors.size());
    slot = std::move(v);
  }
  return *slot;
}

std::string TrainerModelAccess::tensors(int32_t kind, int32_t access, th_tensor_list& out) {
  std::string why = model_access_rules::check_tensors(trainer_.handler.current_event(), kind, access);
  if (!why.empty()) return why;
  Views& v = views(kind);
  for (size_t i = 0; i < v.tensors.size(); ++i) {
    // Gradients are re-created by backward after zero_grad: read the handle now.
    if (kind == TH_TENSORS_GRADIENTS) {
      fill(v.dl[i], v.tensors[i].grad());
    } else {
      fill(v.dl[i], v.tensors[i]);
    }
  }
  out.count = static_cast<uint32_t>(v.tensors.size());
  out.names = v.name_ptrs.data();
  out.tensors = v.dl.data();
  return "";
}

std::string TrainerModelAccess::learning_rates(double* out, uint32_t capacity, uint32_t& count) {
  if (!trainer_.optimizer) return "learning_rates: no optimizer yet (ask from on_train_begin on)";
  const auto& groups = trainer_.optimizer->param_groups();
  count = static_cast<uint32_t>(groups.size());
  for (uint32_t i = 0; i < count && i < capacity; ++i) out[i] = groups[i].options().get_lr();
  return "";
}

std::string TrainerModelAccess::set_lr_factor(double factor) {
  std::string why = model_access_rules::check_factor(factor);
  if (!why.empty()) return why;
  factor_ = factor;
  if (trainer_.optimizer && trainer_.scheduler) set_learning_rate(*trainer_.optimizer, lr());
  return "";
}

std::string TrainerModelAccess::add_metric(const std::string& name, double value) {
  std::string why = model_access_rules::check_metric(name, value);
  if (!why.empty()) return why;
  pending_[name] = value;
  return "";
}

std::string TrainerModelAccess::skip_optimizer_step() {
  std::string why = model_access_rules::check_skip(trainer_.handler.current_event());
  if (!why.empty()) return why;
  skip_ = true;
  return "";
}

double TrainerModelAccess::lr() const {
  return trainer_.scheduler ? trainer_.scheduler->lr() * factor_ : 0.0;
}

void TrainerModelAccess::add_micro_loss(double loss) {
  if (window_closed_) {
    window_loss_ = 0;
    window_closed_ = false;
  }
  window_loss_ += loss;
}

void TrainerModelAccess::end_window(std::optional<double> grad_norm_before_clipping) {
  step_.struct_size = TH_STEP_VALUES_STRUCT_SIZE;
  step_.loss = window_loss_;
  step_.grad_norm = grad_norm_before_clipping.value_or(std::numeric_limits<double>::quiet_NaN());
  step_.learning_rate = trainer_.optimizer && !trainer_.optimizer->param_groups().empty()
                            ? trainer_.optimizer->param_groups()[0].options().get_lr()
                            : lr();
  window_closed_ = true;
}

bool TrainerModelAccess::take_skip() noexcept {
  const bool s = skip_;
  skip_ = false;
  return s;
}

EventPayload TrainerModelAccess::payload(EventId event, const EventPayload& payload) const {
  EventPayload p = payload;
  if (window_closed_ && (event == TH_EVENT_PRE_OPTIMIZER_STEP || event == TH_EVENT_OPTIMIZER_STEP ||
                         event == TH_EVENT_STEP_END))
    p.step = &step_;
  return p;
}

void TrainerModelAccess::merge_metrics(Metrics& logs) {
  for (const auto& [k, v] : pending_) logs[k] = v;
  pending_.clear();
}

std::unique_ptr<detail::InternalCallback> TrainerModelAccess::state_callback() {
  return std::make_unique<LrFactorState>(factor_);
}

}  // namespace trainhook
