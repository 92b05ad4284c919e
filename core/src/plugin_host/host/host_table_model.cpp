// The ABI 1.1 functions of a th_host table (tensors, learning rates, the LR
// factor, plugin metrics, skipping an optimizer step): each forwards to the
// run's ModelAccess and turns a refusal into TH_INVALID_ARGUMENT with a message
// that names the callback. Nothing throws across the C boundary.
#include "host_table.hpp"

#include <trainhook/plugin_host/host/model_access.hpp>

#include <algorithm>
#include <cstring>
#include <exception>

namespace trainhook::detail {
namespace {

HostTable& bridge(void* ctx) { return *static_cast<HostTable*>(ctx); }

th_status refuse(const HostTable& b, const std::string& why, char* err, size_t err_size) {
  const std::string msg = "callback '" + b.who() + "': " + why;
  if (err != nullptr && err_size > 0) {
    const size_t n = std::min(msg.size(), err_size - 1);
    std::memcpy(err, msg.data(), n);
    err[n] = '\0';
  }
  return TH_INVALID_ARGUMENT;
}

// Runs `f` (returning "" or a refusal) against the run's ModelAccess;
// `steers` names a call that a declared event may not make.
template <class F>
th_status call(void* ctx, char* err, size_t err_size, F&& f, const char* steers = nullptr) noexcept {
  HostTable& b = bridge(ctx);
  std::string why;
  try {
    if (steers != nullptr) why = b.refuse_steering(steers);
    if (!why.empty()) return refuse(b, why, err, err_size);
    ModelAccess* access = b.services().model_access();
    why = access == nullptr ? std::string("this trainer offers no model access here (no training run)")
                            : f(*access);
  } catch (const std::exception& e) {
    why = e.what();
  } catch (...) {
    why = "unknown error";
  }
  return why.empty() ? TH_OK : refuse(b, why, err, err_size);
}

th_status tensors(void* ctx, int32_t kind, int32_t access, th_tensor_list* out, char* err,
                  size_t err_size) noexcept {
  return call(ctx, err, err_size, [&](ModelAccess& m) -> std::string {
    if (out == nullptr || !TH_HAS_FIELD(out, th_tensor_list, tensors))
      return "tensors: `out` is NULL or its struct_size is not set to TH_TENSOR_LIST_STRUCT_SIZE";
    th_tensor_list mine{};
    std::string why = m.tensors(kind, access, mine);
    if (!why.empty()) return why;
    out->count = mine.count;
    out->names = mine.names;
    out->tensors = mine.tensors;
    return "";
  }, access == TH_ACCESS_WRITE ? "tensors (write)" : nullptr);
}

th_status learning_rates(void* ctx, double* out, uint32_t capacity, uint32_t* count, char* err,
                         size_t err_size) noexcept {
  return call(ctx, err, err_size, [&](ModelAccess& m) -> std::string {
    if (count == nullptr) return "learning_rates: `count` is NULL";
    if (out == nullptr && capacity > 0) return "learning_rates: `out` is NULL";
    return m.learning_rates(out, capacity, *count);
  });
}

th_status set_lr_factor(void* ctx, double factor, char* err, size_t err_size) noexcept {
  return call(ctx, err, err_size, [&](ModelAccess& m) { return m.set_lr_factor(factor); }, "set_lr_factor");
}

double lr_factor(void* ctx) noexcept {
  try {
    ModelAccess* access = bridge(ctx).services().model_access();
    return access != nullptr ? access->lr_factor() : 1.0;
  } catch (...) {
    return 1.0;
  }
}

th_status add_metric(void* ctx, const char* name, double value, char* err, size_t err_size) noexcept {
  return call(ctx, err, err_size, [&](ModelAccess& m) -> std::string {
    if (name == nullptr) return "add_metric: the metric name is NULL";
    return m.add_metric(name, value);
  }, "add_metric");
}

th_status skip_optimizer_step(void* ctx, char* err, size_t err_size) noexcept {
  return call(ctx, err, err_size, [&](ModelAccess& m) { return m.skip_optimizer_step(); },
              "skip_optimizer_step");
}

void set_critical(void* ctx) noexcept { bridge(ctx).make_critical(); }

}  // namespace

void add_model_services(th_host& table) {
  table.set_critical = &set_critical;
  table.tensors = &tensors;
  table.learning_rates = &learning_rates;
  table.set_lr_factor = &set_lr_factor;
  table.lr_factor = &lr_factor;
  table.add_metric = &add_metric;
  table.skip_optimizer_step = &skip_optimizer_step;
}

}  // namespace trainhook::detail
