#include <doctest/doctest.h>
#include <temp_dir.hpp>
#include <trainhook/support/spool.hpp>

#include <filesystem>
#include <fstream>

using trainhook::support::Spool;
using trainhook::testkit::TempDir;
namespace fs = std::filesystem;

// Each test's folder is "spool" in a TempDir of its own, not made yet: the Spool makes it.

TEST_CASE("append then peek and acknowledge in order and files vanish when all is delivered") {
  const TempDir tmp("th_spool_order");
  const fs::path dir = tmp.path / "spool";
  fs::path file = dir / "sub" / "spool.jsonl";
  Spool s(file);
  CHECK(s.empty());
  CHECK_FALSE(fs::exists(file));
  s.append({R"({"i":1})", R"({"i":2})", R"({"i":3})"});
  CHECK(s.pending() == 3);
  auto c = s.peek(2);
  REQUIRE(c.lines.size() == 2);
  CHECK(c.lines[0] == R"({"i":1})");
  CHECK(c.lines[1] == R"({"i":2})");
  CHECK(s.peek(2).lines == c.lines);  // peeking does not consume
  s.acknowledge(c);
  CHECK(s.pending() == 1);
  s.append({R"({"i":4})"});
  auto rest = s.peek(10);
  CHECK(rest.lines == std::vector<std::string>{R"({"i":3})", R"({"i":4})"});
  s.acknowledge(rest);
  CHECK(s.empty());
  CHECK_FALSE(fs::exists(file));
  CHECK_FALSE(fs::exists(file.string() + ".ack"));
}

TEST_CASE("a later process replays exactly the unacknowledged lines") {
  const TempDir tmp("th_spool_replay");
  const fs::path dir = tmp.path / "spool";
  fs::path file = dir / "spool.jsonl";
  {
    Spool s(file);
    s.append({"a", "b", "c", "d"});
    s.acknowledge(s.peek(3));
  }
  Spool again(file);
  CHECK(again.pending() == 1);
  CHECK(again.peek(10).lines == std::vector<std::string>{"d"});
}

TEST_CASE("a torn last line (crash mid-append) is cut off when opened") {
  const TempDir tmp("th_spool_torn");
  const fs::path dir = tmp.path / "spool";
  fs::create_directories(dir);
  fs::path file = dir / "spool.jsonl";
  std::ofstream(file, std::ios::binary) << "one\ntwo\nthr";
  Spool s(file);
  CHECK(s.pending() == 2);
  s.append({"three"});
  CHECK(s.peek(10).lines == std::vector<std::string>{"one", "two", "three"});
}

TEST_CASE("a large acknowledged prefix is compacted away") {
  const TempDir tmp("th_spool_compact");
  const fs::path dir = tmp.path / "spool";
  fs::path file = dir / "spool.jsonl";
  Spool s(file);
  std::string big(1000, 'x');
  std::vector<std::string> lines(6000, big);
  lines.push_back("last");
  s.append(lines);
  s.acknowledge(s.peek(6000));
  CHECK(s.pending() == 1);
  CHECK(fs::file_size(file) == 5);  // "last\n" only
  Spool reopened(file);
  CHECK(reopened.peek(10).lines == std::vector<std::string>{"last"});
}

TEST_CASE(
    "prepend puts lines before the unacknowledged ones, also after a partial acknowledge and a reopen") {
  const TempDir tmp("th_spool_prepend");
  const fs::path dir = tmp.path / "spool";
  fs::path file = dir / "spool.jsonl";
  {
    Spool s(file);
    s.prepend({"a0"});  // an empty spool: same as append
    CHECK(s.pending() == 1);
    s.append({"b1", "b2", "b3"});
    auto first = s.peek(2);  // a0, b1 acknowledged
    s.acknowledge(first);
    s.prepend({"f1", "f2"});
    CHECK(s.pending() == 4);
    CHECK(s.peek(10).lines == std::vector<std::string>{"f1", "f2", "b2", "b3"});
    s.append({"c1"});
    CHECK(s.peek(10).lines == std::vector<std::string>{"f1", "f2", "b2", "b3", "c1"});
  }
  Spool again(file);  // the acknowledged a0, b1 are not replayed
  CHECK(again.pending() == 5);
  auto all = again.peek(10);
  CHECK(all.lines == std::vector<std::string>{"f1", "f2", "b2", "b3", "c1"});
  again.acknowledge(all);
  CHECK(again.empty());
  CHECK_FALSE(fs::exists(file));
}
