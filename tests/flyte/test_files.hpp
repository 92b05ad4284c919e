// Small file helpers shared by the flyte tests.
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

namespace flyte_test {

// A fresh, empty folder under the temp directory, removed by the destructor.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& name) {
    path = std::filesystem::temp_directory_path() / (name + "-" + std::to_string(std::random_device{}()));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path, std::filesystem::perms::owner_all, ec);
    std::filesystem::remove_all(path, ec);
  }
};

inline void write(const std::filesystem::path& p, const std::string& data) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary | std::ios::trunc) << data;
}

inline std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A fake checkpoint-<step>/ folder whose bytes depend on the step.
inline std::filesystem::path make_checkpoint(const std::filesystem::path& root, int step) {
  const auto dir = root / ("checkpoint-" + std::to_string(step));
  write(dir / "model.pt", std::string(1000 + step, static_cast<char>('a' + step % 26)));
  write(dir / "trainer_state.json", "{\"global_step\": " + std::to_string(step) + "}\n");
  write(dir / "optimizer" / "state.bin", "opt-" + std::to_string(step));
  return dir;
}

}  // namespace flyte_test
