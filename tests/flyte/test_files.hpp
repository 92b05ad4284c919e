// Small file helpers shared by the flyte tests (testkit/temp_dir.hpp's, by the names they use).
#pragma once

#include <temp_dir.hpp>

#include <filesystem>
#include <string>

namespace flyte_test {

using trainhook::testkit::TempDir;
inline void write(const std::filesystem::path& p, const std::string& data) { trainhook::testkit::write_file(p, data); }
inline std::string read(const std::filesystem::path& p) { return trainhook::testkit::read_file(p); }

// A fake checkpoint-<step>/ folder whose bytes depend on the step.
inline std::filesystem::path make_checkpoint(const std::filesystem::path& root, int step) {
  const auto dir = root / ("checkpoint-" + std::to_string(step));
  write(dir / "model.pt", std::string(1000 + step, static_cast<char>('a' + step % 26)));
  write(dir / "trainer_state.json", "{\"global_step\": " + std::to_string(step) + "}\n");
  write(dir / "optimizer" / "state.bin", "opt-" + std::to_string(step));
  return dir;
}

}  // namespace flyte_test
