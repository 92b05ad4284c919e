// torch.optim's state_dict layout for LibTorch's AdamW, SGD, Adagrad and
// RMSprop: the options of each group under torch.optim's names, each
// parameter's state under its tensor names, "step" as torch.optim keeps it (a
// float32 scalar tensor).
#include <trainhook/checkpoint/hf_optimizer_file.hpp>

#include <trainhook/checkpoint/torch_pickle_io.hpp>

#include <torch/optim/adagrad.h>
#include <torch/optim/adamw.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

#include <sstream>
#include <stdexcept>
#include <type_traits>

namespace fs = std::filesystem;

namespace trainhook {
namespace {

using Kind = PickleNode::Kind;
using torch::optim::Optimizer;
namespace pv = pickle_values;

// LibTorch keys the state by the parameter's TensorImpl: as a string in 1.13,
// as the pointer in 2.x.
template <class Map>
typename Map::key_type state_key(const Map&, const torch::Tensor& p) {
  if constexpr (std::is_same_v<typename Map::key_type, std::string>) {
    std::ostringstream s;
    s << p.unsafeGetTensorImpl();
    return s.str();
  } else {
    return static_cast<typename Map::key_type>(p.unsafeGetTensorImpl());
  }
}

enum class Algo { AdamW, SGD, Adagrad, RMSprop };

Algo algorithm_of(const Optimizer& o) {
  if (dynamic_cast<const torch::optim::AdamW*>(&o) != nullptr) return Algo::AdamW;
  if (dynamic_cast<const torch::optim::SGD*>(&o) != nullptr) return Algo::SGD;
  if (dynamic_cast<const torch::optim::Adagrad*>(&o) != nullptr) return Algo::Adagrad;
  if (dynamic_cast<const torch::optim::RMSprop*>(&o) != nullptr) return Algo::RMSprop;
  throw std::runtime_error(
      "optimizer.pt: only AdamW, SGD, Adagrad and RMSprop have a torch.optim state layout here");
}

const char* algo_name(Algo a) {
  switch (a) {
    case Algo::AdamW:
      return "AdamW";
    case Algo::SGD:
      return "SGD";
    case Algo::Adagrad:
      return "Adagrad";
    case Algo::RMSprop:
      return "RMSprop";
  }
  return "?";
}

c10::IValue step_tensor(int64_t step) { return torch::tensor(static_cast<float>(step)); }

c10::IValue saved(const torch::Tensor& t) { return t.detach().to(torch::kCPU).contiguous().clone(); }

c10::impl::GenericDict group_options(Algo algo, const torch::optim::OptimizerOptions& options) {
  auto g = pv::dict_of_strings();
  switch (algo) {
    case Algo::AdamW: {
      const auto& o = static_cast<const torch::optim::AdamWOptions&>(options);
      g.insert("lr", o.lr());
      g.insert("betas", pv::tuple({std::get<0>(o.betas()), std::get<1>(o.betas())}));
      g.insert("eps", o.eps());
      g.insert("weight_decay", o.weight_decay());
      g.insert("amsgrad", o.amsgrad());
      g.insert("foreach", c10::IValue());
      g.insert("maximize", false);
      g.insert("capturable", false);
      g.insert("differentiable", false);
      g.insert("fused", c10::IValue());
      break;
    }
    case Algo::SGD: {
      const auto& o = static_cast<const torch::optim::SGDOptions&>(options);
      g.insert("lr", o.lr());
      g.insert("momentum", o.momentum());
      g.insert("dampening", o.dampening());
      g.insert("weight_decay", o.weight_decay());
      g.insert("nesterov", o.nesterov());
      g.insert("maximize", false);
      g.insert("foreach", c10::IValue());
      g.insert("differentiable", false);
      g.insert("fused", c10::IValue());
      break;
    }
    case Algo::Adagrad: {
      const auto& o = static_cast<const torch::optim::AdagradOptions&>(options);
      g.insert("lr", o.lr());
      g.insert("lr_decay", o.lr_decay());
      g.insert("weight_decay", o.weight_decay());
      g.insert("initial_accumulator_value", o.initial_accumulator_value());
      g.insert("eps", o.eps());
      g.insert("foreach", c10::IValue());
      g.insert("maximize", false);
      g.insert("differentiable", false);
      g.insert("fused", c10::IValue());
      break;
    }
    case Algo::RMSprop: {
      const auto& o = static_cast<const torch::optim::RMSpropOptions&>(options);
      g.insert("lr", o.lr());
      g.insert("momentum", o.momentum());
      g.insert("alpha", o.alpha());
      g.insert("eps", o.eps());
      g.insert("centered", o.centered());
      g.insert("weight_decay", o.weight_decay());
      g.insert("foreach", c10::IValue());
      g.insert("maximize", false);
      g.insert("differentiable", false);
      g.insert("capturable", false);
      break;
    }
  }
  return g;
}

c10::impl::GenericDict param_state(Algo algo, const torch::optim::OptimizerParamState& state) {
  auto s = pv::dict_of_strings();
  switch (algo) {
    case Algo::AdamW: {
      const auto& a = static_cast<const torch::optim::AdamWParamState&>(state);
      s.insert("step", step_tensor(a.step()));
      s.insert("exp_avg", saved(a.exp_avg()));
      s.insert("exp_avg_sq", saved(a.exp_avg_sq()));
      if (a.max_exp_avg_sq().defined()) s.insert("max_exp_avg_sq", saved(a.max_exp_avg_sq()));
      break;
    }
    case Algo::SGD: {
      const auto& a = static_cast<const torch::optim::SGDParamState&>(state);
      s.insert("momentum_buffer", a.momentum_buffer().defined() ? saved(a.momentum_buffer()) : c10::IValue());
      break;
    }
    case Algo::Adagrad: {
      const auto& a = static_cast<const torch::optim::AdagradParamState&>(state);
      s.insert("step", step_tensor(a.step()));
      s.insert("sum", saved(a.sum()));
      break;
    }
    case Algo::RMSprop: {
      const auto& a = static_cast<const torch::optim::RMSpropParamState&>(state);
      s.insert("step", step_tensor(a.step()));
      s.insert("square_avg", saved(a.square_avg()));
      if (a.momentum_buffer().defined()) s.insert("momentum_buffer", saved(a.momentum_buffer()));
      if (a.grad_avg().defined()) s.insert("grad_avg", saved(a.grad_avg()));
      break;
    }
  }
  return s;
}

// Reading: every access names the file and the key.
class Reader {
 public:
  explicit Reader(const TorchSaveFile& f) : f_(f), g_(f.graph()) {}

  [[noreturn]] void fail(const std::string& what) const { throw std::runtime_error(f_.name() + ": " + what); }
  const PickleNode& at(size_t i) const { return g_.node(i); }
  const PickleNode& key(const PickleNode& dict, const std::string& k, Kind want,
                        const std::string& where) const {
    const PickleNode* v = g_.find(dict, k);
    if (v == nullptr) fail(where + " has no '" + k + "'");
    if (v->kind != want && !(want == Kind::Float && v->kind == Kind::Int))
      fail(where + "'s '" + k + "' is " + pickle_kind_name(v->kind) + ", not " + pickle_kind_name(want));
    return *v;
  }
  double number(const PickleNode& n) const {
    return n.kind == Kind::Int ? static_cast<double>(n.integer) : n.number;
  }
  double number(const PickleNode& dict, const std::string& k, const std::string& where) const {
    return number(key(dict, k, Kind::Float, where));
  }
  bool flag(const PickleNode& dict, const std::string& k, const std::string& where) const {
    return key(dict, k, Kind::Bool, where).boolean;
  }
  // A tensor of the parameter's shape, in its dtype and on its device.
  torch::Tensor tensor(const PickleNode& state, const std::string& k, const torch::Tensor& p,
                       const std::string& where) const {
    const PickleNode& n = key(state, k, Kind::Tensor, where);
    torch::Tensor t = load_pickle_tensor(f_, n.tensor);
    if (t.sizes() != p.sizes()) {
      std::ostringstream s;
      s << where << "'s '" << k << "' has shape " << t.sizes() << " but the parameter has " << p.sizes()
        << " (the model or its parameter groups differ from the ones this optimizer state was saved with)";
      fail(s.str());
    }
    return t.to(p.device(), p.scalar_type());
  }
  int64_t step(const PickleNode& state, const std::string& where) const {
    const PickleNode* v = g_.find(state, "step");
    if (v == nullptr) fail(where + " has no 'step'");
    if (v->kind == Kind::Int) return v->integer;
    if (v->kind == Kind::Float) return static_cast<int64_t>(v->number);
    if (v->kind != Kind::Tensor) fail(where + "'s 'step' is " + pickle_kind_name(v->kind));
    const torch::Tensor t = load_pickle_tensor(f_, v->tensor);
    if (t.numel() != 1) fail(where + "'s 'step' holds " + std::to_string(t.numel()) + " values, not 1");
    return static_cast<int64_t>(t.item<double>());
  }
  bool has(const PickleNode& dict, const std::string& k) const {
    const PickleNode* v = g_.find(dict, k);
    return v != nullptr && v->kind != Kind::None;
  }

 private:
  const TorchSaveFile& f_;
  const PickleGraph& g_;
};

void read_group_options(const Reader& r, Algo algo, const PickleNode& g,
                        torch::optim::OptimizerOptions& options, const std::string& where) {
  switch (algo) {
    case Algo::AdamW: {
      auto& o = static_cast<torch::optim::AdamWOptions&>(options);
      const PickleNode& betas = r.key(g, "betas", Kind::Tuple, where);
      if (betas.items.size() != 2) r.fail(where + "'s 'betas' is not a pair");
      o.lr(r.number(g, "lr", where))
          .eps(r.number(g, "eps", where))
          .weight_decay(r.number(g, "weight_decay", where));
      o.betas({r.number(r.at(betas.items[0])), r.number(r.at(betas.items[1]))});
      o.amsgrad(r.flag(g, "amsgrad", where));
      break;
    }
    case Algo::SGD: {
      auto& o = static_cast<torch::optim::SGDOptions&>(options);
      o.lr(r.number(g, "lr", where)).momentum(r.number(g, "momentum", where));
      o.dampening(r.number(g, "dampening", where)).weight_decay(r.number(g, "weight_decay", where));
      o.nesterov(r.flag(g, "nesterov", where));
      break;
    }
    case Algo::Adagrad: {
      auto& o = static_cast<torch::optim::AdagradOptions&>(options);
      o.lr(r.number(g, "lr", where)).lr_decay(r.number(g, "lr_decay", where));
      o.weight_decay(r.number(g, "weight_decay", where)).eps(r.number(g, "eps", where));
      o.initial_accumulator_value(r.number(g, "initial_accumulator_value", where));
      break;
    }
    case Algo::RMSprop: {
      auto& o = static_cast<torch::optim::RMSpropOptions&>(options);
      o.lr(r.number(g, "lr", where))
          .momentum(r.number(g, "momentum", where))
          .alpha(r.number(g, "alpha", where));
      o.eps(r.number(g, "eps", where)).weight_decay(r.number(g, "weight_decay", where));
      o.centered(r.flag(g, "centered", where));
      break;
    }
  }
  for (const char* k : {"maximize", "differentiable", "capturable"}) {
    const PickleNode* v = r.has(g, k) ? &r.key(g, k, Kind::Bool, where) : nullptr;
    if (v != nullptr && v->boolean)
      r.fail(where + " has " + k + "=True, which trainhook's " + algo_name(algo) + " does not do");
  }
}

std::unique_ptr<torch::optim::OptimizerParamState> read_param_state(const Reader& r, Algo algo,
                                                                    const PickleNode& s,
                                                                    const torch::Tensor& p,
                                                                    const std::string& where) {
  switch (algo) {
    case Algo::AdamW: {
      auto a = std::make_unique<torch::optim::AdamWParamState>();
      a->step(r.step(s, where));
      a->exp_avg(r.tensor(s, "exp_avg", p, where));
      a->exp_avg_sq(r.tensor(s, "exp_avg_sq", p, where));
      if (r.has(s, "max_exp_avg_sq")) a->max_exp_avg_sq(r.tensor(s, "max_exp_avg_sq", p, where));
      return a;
    }
    case Algo::SGD: {
      auto a = std::make_unique<torch::optim::SGDParamState>();
      if (r.has(s, "momentum_buffer")) a->momentum_buffer(r.tensor(s, "momentum_buffer", p, where));
      return a;
    }
    case Algo::Adagrad: {
      auto a = std::make_unique<torch::optim::AdagradParamState>();
      a->step(r.step(s, where));
      a->sum(r.tensor(s, "sum", p, where));
      return a;
    }
    case Algo::RMSprop: {
      auto a = std::make_unique<torch::optim::RMSpropParamState>();
      a->step(r.step(s, where));
      a->square_avg(r.tensor(s, "square_avg", p, where));
      if (r.has(s, "momentum_buffer")) a->momentum_buffer(r.tensor(s, "momentum_buffer", p, where));
      if (r.has(s, "grad_avg")) a->grad_avg(r.tensor(s, "grad_avg", p, where));
      return a;
    }
  }
  return nullptr;
}

}  // namespace

bool has_hf_optimizer_layout(const Optimizer& optimizer) {
  try {
    algorithm_of(optimizer);
    return true;
  } catch (const std::runtime_error&) {
    return false;
  }
}

void save_hf_optimizer(const Optimizer& optimizer, double initial_lr, double next_lr, const fs::path& file) {
  const Algo algo = algorithm_of(optimizer);
  auto state = pv::dict_of_ints();
  auto groups = pv::list();
  int64_t index = 0;
  for (const auto& group : optimizer.param_groups()) {
    auto g = group_options(algo, group.options());
    g.insert_or_assign("lr", next_lr);
    g.insert("initial_lr", initial_lr);
    auto params = pv::list();
    for (const auto& p : group.params()) {
      const auto it = optimizer.state().find(state_key(optimizer.state(), p));
      if (it != optimizer.state().end()) state.insert(index, param_state(algo, *it->second));
      params.push_back(index++);
    }
    g.insert("params", params);
    groups.push_back(g);
  }
  auto root = pv::dict_of_strings();
  root.insert("state", state);
  root.insert("param_groups", groups);
  save_torch_pickle(root, file);
}

void load_hf_optimizer(Optimizer& optimizer, const fs::path& file) {
  const Algo algo = algorithm_of(optimizer);
  const TorchSaveFile f = read_torch_save_file(file);
  const Reader r(f);
  const PickleNode& root = f.graph().root();
  if (root.kind != Kind::Dict)
    r.fail(std::string("holds ") + pickle_kind_name(root.kind) + ", not an optimizer state_dict");
  const PickleNode& groups = r.key(root, "param_groups", Kind::List, "the state_dict");
  const PickleNode& state = r.key(root, "state", Kind::Dict, "the state_dict");
  auto& ours = optimizer.param_groups();
  if (groups.items.size() != ours.size())
    r.fail("has " + std::to_string(groups.items.size()) + " parameter groups, the " + algo_name(algo) +
           " of this run has " + std::to_string(ours.size()) +
           " (weight-decayed parameters, then biases and 1-D weights)");
  std::vector<torch::Tensor> by_index;
  std::vector<std::unique_ptr<torch::optim::OptimizerOptions>> options;
  for (size_t gi = 0; gi < ours.size(); ++gi) {
    const std::string where = "param_groups[" + std::to_string(gi) + "]";
    const PickleNode& g = r.at(groups.items[gi]);
    if (g.kind != Kind::Dict) r.fail(where + " is " + pickle_kind_name(g.kind) + ", not a dict");
    const PickleNode& params = r.key(g, "params", Kind::List, where);
    if (params.items.size() != ours[gi].params().size())
      r.fail(where + " has " + std::to_string(params.items.size()) + " parameters, this run's has " +
             std::to_string(ours[gi].params().size()));
    for (size_t k = 0; k < params.items.size(); ++k) {
      const PickleNode& id = r.at(params.items[k]);
      if (id.kind != Kind::Int || id.integer != static_cast<int64_t>(by_index.size()))
        r.fail(where + "'s params are not numbered 0, 1, 2, ... through the groups");
      by_index.push_back(ours[gi].params()[k]);
    }
    options.push_back(ours[gi].options().clone());
    read_group_options(r, algo, g, *options.back(), where);
  }
  std::vector<std::pair<torch::Tensor, std::unique_ptr<torch::optim::OptimizerParamState>>> states;
  for (size_t i = 0; i + 1 < state.items.size(); i += 2) {
    const PickleNode& id = r.at(state.items[i]);
    if (id.kind != Kind::Int || id.integer < 0 || id.integer >= static_cast<int64_t>(by_index.size()))
      r.fail("state has an entry for a parameter index that no group lists");
    const std::string where = "state[" + std::to_string(id.integer) + "]";
    const PickleNode& s = r.at(state.items[i + 1]);
    if (s.kind != Kind::Dict) r.fail(where + " is " + pickle_kind_name(s.kind) + ", not a dict");
    const torch::Tensor& p = by_index[static_cast<size_t>(id.integer)];
    states.emplace_back(p, read_param_state(r, algo, s, p, where));
  }
  // Everything read: only now is the optimizer changed.
  for (size_t gi = 0; gi < ours.size(); ++gi) ours[gi].set_options(std::move(options[gi]));
  auto& map = optimizer.state();
  map.clear();
  for (auto& [p, s] : states) map[state_key(map, p)] = std::move(s);
}

}  // namespace trainhook
