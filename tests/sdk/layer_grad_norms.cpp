// The per-layer gradient-norm example of sdk/CHANGELOG.md (1.1), built and run
// by cli_model_access.sh so the documented example keeps working.
#include <trainhook/plugin.hpp>

#include <cmath>

class LayerGradNorms final : public trainhook::Callback {
 public:
  explicit LayerGradNorms(trainhook::Setup& setup) : host_(setup.host()) {
    if (!host_.has_model_access()) throw trainhook::ConfigError("layer_grad_norms needs a 1.1 host");
  }
  void on_pre_optimizer_step(trainhook::Event& e) override {
    const auto& st = e.state();
    if (st.logging_steps <= 0 || (st.global_step + 1) % st.logging_steps != 0) return;
    for (const trainhook::TensorView t : host_.tensors(trainhook::Tensors::gradients)) {
      if (!t.defined()) continue;
      const float* g = t.floats();  // contiguous float32 on the CPU, borrowed for this call
      double sum = 0;
      for (int64_t i = 0; i < t.numel(); ++i) sum += double(g[i]) * g[i];
      host_.add_metric("grad_norm/" + std::string(t.name()), std::sqrt(sum));
    }
  }

 private:
  trainhook::Host host_;
};

TRAINHOOK_PLUGIN("layer_grad_norms", "1.0.0",
                 trainhook::callback<LayerGradNorms>("layer_grad_norms", "1.0.0", trainhook::Kind::callback,
                                                     "per-layer gradient L2 norms in the logs"))
