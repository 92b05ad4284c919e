// tensor_reader: a callback that needs the model's tensor views (it adds the
// number of parameter tensors and their element count as metrics at every
// step end), and so refuses at creation, with its own message, when the host
// says it runs isolated (th_host.isolated, ABI 1.4). Built twice by
// tests/sdk/CMakeLists.txt: as is, and with TRAINHOOK_ABI_MIN_MINOR=1 (loads
// into 1.1 hosts, which cannot say; it then fails at its first step instead).
// Used by test_isolated_create.cpp (the test host) and cli_isolated_create.sh
// (the trainer, --plugin_isolation).
#include <trainhook/plugin.hpp>

struct TensorReader final : trainhook::Callback {
  trainhook::Host host;
  explicit TensorReader(trainhook::Setup& setup) : host(setup.host()) {
    if (host.isolated())
      throw trainhook::ConfigError(
          "tensor_reader reads the model's tensors, which an isolated callback is not given; run it in "
          "process "
          "(leave it out of plugin_isolation)");
    if (!host.has_model_access()) throw trainhook::ConfigError("tensor_reader needs a 1.1 host");
  }
  void on_step_end(trainhook::Event&) override {
    double count = 0, elements = 0;
    for (const trainhook::TensorView t : host.tensors(trainhook::Tensors::parameters)) {
      count += 1;
      elements += static_cast<double>(t.numel());
    }
    host.add_metric("tensor_reader/tensors", count);
    host.add_metric("tensor_reader/elements", elements);
  }
};
TRAINHOOK_PLUGIN(
    "tensor_reader", "1.0.0",
    trainhook::callback<TensorReader>("tensor_reader", "1.0.0", trainhook::Kind::callback,
                                      "counts the model's parameter tensors (needs tensor views)"))
