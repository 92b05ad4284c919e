// NVIDIA's management library, loaded at run time with dlopen("libnvidia-ml.so.1")
// (no link, no build dependency: a machine without the driver has no such
// library, and the plugin still loads). Only the calls system_stats needs.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace trainhook::system_stats {

class Nvml {
 public:
  // Loads and initialises the library; nullptr and `why_not` set when there is
  // no driver or it does not answer. `library` is for tests.
  static std::unique_ptr<Nvml> load(std::string& why_not, const std::string& library = "libnvidia-ml.so.1");
  ~Nvml();  // nvmlShutdown, dlclose
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  unsigned device_count() const noexcept { return count_; }
  // system/gpu<i>/... for every device; a value a device does not report is left out.
  std::vector<std::pair<std::string, double>> sample() const;

 private:
  struct Api;
  Nvml(void* handle, std::unique_ptr<Api> api, unsigned count);
  void* handle_;
  std::unique_ptr<Api> api_;
  unsigned count_;
};

}  // namespace trainhook::system_stats
