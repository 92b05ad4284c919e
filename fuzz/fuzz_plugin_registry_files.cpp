// The files the plugin registry and the plugin selection read besides the
// libraries: the registry cache (JSON, rebuilt when damaged), plugins.lock
// (sha256sum lines) and the site file (JSON, an error naming it when bad).
// The first byte picks which one the rest of the input is.
#include "registry/plugin_lock_file.hpp"
#include "registry/registry_cache.hpp"

#include <trainhook/plugin_host/selection/site_config.hpp>

#include <trainhook/common/errors.hpp>

#include <unistd.h>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const std::string path = "/tmp/trainhook-fuzz-registry-" + std::to_string(::getpid());
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  std::fwrite(data + 1, 1, size - 1, f);
  std::fclose(f);
  if (data[0] % 3 == 2) {
    try {
      (void)trainhook::read_site_config(path);
    } catch (const trainhook::ArgumentError&) {
    }
  } else if (data[0] & 1) {
    try {
      const trainhook::detail::PluginLockFile lock(path);
      (void)lock.refusal("/nonexistent/libtrainhook_x.so");
    } catch (const trainhook::PluginError&) {
    }
  } else {
    const trainhook::detail::RegistryCache cache{std::filesystem::path(path)};
    (void)cache.lookup({"/nonexistent/libtrainhook_x.so", 1, 2, 3, 4});
  }
  return 0;
}
