// checkpoint-<step> folder management (HF trainer.py _sorted_checkpoints,
// _rotate_checkpoints, get_last_checkpoint).
#include <trainhook/checkpoint/checkpoint_dirs.hpp>

#include <algorithm>
#include <stdexcept>
#include <system_error>

namespace fs = std::filesystem;

namespace trainhook {
namespace {

std::optional<int64_t> step_of(const fs::path& dir) {
  const std::string name = dir.filename().string();
  const std::string prefix = kCheckpointPrefix;
  if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size()) return std::nullopt;
  const std::string digits = name.substr(prefix.size());
  if (digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  // A step count of a run never passes 2^53 (trainer_state.json's bound); a
  // longer number is no checkpoint of ours and must not reach std::stoll.
  constexpr int64_t kMaxStep = int64_t{1} << 53;
  if (digits.size() > 16 || std::stoll(digits) > kMaxStep)
    throw std::runtime_error(dir.string() + ": the step number " + digits +
                             " of this checkpoint folder is too large (at most 2^53); rename or remove "
                             "the folder");
  return std::stoll(digits);
}

bool same_path(const fs::path& a, const std::string& b) {
  std::error_code ec;
  if (fs::equivalent(a, fs::path(b), ec)) return true;
  return a.lexically_normal() == fs::path(b).lexically_normal();
}

}  // namespace

fs::path checkpoint_dir(const fs::path& output_dir, int64_t step) {
  return output_dir / (std::string(kCheckpointPrefix) + std::to_string(step));
}

fs::path write_checkpoint_atomically(const fs::path& output_dir, int64_t step,
                                     const std::function<void(const fs::path&)>& write) {
  const fs::path final_dir = checkpoint_dir(output_dir, step);
  const fs::path tmp = output_dir / ("tmp-" + final_dir.filename().string());
  std::error_code ec;
  fs::remove_all(tmp, ec);  // a leftover of an earlier crash
  fs::create_directories(tmp, ec);
  if (ec) throw std::runtime_error("cannot create checkpoint folder " + tmp.string() + ": " + ec.message());
  try {
    write(tmp);
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  if (fs::exists(final_dir)) {
    // Same step saved again (e.g. after a resume): replace it only now that the
    // new one is complete.
    const fs::path old = output_dir / ("old-" + final_dir.filename().string());
    fs::remove_all(old, ec);
    fs::rename(final_dir, old, ec);
    if (ec) throw std::runtime_error("cannot replace " + final_dir.string() + ": " + ec.message());
    fs::rename(tmp, final_dir, ec);
    if (ec)
      throw std::runtime_error("cannot rename " + tmp.string() + " to " + final_dir.string() + ": " +
                               ec.message());
    fs::remove_all(old, ec);
    return final_dir;
  }
  fs::rename(tmp, final_dir, ec);
  if (ec)
    throw std::runtime_error("cannot rename " + tmp.string() + " to " + final_dir.string() + ": " +
                             ec.message());
  return final_dir;
}

std::vector<fs::path> sorted_checkpoints(const fs::path& output_dir,
                                         const std::optional<std::string>& best_model_checkpoint) {
  std::vector<std::pair<int64_t, fs::path>> found;
  std::error_code ec;
  if (!fs::is_directory(output_dir, ec)) return {};
  for (const auto& entry : fs::directory_iterator(output_dir, ec)) {
    if (!entry.is_directory()) continue;
    const auto step = step_of(entry.path());
    if (step && fs::exists(entry.path() / kTrainerStateFile)) found.emplace_back(*step, entry.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> sorted;
  for (auto& f : found) sorted.push_back(f.second);
  if (best_model_checkpoint) {
    for (size_t i = 0; i < sorted.size(); ++i) {
      if (!same_path(sorted[i], *best_model_checkpoint)) continue;
      // Bubble the best up to the second-to-last place, as HF does.
      for (size_t j = i; j + 2 < sorted.size(); ++j) std::swap(sorted[j], sorted[j + 1]);
      break;
    }
  }
  return sorted;
}

std::vector<fs::path> rotate_checkpoints(const fs::path& output_dir, int64_t limit,
                                         const std::optional<std::string>& best_model_checkpoint) {
  if (limit <= 0) return {};
  const auto sorted = sorted_checkpoints(output_dir, best_model_checkpoint);
  if (sorted.size() <= static_cast<size_t>(limit)) return {};
  int64_t keep = limit;
  if (best_model_checkpoint && limit == 1 && !same_path(sorted.back(), *best_model_checkpoint)) keep = 2;
  const int64_t remove = std::max<int64_t>(0, static_cast<int64_t>(sorted.size()) - keep);
  std::vector<fs::path> deleted;
  for (int64_t i = 0; i < remove; ++i) {
    std::error_code ec;
    fs::remove_all(sorted[static_cast<size_t>(i)], ec);
    if (ec)
      throw std::runtime_error("cannot delete old checkpoint " + sorted[static_cast<size_t>(i)].string() +
                               ": " + ec.message());
    deleted.push_back(sorted[static_cast<size_t>(i)]);
  }
  return deleted;
}

std::optional<fs::path> latest_checkpoint(const fs::path& output_dir) {
  std::optional<std::pair<int64_t, fs::path>> best;
  std::error_code ec;
  if (!fs::is_directory(output_dir, ec)) return std::nullopt;
  for (const auto& entry : fs::directory_iterator(output_dir, ec)) {
    if (!entry.is_directory()) continue;
    const auto step = step_of(entry.path());
    if (!step || !fs::exists(entry.path() / kTrainerStateFile)) continue;
    if (!best || *step > best->first) best = std::make_pair(*step, entry.path());
  }
  if (!best) return std::nullopt;
  return best->second;
}

}  // namespace trainhook
