// The per-layer gradient-norm example: docs/plugins.md shows the code below this
// comment verbatim (cli_model_access.sh checks it, and the README links here),
// and cli_model_access.sh builds and runs it, so the documented example works.
#include <trainhook/plugin.hpp>

#include <cmath>

struct LayerGradNorms final : trainhook::Callback {
  trainhook::Host host;
  explicit LayerGradNorms(trainhook::Setup& setup) : host(setup.host()) {
    if (!host.has_model_access()) throw trainhook::ConfigError("layer_grad_norms needs a 1.1 host");
  }
  void on_pre_optimizer_step(trainhook::Event& e) override {  // every logging_steps
    const auto& st = e.state();
    if (st.logging_steps <= 0 || (st.global_step + 1) % st.logging_steps != 0) return;
    for (const trainhook::TensorView t : host.tensors(trainhook::Tensors::gradients)) {
      if (!t.defined()) continue;
      const float* g = t.floats();  // contiguous float32 on the CPU, borrowed for this call
      double sum = 0;
      for (int64_t i = 0; i < t.numel(); ++i) sum += double(g[i]) * g[i];
      host.add_metric("grad_norm/" + std::string(t.name()), std::sqrt(sum));
    }
  }
};
TRAINHOOK_PLUGIN("layer_grad_norms", "1.0.0",
                 trainhook::callback<LayerGradNorms>("layer_grad_norms", "1.0.0", trainhook::Kind::callback,
                                                     "per-layer gradient L2 norms in the logs"))
