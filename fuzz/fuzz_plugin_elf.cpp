// The ELF pre-check run on every candidate plugin file before dlopen.
#include "registry/plugin_file_checks.hpp"

#include <unistd.h>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // One file per process, rewritten for each input (elf_problem reads a path).
  static const std::string path = "/tmp/trainhook-fuzz-elf-" + std::to_string(::getpid()) + ".so";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  (void)trainhook::detail::elf_problem(path, "trainhook_plugin_v1");
  return 0;
}
