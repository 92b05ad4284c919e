#include <trainhook/system_stats/nvml.hpp>

#include <dlfcn.h>

namespace trainhook::system_stats {
namespace {

// The few NVML types used, as nvml.h declares them (the ABI NVIDIA keeps stable).
using nvmlReturn_t = int;  // 0: NVML_SUCCESS
using nvmlDevice_t = struct nvmlDevice_st*;
struct nvmlUtilization_t {
  unsigned int gpu;     // percent of time a kernel ran
  unsigned int memory;  // percent of time memory was read or written
};
struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

}  // namespace

struct Nvml::Api {
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*count)(unsigned int*) = nullptr;
  nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned int*) = nullptr;
};

namespace {

template <class F>
bool resolve(void* handle, const char* name, F& out) {
  void* sym = ::dlsym(handle, name);
  out = reinterpret_cast<F>(sym);
  return sym != nullptr;
}

}  // namespace

std::unique_ptr<Nvml> Nvml::load(std::string& why_not, const std::string& library) {
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = ::dlerror();
    why_not = "no NVIDIA driver (" + (err != nullptr ? std::string(err) : library + " not found") + ")";
    return nullptr;
  }
  auto api = std::make_unique<Api>();
  const char* missing = nullptr;  // the first symbol the library lacks
  auto need = [&](const char* name, auto& fn) {
    if (!resolve(handle, name, fn) && missing == nullptr) missing = name;
  };
  need("nvmlInit_v2", api->init);
  need("nvmlShutdown", api->shutdown);
  need("nvmlDeviceGetCount_v2", api->count);
  need("nvmlDeviceGetHandleByIndex_v2", api->handle);
  need("nvmlDeviceGetUtilizationRates", api->utilization);
  need("nvmlDeviceGetMemoryInfo", api->memory);
  need("nvmlDeviceGetPowerUsage", api->power);
  if (missing != nullptr) {
    why_not = library + " has no " + missing;
    ::dlclose(handle);
    return nullptr;
  }
  if (const nvmlReturn_t r = api->init(); r != 0) {
    why_not = "nvmlInit_v2 failed with NVML error " + std::to_string(r);
    ::dlclose(handle);
    return nullptr;
  }
  unsigned int count = 0;
  if (const nvmlReturn_t r = api->count(&count); r != 0) {
    why_not = "nvmlDeviceGetCount_v2 failed with NVML error " + std::to_string(r);
    api->shutdown();
    ::dlclose(handle);
    return nullptr;
  }
  return std::unique_ptr<Nvml>(new Nvml(handle, std::move(api), count));
}

Nvml::Nvml(void* handle, std::unique_ptr<Api> api, unsigned count)
    : handle_(handle), api_(std::move(api)), count_(count) {}

Nvml::~Nvml() {
  api_->shutdown();
  ::dlclose(handle_);
}

std::vector<std::pair<std::string, double>> Nvml::sample() const {
  std::vector<std::pair<std::string, double>> out;
  for (unsigned i = 0; i < count_; ++i) {
    nvmlDevice_t dev = nullptr;
    if (api_->handle(i, &dev) != 0) continue;
    const std::string prefix = "system/gpu" + std::to_string(i) + "/";
    nvmlUtilization_t u{};
    if (api_->utilization(dev, &u) == 0) {
      out.emplace_back(prefix + "utilization_percent", static_cast<double>(u.gpu));
      out.emplace_back(prefix + "memory_utilization_percent", static_cast<double>(u.memory));
    }
    nvmlMemory_t m{};
    if (api_->memory(dev, &m) == 0) {
      out.emplace_back(prefix + "memory_used_bytes", static_cast<double>(m.used));
      out.emplace_back(prefix + "memory_total_bytes", static_cast<double>(m.total));
    }
    unsigned int milliwatts = 0;
    if (api_->power(dev, &milliwatts) == 0) out.emplace_back(prefix + "power_watts", milliwatts / 1000.0);
  }
  return out;
}

}  // namespace trainhook::system_stats
