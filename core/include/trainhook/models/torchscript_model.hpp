// A model from Python: a TorchScript archive (torch.jit.script or
// torch.jit.trace, then torch.jit.save) trained like the built-in models.
//
// A batch reaches forward() by name, as HF's Trainer passes a batch dict as
// keyword arguments: each forward argument takes the data tensor of its name
// (input/inputs/x/input_ids stand for the data's input tensor and
// labels/label/target/y for its labels); arguments with defaults may be left
// out. If forward returns a dict (or a tuple) with a loss, that is the loss
// (HF's convention: "loss" and "logits" keys, or (loss, logits) when labels
// were passed); otherwise the --loss function is applied to its output.
//
// Ownership: the model owns the loaded torch::jit::Module; module() is an
// nn::Module that holds the very same parameter and buffer tensors under their
// state-dict names ("fc1.weight"), so optimizers, gradient reduction, plugins
// and safetensors see them like any built-in model's. Checkpoints save the
// archive itself (save(), through module()'s OwnWeightsFile), which Python's
// torch.jit.load opens.
#pragma once

#include <trainhook/models/model.hpp>
#include <trainhook/models/own_weights_file.hpp>

#include <torch/nn/module.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace c10 {
struct IValue;
}
namespace torch::jit {
struct Module;
}

namespace trainhook {

class TorchScriptModel;

// module() of a TorchScriptModel: switches the script module's training mode
// with its own, and its weights file is the model's archive (save() and
// load_weights() of the owner).
class ScriptModuleParameters final : public torch::nn::Module, public OwnWeightsFile {
 public:
  explicit ScriptModuleParameters(TorchScriptModel& owner);
  void train(bool on = true) override;
  void save_weights(const std::filesystem::path& file) override;
  void load_weights(const std::filesystem::path& file) override;
  TorchScriptModel& owner() noexcept { return owner_; }

 private:
  TorchScriptModel& owner_;
};

struct TorchScriptOptions {
  // --loss: applied when forward's output has no loss of its own.
  TorchScriptOptions& loss(std::optional<std::string> name) {
    loss_ = std::move(name);
    return *this;
  }
  std::optional<std::string> loss_;
};

class TorchScriptModel final : public Model {
 public:
  // Throws std::runtime_error naming the file: missing, not a TorchScript
  // archive (e.g. an eager torch.save pickle), saved by a newer PyTorch than
  // this LibTorch reads, no forward, a forward that returns a plain tensor
  // with no --loss; std::invalid_argument for an unknown --loss.
  TorchScriptModel(const std::filesystem::path& file, TorchScriptOptions options = {});
  ~TorchScriptModel() override;

  torch::nn::Module& module() override { return *parameters_; }
  // forward() with the inputs alone (forward must need no other tensor).
  torch::Tensor forward(const torch::Tensor& inputs) override;
  // The --loss function; throws when there is none (the model brings its own).
  torch::Tensor loss(const torch::Tensor& outputs, const torch::Tensor& labels) override;
  ModelOutput forward_batch(const Batch& batch) override;
  std::string description() const override;

  // Matches forward's arguments to the data's tensor names once (forward_batch
  // does it at the first batch otherwise). Throws std::invalid_argument naming
  // the model file and `source` and listing both sets of names when an
  // argument without a default has no tensor, or no argument has one.
  void bind(const std::vector<std::string>& names, const std::string& input_name,
            const std::string& label_name, const std::string& source);

  // The archive with the current weights (torch.jit.load-able).
  void save(const std::filesystem::path& file);
  // Copies the weights of a saved archive (of the same architecture) into this
  // model. Throws std::runtime_error naming the file on a mismatch.
  void load_weights(const std::filesystem::path& file);
  torch::jit::Module& script_module() noexcept { return *script_; }

 private:
  struct Binding {
    std::string argument;
    std::string tensor;
  };
  ModelOutput interpret(const c10::IValue& out, const Batch& batch);

  std::filesystem::path file_;
  std::unique_ptr<torch::jit::Module> script_;
  std::shared_ptr<ScriptModuleParameters> parameters_;
  std::optional<std::string> loss_name_;
  LossFn loss_fn_;
  std::vector<std::string> arguments_;
  std::vector<bool> has_default_;
  std::vector<Binding> bindings_;
  bool bound_ = false;
  bool passes_labels_ = false;
};

// Throws std::runtime_error naming `file` unless it is a TorchScript archive
// this LibTorch can read (the checks TorchScriptModel's constructor makes).
void check_torchscript_archive(const std::filesystem::path& file);

}  // namespace trainhook
