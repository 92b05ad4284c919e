#include <trainhook/models/torchscript_model.hpp>

#include <trainhook/data/tensor_file.hpp>
#include <trainhook/models/losses.hpp>
#include <trainhook/strings.hpp>

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/csrc/jit/serialization/import.h>
#include <torch/version.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <unordered_set>

namespace fs = std::filesystem;

namespace trainhook {
namespace {

const char* const kInputAliases[] = {"input", "inputs", "x", "input_ids", "features"};
const char* const kLabelAliases[] = {"labels", "label", "target", "targets", "y"};

template <size_t N>
bool is_one_of(const std::string& s, const char* const (&names)[N]) {
  for (const char* n : names) {
    if (s == n) return true;
  }
  return false;
}

std::string list(const std::vector<std::string>& names) { return strings::join(names, ", "); }

std::string error_text(const c10::Error& e) {
  std::string s = e.what_without_backtrace();
  // LibTorch appends "Exception raised from ..." lines; the first line is the message.
  const auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

// Registers the script module's parameters and buffers (same tensors) under
// the script module's names, submodule by submodule, so named_parameters()
// gives state-dict names. Shared (tied) tensors are registered once.
void mirror(torch::nn::Module& into, const torch::jit::Module& from, std::unordered_set<const void*>& seen) {
  for (const auto& p : from.named_parameters(/*recurse=*/false)) {
    if (!seen.insert(p.value.unsafeGetTensorImpl()).second) continue;
    into.register_parameter(p.name, p.value, p.value.requires_grad());
  }
  for (const auto& b : from.named_buffers(/*recurse=*/false)) {
    if (!seen.insert(b.value.unsafeGetTensorImpl()).second) continue;
    into.register_buffer(b.name, b.value);
  }
  for (const auto& c : from.named_children()) {
    auto child = std::make_shared<torch::nn::Module>(c.name);
    mirror(*child, c.value, seen);
    into.register_module(c.name, child);
  }
}

}  // namespace

void check_torchscript_archive(const fs::path& file) {
  if (!fs::exists(file)) throw std::runtime_error(file.string() + ": no such file (--model_name_or_path)");
  char magic[4] = {};
  {
    std::ifstream in(file, std::ios::binary);
    in.read(magic, 4);
  }
  const bool zip = magic[0] == 'P' && magic[1] == 'K';
  if (!zip) {
    throw std::runtime_error(file.string() +
                             ": not a TorchScript archive (not a zip file; a legacy torch.save pickle or "
                             "another format). Save the model with torch.jit.save(torch.jit.script(model), "
                             "path) or torch.jit.trace");
  }
  std::unique_ptr<caffe2::serialize::PyTorchStreamReader> reader;
  try {
    reader = std::make_unique<caffe2::serialize::PyTorchStreamReader>(file.string());
  } catch (const c10::Error& e) {
    const std::string msg = error_text(e);
    if (auto newer = newer_pytorch_message(file, msg)) throw std::runtime_error(*newer);
    throw std::runtime_error(file.string() + ": not a readable TorchScript archive (" + msg + ")");
  }
  // torch.jit.save writes constants.pkl (and code/); torch.save only data.pkl.
  if (!reader->hasRecord("constants.pkl")) {
    const bool pickle = reader->hasRecord("data.pkl");
    throw std::runtime_error(
        file.string() + ": not a TorchScript archive" +
        (pickle ? std::string(" but a torch.save pickle (an eager module or a state dict)") : std::string()) +
        ". Save the model with torch.jit.save(torch.jit.script(model), path) or torch.jit.trace");
  }
}

ScriptModuleParameters::ScriptModuleParameters(TorchScriptModel& owner)
    : torch::nn::Module("TorchScriptModel"), owner_(owner) {}

void ScriptModuleParameters::train(bool on) {
  torch::nn::Module::train(on);
  owner_.script_module().train(on);
}

void ScriptModuleParameters::save_weights(const fs::path& file) { owner_.save(file); }

void ScriptModuleParameters::load_weights(const fs::path& file) { owner_.load_weights(file); }

TorchScriptModel::TorchScriptModel(const fs::path& file, TorchScriptOptions options)
    : file_(file), loss_name_(std::move(options.loss_)) {
  check_torchscript_archive(file);
  try {
    script_ = std::make_unique<torch::jit::Module>(torch::jit::load(file.string()));
  } catch (const c10::Error& e) {
    throw std::runtime_error(file.string() + ": cannot load the TorchScript archive (" + error_text(e) +
                             "); an operator unknown to LibTorch " TORCH_VERSION
                             " means a newer PyTorch saved it");
  }
  // The plain interpreter: the profiling executor would switch to other
  // (autodiff) graphs after a few runs, so a resumed run would not repeat the
  // uninterrupted one bit for bit.
  torch::jit::setGraphExecutorOptimize(false);
  const auto method = script_->find_method("forward");
  if (!method) throw std::runtime_error(file.string() + ": the TorchScript module has no forward method");
  const auto& schema = method->function().getSchema();
  for (size_t i = 1; i < schema.arguments().size(); ++i) {
    arguments_.push_back(schema.arguments()[i].name());
    has_default_.push_back(schema.arguments()[i].default_value().has_value());
  }
  if (loss_name_) loss_fn_ = make_loss(*loss_name_);
  if (!loss_fn_ && schema.returns().size() == 1 &&
      schema.returns()[0].type()->kind() == c10::TypeKind::TensorType) {
    throw std::runtime_error(
        file.string() +
        ": forward returns a plain tensor, so there is no loss to train on; pass --loss "
        "cross_entropy, mse, bce_with_logits or l1 (or return {\"loss\": ..., \"logits\": "
        "...} from forward)");
  }
  parameters_ = std::make_shared<ScriptModuleParameters>(*this);
  std::unordered_set<const void*> seen;
  mirror(*parameters_, *script_, seen);
  parameters_->train(true);
}

TorchScriptModel::~TorchScriptModel() = default;

void TorchScriptModel::bind(const std::vector<std::string>& names, const std::string& input_name,
                            const std::string& label_name, const std::string& source) {
  auto has = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  std::vector<Binding> bindings;
  std::vector<std::string> missing;
  bool labels = false;
  for (size_t i = 0; i < arguments_.size(); ++i) {
    const std::string& arg = arguments_[i];
    std::string tensor;
    if (has(arg)) {
      tensor = arg;
    } else if (is_one_of(arg, kInputAliases) && has(input_name)) {
      tensor = input_name;
    } else if (is_one_of(arg, kLabelAliases) && has(label_name)) {
      tensor = label_name;
    }
    if (tensor.empty()) {
      if (!has_default_[i]) missing.push_back(arg);
      continue;
    }
    labels = labels || tensor == label_name;
    bindings.push_back({arg, tensor});
  }
  const std::string data = source.empty() ? std::string("the data") : source;
  if (!missing.empty() || bindings.empty()) {
    throw std::invalid_argument(
        file_.string() + ": forward(" + list(arguments_) + ") " +
        (bindings.empty() ? std::string("has no argument named after a tensor of ") + data
                          : "takes '" + list(missing) + "', which no tensor of " + data + " is named") +
        " (" + data + " has: " + list(names) + "; input/inputs/x/input_ids stand for '" + input_name +
        "' and labels/label/target/y for '" + label_name + "')");
  }
  bindings_ = std::move(bindings);
  passes_labels_ = labels;
  bound_ = true;
}

ModelOutput TorchScriptModel::forward_batch(const Batch& batch) {
  if (!bound_) bind(batch.names(), batch.input_name, batch.label_name, "");
  torch::jit::Kwargs kwargs;
  for (const auto& b : bindings_) kwargs.emplace(b.argument, *batch.find(b.tensor));
  c10::IValue out;
  try {
    out = script_->get_method("forward")({}, kwargs);
  } catch (const c10::Error& e) {
    throw std::runtime_error(file_.string() + ": forward failed on a batch (" + error_text(e) + ")");
  }
  return interpret(out, batch);
}

ModelOutput TorchScriptModel::interpret(const c10::IValue& out, const Batch& batch) {
  ModelOutput r;
  std::string shape = "a tensor";
  if (out.isTensor()) {
    r.outputs = out.toTensor();
  } else if (out.isGenericDict()) {
    shape = "a dict";
    torch::Tensor first;
    for (const auto& e : out.toGenericDict()) {
      if (!e.key().isString() || !e.value().isTensor()) continue;
      const std::string& k = e.key().toStringRef();
      if (k == "loss") {
        r.loss = e.value().toTensor();
      } else if (k == "logits") {
        r.outputs = e.value().toTensor();
      } else if (!first.defined()) {
        first = e.value().toTensor();
      }
    }
    if (!r.outputs.defined()) r.outputs = first;
  } else if (out.isTuple()) {
    shape = "a tuple";
    const auto& el = out.toTupleRef().elements();
    // HF: with labels passed, a model's tuple output starts with the loss.
    if (passes_labels_ && el.size() >= 2 && el[0].isTensor() && el[0].toTensor().dim() == 0 &&
        el[1].isTensor()) {
      r.loss = el[0].toTensor();
      r.outputs = el[1].toTensor();
    } else if (!el.empty() && el[0].isTensor()) {
      r.outputs = el[0].toTensor();
    }
  }
  if (!r.outputs.defined() && !r.loss.defined()) {
    throw std::runtime_error(
        file_.string() + ": forward returned " + out.tagKind() +
        ", expected a tensor, a dict of tensors (\"loss\", \"logits\") or a tuple of tensors");
  }
  if (!r.loss.defined()) {
    if (!loss_fn_) {
      throw std::runtime_error(file_.string() + ": forward returned " + shape +
                               " with no loss; pass --loss cross_entropy, mse, bce_with_logits or l1, or "
                               "return {\"loss\": ..., \"logits\": ...} from forward");
    }
    if (!batch.labels.defined())
      throw std::runtime_error(file_.string() + ": --loss needs labels in the batch");
    r.loss = loss_fn_(r.outputs, batch.labels);
  }
  if (!r.outputs.defined()) r.outputs = r.loss.detach().reshape({1}).expand({batch.inputs.size(0)});
  return r;
}

torch::Tensor TorchScriptModel::forward(const torch::Tensor& inputs) {
  Batch b;
  b.inputs = inputs;
  if (!bound_) {
    bind({b.input_name}, b.input_name, b.label_name, "the inputs alone");
  }
  for (const auto& binding : bindings_) {
    if (binding.tensor != b.input_name) {
      throw std::runtime_error(file_.string() + ": forward needs '" + binding.argument +
                               "' besides the inputs; call forward_batch with a whole batch");
    }
  }
  torch::jit::Kwargs kwargs;
  for (const auto& binding : bindings_) kwargs.emplace(binding.argument, inputs);
  const auto out = script_->get_method("forward")({}, kwargs);
  if (out.isTensor()) return out.toTensor();
  return interpret(out, b).outputs;
}

torch::Tensor TorchScriptModel::loss(const torch::Tensor& outputs, const torch::Tensor& labels) {
  if (!loss_fn_) {
    throw std::runtime_error(file_.string() +
                             ": the model computes its own loss in forward (no --loss given)");
  }
  return loss_fn_(outputs, labels);
}

std::string TorchScriptModel::description() const {
  return "torchscript(" + file_.filename().string() + ", " + script_->type()->name()->qualifiedName() + ")";
}

void TorchScriptModel::save(const fs::path& file) { script_->save(file.string()); }

void TorchScriptModel::load_weights(const fs::path& file) {
  check_torchscript_archive(file);
  torch::jit::Module saved;
  try {
    saved = torch::jit::load(file.string());
  } catch (const c10::Error& e) {
    throw std::runtime_error(file.string() + ": cannot load the TorchScript archive (" + error_text(e) + ")");
  }
  std::unordered_map<std::string, torch::Tensor> source;
  for (const auto& p : saved.named_parameters()) source.emplace(p.name, p.value);
  for (const auto& b : saved.named_buffers()) source.emplace(b.name, b.value);
  torch::NoGradGuard no_grad;
  auto copy = [&](const std::string& name, torch::Tensor& into) {
    const auto it = source.find(name);
    if (it == source.end()) {
      throw std::runtime_error(file.string() + ": has no tensor '" + name +
                               "' (a different architecture than " + file_.string() + ")");
    }
    if (it->second.sizes() != into.sizes()) {
      throw std::runtime_error(file.string() + ": tensor '" + name + "' has shape " +
                               c10::str(it->second.sizes()) + " but the model's is " +
                               c10::str(into.sizes()));
    }
    into.copy_(it->second);
  };
  for (auto& p : parameters_->named_parameters()) copy(p.key(), p.value());
  for (auto& b : parameters_->named_buffers()) copy(b.key(), b.value());
}

}  // namespace trainhook
