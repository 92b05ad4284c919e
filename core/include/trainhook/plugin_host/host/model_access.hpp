// What ABI 1.1 lets a plugin reach of the model (abi.h "tensor views" and the
// 1.1 th_host functions): torch-free, so the plugin host and its tests build
// without LibTorch. The trainer implements it (core/src/trainer/model_access.*);
// HostServices::model_access() hands it to the th_host tables.
//
// Each function returns "" on success, else the reason it refuses (the bridge
// prefixes the callback's name and returns TH_INVALID_ARGUMENT). Training
// thread only.
#pragma once

#include <trainhook/abi.h>

#include <cstdint>
#include <string>

namespace trainhook {

class ModelAccess {
 public:
  virtual ~ModelAccess() = default;
  // Fills `out` (host-owned arrays valid until the current event returns).
  virtual std::string tensors(int32_t kind, int32_t access, th_tensor_list& out) = 0;
  // Up to `capacity` learning rates into out; *count = number of groups.
  virtual std::string learning_rates(double* out, uint32_t capacity, uint32_t& count) = 0;
  virtual std::string set_lr_factor(double factor) = 0;
  virtual double lr_factor() const = 0;
  virtual std::string add_metric(const std::string& name, double value) = 0;
  virtual std::string skip_optimizer_step() = 0;
};

// The checks every implementation shares (model_access_rules.cpp), so the
// rules of abi.h are written once and tested without LibTorch.
namespace model_access_rules {
// "" when `kind` may be read (access READ) or written (WRITE) at `event`.
std::string check_tensors(int32_t event, int32_t kind, int32_t access);
std::string check_factor(double factor);
std::string check_metric(const std::string& name, double value);
std::string check_skip(int32_t event);
}  // namespace model_access_rules

}  // namespace trainhook
