// write_file_atomically: the old file survives any failure, no temporary is
// left behind, and the error names the file and the free space.
#include <trainhook/checkpoint/atomic_file.hpp>

#include <doctest/doctest.h>
#include <temp_dir.hpp>

#include <unistd.h>
#include <fstream>
#include <sstream>

using namespace trainhook;
namespace fs = std::filesystem;
using trainhook::testkit::TempDir;
using trainhook::testkit::read_file;

namespace {

size_t files_in(const fs::path& dir) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.is_regular_file() ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("a write replaces the file whole") {
  TempDir d("th_atomic");
  write_text_atomically(d.path / "model.pt", "old");
  write_text_atomically(d.path / "model.pt", "new weights");
  CHECK(read_file(d.path / "model.pt") == "new weights");
  CHECK(files_in(d.path) == 1);
}

TEST_CASE("a failing writer leaves the previous file untouched and names the file and the free space") {
  TempDir d("th_atomic");
  write_text_atomically(d.path / "model.pt", "previous");
  const std::string file = (d.path / "model.pt").string();
  CHECK_THROWS_WITH_AS(write_file_atomically(d.path / "model.pt",
                                             [](const fs::path& tmp) {
                                               std::ofstream(tmp) << "half";
                                               throw std::runtime_error("No space left on device");
                                             }),
                       doctest::Contains(("cannot write " + file + ": No space left on device (").c_str()),
                       std::runtime_error);
  CHECK(read_file(d.path / "model.pt") == "previous");
  CHECK(files_in(d.path) == 1);
  CHECK(free_space_note(d.path).find(" MB free on " + d.path.string() + ")") != std::string::npos);
}

TEST_CASE("a folder that cannot be written is an error naming the file") {
  CHECK_THROWS_WITH_AS(write_text_atomically("/nonexistent-dir/x.json", "{}"),
                       doctest::Contains("cannot write /nonexistent-dir/x.json: cannot open for writing"),
                       std::runtime_error);
}
