// Small file helpers shared by the flyte tests (testkit/temp_dir.hpp's, in this namespace).
#pragma once

#include <temp_dir.hpp>

#include <filesystem>
#include <string>

namespace flyte_test {

using trainhook::testkit::read_file;
using trainhook::testkit::TempDir;
using trainhook::testkit::write_file;

// A fake checkpoint-<step>/ folder whose bytes depend on the step.
inline std::filesystem::path make_checkpoint(const std::filesystem::path& root, int step) {
  const auto dir = root / ("checkpoint-" + std::to_string(step));
  write_file(dir / "model.pt", std::string(1000 + step, static_cast<char>('a' + step % 26)));
  write_file(dir / "trainer_state.json", "{\"global_step\": " + std::to_string(step) + "}\n");
  write_file(dir / "optimizer" / "state.bin", "opt-" + std::to_string(step));
  return dir;
}

}  // namespace flyte_test
