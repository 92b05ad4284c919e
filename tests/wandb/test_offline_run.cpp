// The offline spool: writer, reader, torn lines, sync state, errors.
#include <trainhook/wandb/offline_run.hpp>

#include <doctest/doctest.h>
#include <temp_dir.hpp>

#include <filesystem>
#include <fstream>

using namespace trainhook::wandb;
namespace fs = std::filesystem;
using trainhook::testkit::TempDir;

TEST_CASE("offline run: name, round trip, torn line, sync state") {
  CHECK(offline_dir_name(0, "abc") == "offline-run-19700101_000000-abc");
  const TempDir tmp("wandb-offline-test");
  const fs::path& root = tmp.path;
  OfflineMeta meta;
  meta.spec.run_id = "abc";
  meta.spec.project = "p";
  meta.spec.config_json = R"({"lr":{"value":1}})";
  meta.spec.tags = {"x"};
  meta.base_url = "http://h";
  meta.history_offset = 3;
  meta.reason = "test";
  fs::path dir;
  {
    OfflineRunWriter w(root, meta, 0);
    dir = w.dir();
    w.append(std::vector<std::string>{R"({"a":1})", R"({"a":2})"});
    w.append(R"({"a":NaN})");
    w.write_summary(R"({"a":3})");
    CHECK(w.lines_written() == 3);
  }
  CHECK(dir == root / "wandb" / "offline-run-19700101_000000-abc");
  OfflineRun r = read_offline_run(dir);
  CHECK(r.meta.spec.run_id == "abc");
  CHECK(r.meta.spec.tags == std::vector<std::string>{"x"});
  CHECK(r.meta.spec.config_json == R"({"lr":{"value":1}})");
  CHECK(r.meta.history_offset == 3);
  CHECK(r.lines.size() == 3);
  CHECK(r.summary == std::optional<std::string>(R"({"a":3})"));
  CHECK_FALSE(r.exitcode);

  { std::ofstream(dir / "history.jsonl", std::ios::app) << R"({"a":4)"; }  // crash mid-append
  {
    OfflineRun t = read_offline_run(dir);
    CHECK(t.torn_last_line);
    CHECK(t.lines.size() == 3);
  }
  write_sync_state(dir, 2, false);
  { std::ofstream(dir / "exit.json") << R"({"exitcode": 1})"; }
  OfflineRun s = read_offline_run(dir);
  CHECK(s.synced_lines == 2);
  CHECK_FALSE(s.synced_complete);
  CHECK(s.exitcode == std::optional<int>(1));
}

TEST_CASE("offline run: errors name the file") {
  const TempDir tmp("wandb-offline-test");
  const fs::path& root = tmp.path;
  CHECK_THROWS_WITH(read_offline_run(root), doctest::Contains("no run.json"));
  { std::ofstream(root / "run.json") << R"({"format":"other"})"; }
  CHECK_THROWS_WITH(read_offline_run(root), doctest::Contains("unknown format"));
  {
    std::ofstream(root / "run.json")
        << R"({"format":"trainhook-wandb-offline-1","run":{"run_id":"a","project":"p"},"history_offset":0})";
  }
  { std::ofstream(root / "history.jsonl") << "{\"a\":1}\nnot json\n"; }
  CHECK_THROWS_WITH(read_offline_run(root), doctest::Contains("history.jsonl line 2 is not a JSON object"));
}
