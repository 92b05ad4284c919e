#include <trainhook/checkpoint/hf_scheduler_file.hpp>

#include <trainhook/checkpoint/torch_pickle_io.hpp>

#include <cmath>
#include <stdexcept>

namespace fs = std::filesystem;

namespace trainhook {

void save_hf_scheduler(const LrScheduler& scheduler, size_t groups, const fs::path& file) {
  namespace pv = pickle_values;
  auto base_lrs = pv::list(), last_lr = pv::list(), lambdas = pv::list();
  for (size_t i = 0; i < groups; ++i) {
    base_lrs.push_back(scheduler.base_lr());
    last_lr.push_back(scheduler.lr());
    lambdas.push_back(pv::dict_of_strings());  // a functools.partial's (empty) __dict__, as HF's
  }
  auto d = pv::dict_of_strings();
  d.insert("base_lrs", base_lrs);
  d.insert("last_epoch", scheduler.last_step());
  d.insert("verbose", false);
  d.insert("_step_count", scheduler.last_step() + 1);
  d.insert("_get_lr_called_within_step", false);
  d.insert("_last_lr", last_lr);
  d.insert("lr_lambdas", lambdas);
  save_torch_pickle(d, file);
}

void load_hf_scheduler(LrScheduler& scheduler, const fs::path& file) {
  using Kind = PickleNode::Kind;
  if (scheduler.metric_driven())
    throw std::runtime_error(file.string() +
                             ": lr_scheduler_type reduce_lr_on_plateau keeps its state in scheduler.json; "
                             "torch's ReduceLROnPlateau state in scheduler.pt is not carried over");
  const TorchSaveFile f = read_torch_save_file(file);
  const PickleGraph& g = f.graph();
  const PickleNode& root = g.root();
  const PickleNode* last = g.find(root, "last_epoch");
  const PickleNode* lambdas = g.find(root, "lr_lambdas");
  if (root.kind != Kind::Dict || last == nullptr || last->kind != Kind::Int || lambdas == nullptr)
    throw std::runtime_error(file.string() +
                             ": not a LambdaLR state (no integer last_epoch and lr_lambdas): only HF's "
                             "LambdaLR schedules (linear, cosine, constant, ...) carry over; a Python-only "
                             "scheduler does not");
  if (const PickleNode* base = g.find(root, "base_lrs"); base != nullptr && base->kind == Kind::List) {
    for (size_t i : base->items) {
      const PickleNode& v = g.node(i);
      const double lr = v.kind == Kind::Int ? static_cast<double>(v.integer) : v.number;
      if ((v.kind != Kind::Float && v.kind != Kind::Int) ||
          std::abs(lr - scheduler.base_lr()) > 1e-12 * std::max(1.0, std::abs(lr)))
        throw std::runtime_error(file.string() + ": the schedule's base rate (base_lrs) is " +
                                 std::to_string(lr) + " but this run's learning_rate is " +
                                 std::to_string(scheduler.base_lr()) +
                                 "; resume with the learning_rate it was saved with");
    }
  }
  if (last->integer < 0) throw std::runtime_error(file.string() + ": last_epoch is negative");
  scheduler.load_state(nlohmann::json{{"last_step", last->integer}});
}

}  // namespace trainhook
