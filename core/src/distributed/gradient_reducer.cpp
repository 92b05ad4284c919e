// average_gradients and GradientReducer (see gradient_reducer.hpp): DDP's
// bucketed gradient averaging, after backward or overlapping it.
#include <trainhook/distributed/gradient_reducer.hpp>

#include <torch/torch.h>

#include <algorithm>

namespace trainhook::distributed {

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
  size_t expected = 0;
  size_t arrived = 0;
  std::vector<bool> got;  // per param of the bucket: its gradient arrived this backward
  ProcessGroup::Pending pending;
};

GradientReducer::GradientReducer(std::shared_ptr<ProcessGroup> group, std::vector<torch::Tensor> params,
                                 int64_t bucket_bytes)
    : group_(std::move(group)), params_(std::move(params)), where_(params_.size()) {
  // Reverse order: backward produces the last layers' gradients first. The
  // first bucket is small (1 MB, as DDP's) so communication starts early.
  const int64_t first_bucket_bytes = std::min<int64_t>(bucket_bytes, 1024 * 1024);
  int64_t bytes = 0;
  for (size_t k = params_.size(); k-- > 0;) {
    const auto& p = params_[k];
    if (!p.requires_grad()) continue;
    const int64_t size = p.numel() * static_cast<int64_t>(p.element_size());
    const int64_t cap = buckets_.size() <= 1 ? first_bucket_bytes : bucket_bytes;
    if (buckets_.empty() || bytes + size > cap ||
        params_[buckets_.back().params.front()].scalar_type() != p.scalar_type()) {
      buckets_.emplace_back();
      bytes = 0;
    }
    auto& b = buckets_.back();
    where_[k] = {buckets_.size() - 1, 0};
    b.params.push_back(k);
    bytes += size;
  }
  for (auto& b : buckets_) {
    int64_t n = 0;
    for (size_t k : b.params) {
      where_[k].second = n;
      n += params_[k].numel();
    }
    b.flat = torch::zeros({n}, params_[b.params.front()].options().requires_grad(false));
    b.expected = b.params.size();
    b.got.assign(b.params.size(), false);
  }
  for (size_t k = 0; k < params_.size(); ++k) {
    if (!params_[k].requires_grad()) {
      hooks_.push_back(0);
      continue;
    }
    hooks_.push_back(params_[k].register_hook([this, k](torch::Tensor grad) { on_gradient(k, grad); }));
  }
}

GradientReducer::~GradientReducer() {
  for (size_t k = 0; k < params_.size(); ++k) {
    if (params_[k].requires_grad()) params_[k].remove_hook(hooks_[k]);
  }
}

void GradientReducer::arm(bool accumulation_boundary) {
  armed_ = accumulation_boundary;
  next_launch_ = 0;
  for (auto& b : buckets_) {
    b.arrived = 0;
    std::fill(b.got.begin(), b.got.end(), false);
  }
}

void GradientReducer::on_gradient(size_t k, const torch::Tensor& grad) {
  if (!armed_) return;
  torch::NoGradGuard no_grad;
  auto& b = buckets_[where_[k].first];
  auto slot = b.flat.narrow(0, where_[k].second, params_[k].numel()).view_as(params_[k]);
  // .grad holds the earlier micro-steps of the window; autograd adds `grad`
  // to it right after this hook, so the bucket gets the same sum.
  const auto& held = params_[k].grad();
  if (held.defined()) {
    torch::add_out(slot, held, grad);
  } else {
    slot.copy_(grad);
  }
  const size_t i = static_cast<size_t>(std::find(b.params.begin(), b.params.end(), k) - b.params.begin());
  if (!b.got[i]) {
    b.got[i] = true;
    ++b.arrived;
  }
  launch_ready();
}

void GradientReducer::launch_ready() {
  while (next_launch_ < buckets_.size() &&
         buckets_[next_launch_].arrived == buckets_[next_launch_].expected) {
    auto& b = buckets_[next_launch_];
    b.pending = group_->start_all_reduce_sum(b.flat, "gradients");
    ++next_launch_;
  }
}

void GradientReducer::finish() {
  if (!armed_) return;
  torch::NoGradGuard no_grad;
  // Buckets not complete (a parameter without a gradient in this backward):
  // its slot counts as zero, or as the gradient accumulated so far.
  for (size_t n = next_launch_; n < buckets_.size(); ++n) {
    auto& b = buckets_[n];
    for (size_t i = 0; i < b.params.size(); ++i) {
      if (b.got[i]) continue;
      const size_t k = b.params[i];
      auto slot = b.flat.narrow(0, where_[k].second, params_[k].numel());
      const auto& held = params_[k].grad();
      if (held.defined()) {
        slot.copy_(held.reshape({-1}));
      } else {
        slot.zero_();
      }
    }
    b.arrived = b.expected;
  }
  launch_ready();
  const double inv = 1.0 / static_cast<double>(group_->size());
  for (auto& b : buckets_) {
    b.pending.wait();
    b.flat.mul_(inv);
    for (size_t i = 0; i < b.params.size(); ++i) {
      const size_t k = b.params[i];
      auto avg = b.flat.narrow(0, where_[k].second, params_[k].numel()).view_as(params_[k]);
      auto& p = params_[k];
      if (p.grad().defined()) {
        p.mutable_grad().copy_(avg);
      } else if (b.got[i] || avg.abs().max().item<double>() != 0) {
        p.mutable_grad() = avg.clone();
      }
    }
  }
  armed_ = false;
}

}  // namespace trainhook::distributed
