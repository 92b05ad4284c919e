#include <trainhook/wandb/run_id.hpp>

#include <trainhook/wandb/offline_run.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <random>
#include <sstream>
#include <system_error>

namespace trainhook::wandb {

namespace fs = std::filesystem;

std::string new_run_id() {
  static constexpr char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device rd;
  std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd());
  std::uniform_int_distribution<int> pick(0, 35);
  std::string id(8, 'a');
  for (char& c : id) c = alphabet[pick(rng)];
  return id;
}

std::optional<std::string> read_auto_resume_id(const fs::path& dir) {
  std::ifstream in(dir / "wandb" / "wandb-resume.json");
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  const auto j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("run_id") || !j["run_id"].is_string())
    return std::nullopt;
  return j["run_id"].get<std::string>();
}

void write_auto_resume_id(const fs::path& dir, const std::string& run_id) {
  std::error_code ec;
  fs::create_directories(dir / "wandb", ec);
  if (ec) throw std::runtime_error("cannot create " + (dir / "wandb").string() + ": " + ec.message());
  write_file_atomically(dir / "wandb" / "wandb-resume.json",
                        nlohmann::json{{"run_id", run_id}}.dump() + "\n");
}

void clear_auto_resume_id(const fs::path& dir) {
  std::error_code ec;
  fs::remove(dir / "wandb" / "wandb-resume.json", ec);
}

}  // namespace trainhook::wandb
