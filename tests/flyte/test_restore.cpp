#include "test_files.hpp"

#include <trainhook/flyte/checkpoint_upload.hpp>
#include <trainhook/flyte/local_folder_store.hpp>
#include <trainhook/flyte/manifest.hpp>
#include <trainhook/flyte/restore.hpp>

#include <doctest/doctest.h>

using namespace trainhook::flyte;
namespace support = trainhook::support;
using trainhook::LogLevel;
namespace fs = std::filesystem;

namespace {
support::Logger quiet() {
  return [](LogLevel, const std::string&) {};
}
void upload(Store& s, const fs::path& dir, const fs::path& scratch) {
  Cancellation never;
  upload_checkpoint(s, dir, dir.filename().string(), scratch, support::RetryPolicy{}, never, quiet());
}
}  // namespace

TEST_CASE("restore: the newest complete checkpoint wins, partial and corrupt ones are skipped") {
  flyte_test::TempDir tmp("th_flyte_restore");
  LocalFolderStore prev(tmp.path / "prev");
  for (int step : {10, 20, 30, 40})
    upload(prev, flyte_test::make_checkpoint(tmp.path / "run1", step), tmp.path / "m");
  // 40: corrupt (a byte changed after upload, same size); 50: partial (no manifest).
  flyte_test::write_file(tmp.path / "prev" / "checkpoint-40" / "optimizer" / "state.bin", "opt-41");
  flyte_test::make_checkpoint(tmp.path / "prev", 50);
  // 30: a file missing from the store.
  fs::remove(tmp.path / "prev" / "checkpoint-30" / "model.pt");
  flyte_test::write_file(tmp.path / "prev" / "log_history.html", "<html></html>");

  std::vector<std::string> warnings;
  support::Logger log = [&](LogLevel l, const std::string& m) {
    if (l == LogLevel::warn) warnings.push_back(m);
  };
  Cancellation never;
  const fs::path out = tmp.path / "out";
  const auto r = restore_checkpoints(prev, out, false, support::RetryPolicy{}, never, log);
  REQUIRE(r.resume_from);
  CHECK(*r.resume_from == out / "checkpoint-20");
  CHECK(r.restored == std::vector<std::string>{"checkpoint-20"});
  REQUIRE(r.skipped.size() == 3);
  CHECK(r.skipped[0].find("checkpoint-50: no manifest") == 0);
  CHECK(r.skipped[1].find("checkpoint-40: ") == 0);
  CHECK(r.skipped[1].find("SHA-256") != std::string::npos);
  CHECK(r.skipped[2].find("checkpoint-30: 'model.pt'") == 0);
  CHECK(warnings.size() == 3);
  CHECK(flyte_test::read_file(out / "checkpoint-20" / "model.pt") == std::string(1020, 'u'));
  CHECK_FALSE(fs::exists(out / "checkpoint-40"));
  CHECK_FALSE(fs::exists(out / "checkpoint-10"));  // only the newest complete one by default
  for (auto& e : fs::directory_iterator(out)) CHECK(e.path().filename().string().rfind(".trainhook", 0) != 0);

  // restore=all also brings the older complete ones; a local copy that already
  // matches is kept, one that does not is replaced.
  flyte_test::write_file(out / "checkpoint-20" / "model.pt", "local edit");
  const auto all = restore_checkpoints(prev, out, true, support::RetryPolicy{}, never, log);
  CHECK(all.restored == std::vector<std::string>{"checkpoint-20", "checkpoint-10"});
  CHECK(flyte_test::read_file(out / "checkpoint-20" / "model.pt") == std::string(1020, 'u'));
  CHECK(fs::exists(out / "checkpoint-10" / kManifestName));
}

TEST_CASE("restore: an empty or missing previous prefix restores nothing") {
  flyte_test::TempDir tmp("th_flyte_restore_empty");
  LocalFolderStore prev(tmp.path / "nothing-here");
  Cancellation never;
  const auto r = restore_checkpoints(prev, tmp.path / "out", false, support::RetryPolicy{}, never, quiet());
  CHECK_FALSE(r.resume_from);
  CHECK(r.skipped.empty());
}
