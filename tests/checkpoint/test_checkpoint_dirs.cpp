// checkpoint-<step> folders: atomic creation, HF ordering, rotation keeping
// the best, latest complete checkpoint.
#include <trainhook/checkpoint/checkpoint_dirs.hpp>

#include <doctest/doctest.h>
#include <temp_dir.hpp>

#include <fstream>

using namespace trainhook;
namespace fs = std::filesystem;
using trainhook::testkit::TempDir;

namespace {

void make_checkpoint(const fs::path& out, int64_t step) {
  write_checkpoint_atomically(out, step,
                              [](const fs::path& tmp) { std::ofstream(tmp / kTrainerStateFile) << "{}\n"; });
}

std::vector<std::string> names(const std::vector<fs::path>& paths) {
  std::vector<std::string> n;
  for (const auto& p : paths) n.push_back(p.filename().string());
  return n;
}

}  // namespace

TEST_CASE("a checkpoint appears only when its writer finishes") {
  TempDir d("trainhook-ckptdirs");
  make_checkpoint(d.path, 5);
  CHECK(fs::exists(d.path / "checkpoint-5" / kTrainerStateFile));
  CHECK_FALSE(fs::exists(d.path / "tmp-checkpoint-5"));
  CHECK_THROWS_WITH(write_checkpoint_atomically(d.path, 10,
                                                [](const fs::path& tmp) {
                                                  std::ofstream(tmp / "model.pt") << "half";
                                                  throw std::runtime_error("disk full");
                                                }),
                    "disk full");
  CHECK_FALSE(fs::exists(d.path / "checkpoint-10"));
  CHECK_FALSE(fs::exists(d.path / "tmp-checkpoint-10"));
  CHECK(latest_checkpoint(d.path) == d.path / "checkpoint-5");
}

TEST_CASE("saving a step again replaces the old folder only once the new one is complete") {
  TempDir d("trainhook-ckptdirs");
  make_checkpoint(d.path, 3);
  std::ofstream(d.path / "checkpoint-3" / "old.txt") << "x";
  make_checkpoint(d.path, 3);
  CHECK(fs::exists(d.path / "checkpoint-3" / kTrainerStateFile));
  CHECK_FALSE(fs::exists(d.path / "checkpoint-3" / "old.txt"));
}

TEST_CASE("incomplete folders and other names are not checkpoints") {
  TempDir d("trainhook-ckptdirs");
  make_checkpoint(d.path, 2);
  make_checkpoint(d.path, 10);
  fs::create_directories(d.path / "checkpoint-20");  // no trainer_state.json: a crash
  fs::create_directories(d.path / "checkpoint-x");
  fs::create_directories(d.path / "tmp-checkpoint-30");
  CHECK(names(sorted_checkpoints(d.path)) == std::vector<std::string>{"checkpoint-2", "checkpoint-10"});
  CHECK(latest_checkpoint(d.path) == d.path / "checkpoint-10");
  CHECK_FALSE(latest_checkpoint(d.path / "missing"));
}

TEST_CASE("rotation deletes the oldest but never the best") {
  TempDir d("trainhook-ckptdirs");
  for (int64_t s : {1, 2, 3, 4, 5}) make_checkpoint(d.path, s);
  const std::string best = (d.path / "checkpoint-2").string();
  CHECK(names(sorted_checkpoints(d.path, best)) == std::vector<std::string>{"checkpoint-1", "checkpoint-3",
                                                                            "checkpoint-4", "checkpoint-2",
                                                                            "checkpoint-5"});
  const auto deleted = rotate_checkpoints(d.path, 2, best);
  CHECK(names(deleted) == std::vector<std::string>{"checkpoint-1", "checkpoint-3", "checkpoint-4"});
  CHECK(names(sorted_checkpoints(d.path)) == std::vector<std::string>{"checkpoint-2", "checkpoint-5"});
}

TEST_CASE("with save_total_limit 1 a best that is not the newest keeps two") {
  TempDir d("trainhook-ckptdirs");
  for (int64_t s : {1, 2, 3}) make_checkpoint(d.path, s);
  rotate_checkpoints(d.path, 1, (d.path / "checkpoint-1").string());
  CHECK(names(sorted_checkpoints(d.path)) == std::vector<std::string>{"checkpoint-1", "checkpoint-3"});
  rotate_checkpoints(d.path, 1, std::nullopt);
  CHECK(names(sorted_checkpoints(d.path)) == std::vector<std::string>{"checkpoint-3"});
}

// `error: stoll` on a folder whose step does not fit an int64.
TEST_CASE("a checkpoint folder with an overlong step number is named in our words") {
  TempDir d("trainhook-ckptdirs");
  make_checkpoint(d.path, 2);
  fs::create_directories(d.path / "checkpoint-99999999999999999999");
  std::ofstream(d.path / "checkpoint-99999999999999999999" / kTrainerStateFile) << "{}\n";
  CHECK_THROWS_WITH_AS(latest_checkpoint(d.path),
                       doctest::Contains("checkpoint-99999999999999999999: the step number "
                                         "99999999999999999999 of this checkpoint folder is too large"),
                       std::runtime_error);
}
