#include "test_files.hpp"

#include <trainhook/flyte/checkpoint_upload.hpp>
#include <trainhook/flyte/staging_folders.hpp>

#include <doctest/doctest.h>

#include <set>

using trainhook::flyte::stage_checkpoint;
using trainhook::flyte::StagingFolders;
namespace fs = std::filesystem;

namespace {

size_t entries(const fs::path& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

void ignore_log(trainhook::LogLevel, const std::string&) {}

}  // namespace

TEST_CASE("staging folders: spares are made at prepare and reused after their upload") {
  flyte_test::TempDir tmp("th_flyte_staging");
  const fs::path root = tmp.path / ".trainhook-upload-staging";
  {
    StagingFolders staging(root, 2);
    staging.prepare();
    REQUIRE(fs::is_directory(root));
    CHECK(entries(root) == 2);

    std::error_code ec;
    const fs::path a = staging.take(ec);
    REQUIRE_FALSE(ec);
    const fs::path b = staging.take(ec);
    REQUIRE_FALSE(ec);
    CHECK(entries(root) == 2);            // both came from the spares: no folder made
    const fs::path c = staging.take(ec);  // no spare left: a new one
    REQUIRE_FALSE(ec);
    CHECK(entries(root) == 3);
    CHECK(std::set<fs::path>{a, b, c}.size() == 3);

    flyte_test::write_file(a / "model.pt", "x");
    flyte_test::write_file(a / "optimizer" / "state.bin", "y");
    staging.give_back(a);
    CHECK(fs::is_directory(a));
    CHECK(entries(a) == 0);  // emptied for the next save
    staging.give_back(b);
    staging.give_back(c);  // a third spare is one more than kept: removed
    CHECK_FALSE(fs::exists(c));
    CHECK(entries(root) == 2);
    const fs::path again = staging.take(ec);
    CHECK((again == a || again == b));
    staging.give_back(again);
  }
  // The destructor removes the spares and the (then empty) root.
  CHECK_FALSE(fs::exists(root));
}

TEST_CASE("staging folders: clear keeps a root that holds something else") {
  flyte_test::TempDir tmp("th_flyte_staging_keep");
  const fs::path root = tmp.path / "staging";
  StagingFolders staging(root, 1);
  staging.prepare();
  flyte_test::write_file(root / "other-process" / "file", "z");
  staging.clear();
  CHECK(fs::exists(root / "other-process" / "file"));
  CHECK(entries(root) == 1);
}

TEST_CASE("stage checkpoint: hard links of every file survive the checkpoint's deletion") {
  flyte_test::TempDir tmp("th_flyte_stage");
  StagingFolders staging(tmp.path / "staging", 1);
  staging.prepare();
  for (const std::string suffix : {"", "/"}) {
    INFO("checkpoint folder given as '<dir>" << suffix << "'");
    const fs::path dir = flyte_test::make_checkpoint(tmp.path / "out", 3);
    const fs::path staged = stage_checkpoint(fs::path(dir.string() + suffix), staging, ignore_log);
    REQUIRE(staged != dir);
    CHECK(staged.parent_path() == tmp.path / "staging");
    const std::string model = flyte_test::read_file(dir / "model.pt");
    fs::remove_all(dir);  // save_total_limit deletes it mid-upload
    CHECK(flyte_test::read_file(staged / "model.pt") == model);
    CHECK(flyte_test::read_file(staged / "optimizer" / "state.bin") == "opt-3");
    CHECK(flyte_test::read_file(staged / "trainer_state.json") == "{\"global_step\": 3}\n");
    CHECK(entries(staged) == 3);
    staging.give_back(staged);
  }
}

TEST_CASE("stage checkpoint: without a staging folder the checkpoint uploads from where it is") {
  flyte_test::TempDir tmp("th_flyte_stage_fail");
  const fs::path dir = flyte_test::make_checkpoint(tmp.path / "out", 4);
  flyte_test::write_file(tmp.path / "blocked", "a file where the staging root should be");
  StagingFolders staging(tmp.path / "blocked" / "staging", 1);
  staging.prepare();
  CHECK(stage_checkpoint(dir, staging, ignore_log) == dir);
}
