// support::AppendFile, write_file_atomically and read_file_if_exists: lines
// land whole and in order, a rewrite replaces the file in one step, errors
// name the file.
#include <trainhook/support/line_file.hpp>

#include <doctest/doctest.h>
#include <temp_dir.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace fs = std::filesystem;
using trainhook::support::AppendFile;
using trainhook::support::read_file_if_exists;
using trainhook::support::write_file_atomically;
using trainhook::testkit::TempDir;

TEST_CASE("AppendFile appends whole lines and creates the folder") {
  const TempDir tmp("th_line_file_append");
  const fs::path& d = tmp.path;
  const fs::path f = d / "sub" / "log.jsonl";
  {
    AppendFile out(f);
    CHECK(out.is_open());
    out.write_line("one");
    out.write_line("two");
    // Visible to a reader before the file is closed (no user-space buffer).
    CHECK(read_file_if_exists(f).value() == "one\ntwo\n");
  }
  AppendFile again(f);
  again.write_line("three");
  CHECK(read_file_if_exists(f).value() == "one\ntwo\nthree\n");
}

TEST_CASE("write_file_atomically replaces the file and leaves no temporary file") {
  const TempDir tmp("th_line_file_atomic");
  const fs::path& d = tmp.path;
  const fs::path f = d / "x.csv";
  write_file_atomically(f, "a\n");
  write_file_atomically(f, "b,c\n1,2\n");
  CHECK(read_file_if_exists(f).value() == "b,c\n1,2\n");
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(d)) files += e.is_regular_file() ? 1 : 0;
  CHECK(files == 1);
}

TEST_CASE("an append descriptor keeps the old file after an atomic rewrite") {
  // Why the loggers reopen after a rewrite: the descriptor points at the replaced inode.
  const TempDir tmp("th_line_file_reopen");
  const fs::path& d = tmp.path;
  const fs::path f = d / "x.txt";
  AppendFile out(f);
  out.write_line("old");
  write_file_atomically(f, "new\n");
  out.write_line("lost");
  CHECK(read_file_if_exists(f).value() == "new\n");
}

TEST_CASE("read_file_if_exists answers nullopt for a missing file") {
  const TempDir tmp("th_line_file_missing");
  CHECK_FALSE(read_file_if_exists(tmp.path / "none").has_value());
}

TEST_CASE("errors name the file") {
  if (::geteuid() == 0) return;  // root writes anywhere
  const TempDir tmp("th_line_file_readonly");
  const fs::path& d = tmp.path;
  ::chmod(d.c_str(), 0555);
  try {
    AppendFile out(d / "x.log");
    FAIL("opened a file in a read-only folder");
  } catch (const std::system_error& e) {
    CHECK(std::string(e.what()).find((d / "x.log").string()) != std::string::npos);
  }
  try {
    write_file_atomically(d / "y.csv", "z");
    FAIL("wrote a file in a read-only folder");
  } catch (const std::system_error& e) {
    CHECK(std::string(e.what()).find((d / "y.csv").string()) != std::string::npos);
  }
}
