// average_gradients and GradientReducer (see gradient_reducer.hpp): DDP's
// bucketed gradient averaging, after backward or overlapping it.
#include <trainhook/distributed/gradient_reducer.hpp>

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/torch.h>

#include <algorithm>
#include <type_traits>

namespace trainhook::distributed {
namespace {

// LibTorch 2.15 hands out autograd nodes as c10::intrusive_ptr, older releases as
// std::shared_ptr: the shared_ptr the header keeps owns whichever it got.
template <class Ptr>
std::shared_ptr<torch::autograd::Node> hold_node(Ptr node) {
  if constexpr (std::is_same_v<Ptr, std::shared_ptr<torch::autograd::Node>>) {
    return node;
  } else {
    torch::autograd::Node* raw = node.get();
    return std::shared_ptr<torch::autograd::Node>(raw, [keep = std::move(node)](torch::autograd::Node*) {});
  }
}

}  // namespace

void average_gradients(ProcessGroup& group, const std::vector<torch::Tensor>& params, int64_t bucket_bytes) {
  std::vector<torch::Tensor> grads;
  for (const auto& p : params) {
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  const double inv = 1.0 / static_cast<double>(group.size());
  size_t i = 0;
  while (i < grads.size()) {
    // A bucket: consecutive gradients of one dtype up to bucket_bytes (at least one).
    size_t j = i;
    int64_t bytes = 0;
    while (j < grads.size() && grads[j].scalar_type() == grads[i].scalar_type() &&
           (j == i ||
            bytes + grads[j].numel() * static_cast<int64_t>(grads[j].element_size()) <= bucket_bytes)) {
      bytes += grads[j].numel() * static_cast<int64_t>(grads[j].element_size());
      ++j;
    }
    std::vector<torch::Tensor> views;
    for (size_t k = i; k < j; ++k) views.push_back(grads[k].reshape({-1}));
    std::vector<torch::Tensor> flat{torch::cat(views)};
    group.all_reduce_sum(flat, "gradients");
    flat[0].mul_(inv);
    int64_t offset = 0;
    for (size_t k = i; k < j; ++k) {
      const int64_t len = grads[k].numel();
      grads[k].copy_(flat[0].narrow(0, offset, len).view_as(grads[k]));
      offset += len;
    }
    i = j;
  }
}

struct GradientReducer::Bucket {
  std::vector<size_t> params;
  torch::Tensor flat;
  size_t arrived = 0;
  std::vector<bool> got;  // per param of the bucket: its gradient arrived this backward
  ProcessGroup::Pending pending;
};

GradientReducer::GradientReducer(std::shared_ptr<ProcessGroup> group, std::vector<torch::Tensor> params,
                                 int64_t bucket_bytes, bool overlap)
    : group_(std::move(group)), params_(std::move(params)), where_(params_.size()), overlap_(overlap) {
  // DDP's assignment once it has seen a backward (Reducer::rebuild_buckets):
  // reverse order, a bucket closed once it reaches its cap; the first cap is
  // small (1 MB) so communication starts early.
  const int64_t first_bucket_bytes = std::min<int64_t>(bucket_bytes, 1024 * 1024);
  int64_t bytes = 0;
  bool open = false;
  for (size_t k = params_.size(); k-- > 0;) {
    const auto& p = params_[k];
    if (!p.requires_grad()) continue;
    if (!open || params_[buckets_.back().params.front()].scalar_type() != p.scalar_type() ||
        params_[buckets_.back().params.front()].device() != p.device()) {
      buckets_.emplace_back();
      bytes = 0;
      open = true;
    }
    auto& b = buckets_.back();
    where_[k].bucket = buckets_.size() - 1;
    where_[k].index = b.params.size();
    b.params.push_back(k);
    bytes += p.numel() * static_cast<int64_t>(p.element_size());
    if (bytes >= (buckets_.size() == 1 ? first_bucket_bytes : bucket_bytes)) open = false;
  }
  torch::NoGradGuard no_grad;
  for (auto& b : buckets_) {
    int64_t n = 0;
    for (size_t k : b.params) n += params_[k].numel();
    b.flat = torch::zeros({n}, params_[b.params.front()].options().requires_grad(false));
    int64_t offset = 0;
    for (size_t k : b.params) {
      // A tensor on the bucket's storage, not an autograd view of the bucket:
      // LibTorch's Optimizer::zero_grad() detach_()es every .grad, which a view refuses.
      auto slot = torch::empty({0}, b.flat.options());
      slot.set_(b.flat.storage(), offset, params_[k].sizes());
      where_[k].slot = slot;
      offset += params_[k].numel();
    }
    b.got.assign(b.params.size(), false);
  }
  accumulators_.resize(params_.size());
  hooks_.assign(params_.size(), 0);
  for (size_t k = 0; k < params_.size(); ++k) {
    if (!params_[k].requires_grad()) continue;
    accumulators_[k] = hold_node(torch::autograd::impl::grad_accumulator(params_[k]));
    hooks_[k] = accumulators_[k]->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
        [this, k](const torch::autograd::variable_list& outputs, const torch::autograd::variable_list&) {
          on_gradient(k);
          return outputs;
        }));
  }
}

GradientReducer::~GradientReducer() {
  for (size_t k = 0; k < params_.size(); ++k) {
    if (accumulators_[k]) accumulators_[k]->del_post_hook(hooks_[k]);
  }
}

std::vector<int64_t> GradientReducer::bucket_bytes() const {
  std::vector<int64_t> out;
  for (const auto& b : buckets_) out.push_back(b.flat.numel() * static_cast<int64_t>(b.flat.element_size()));
  return out;
}

void GradientReducer::arm(bool accumulation_boundary) {
  armed_ = accumulation_boundary;
  next_launch_ = 0;
  for (auto& b : buckets_) {
    b.arrived = 0;
    std::fill(b.got.begin(), b.got.end(), false);
  }
}

void GradientReducer::bind(size_t k) {
  auto& p = params_[k];
  const auto& slot = where_[k].slot;
  const auto& held = p.grad();
  if (held.defined() && held.data_ptr() == slot.data_ptr()) return;
  if (held.defined()) {
    slot.copy_(held);
  } else {
    slot.zero_();
  }
  p.mutable_grad() = slot;
}

void GradientReducer::on_gradient(size_t k) {
  // AccumulateGrad has just added this backward's gradient to .grad: in the
  // bucket already, unless .grad was made anew (the first backward, or after
  // zero_grad(set_to_none)).
  torch::NoGradGuard no_grad;
  bind(k);
  if (!armed_) return;
  auto& b = buckets_[where_[k].bucket];
  const size_t i = where_[k].index;
  if (!b.got[i]) {
    b.got[i] = true;
    ++b.arrived;
  }
  if (overlap_) launch_ready();
}

void GradientReducer::launch_ready() {
  while (next_launch_ < buckets_.size() &&
         buckets_[next_launch_].arrived == buckets_[next_launch_].params.size()) {
    auto& b = buckets_[next_launch_];
    b.pending = group_->start_all_reduce_sum(b.flat, "gradients");
    ++next_launch_;
  }
}

void GradientReducer::finish() {
  if (!armed_) return;
  torch::NoGradGuard no_grad;
  // Buckets not complete (a parameter without a gradient in this backward):
  // its slot counts as the gradient accumulated so far, or as zero.
  for (size_t n = next_launch_; n < buckets_.size(); ++n) {
    auto& b = buckets_[n];
    for (size_t i = 0; i < b.params.size(); ++i) {
      if (b.got[i]) continue;
      const size_t k = b.params[i];
      if (params_[k].grad().defined()) {
        bind(k);
      } else {
        where_[k].slot.zero_();
      }
    }
    b.arrived = b.params.size();
  }
  launch_ready();
  const double inv = 1.0 / static_cast<double>(group_->size());
  for (auto& b : buckets_) {
    b.pending.wait();
    b.flat.mul_(inv);
    for (size_t i = 0; i < b.params.size(); ++i) {
      const size_t k = b.params[i];
      // A parameter without a gradient on this rank gets one when another rank had it.
      if (!b.got[i] && !params_[k].grad().defined() && where_[k].slot.abs().max().item<double>() != 0) {
        params_[k].mutable_grad() = where_[k].slot;
      }
    }
  }
  armed_ = false;
}

}  // namespace trainhook::distributed
