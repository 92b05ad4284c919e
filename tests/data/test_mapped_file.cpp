// The read-only file mapping: contents, empty files, errors naming the file,
// and released pages read back the same.
#include <trainhook/data/mapped_file.hpp>

#include "npy_writer.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <stdexcept>

using namespace trainhook;
using namespace trainhook::test;

TEST_CASE("a mapped file shows its bytes and reads them back after release") {
  std::string text(3 * 4096 + 5, 'a');
  text[4096] = 'b';
  const auto p = write_bytes(scratch("m.bin"), text);
  const auto m = map_file(p);
  REQUIRE(m->size() == text.size());
  CHECK(std::memcmp(m->data(), text.data(), text.size()) == 0);
  m->release_pages();
  CHECK(m->data()[4096] == 'b');
  CHECK(m->name() == p.string());
  const auto empty = map_file(write_bytes(scratch("empty.bin"), ""));
  CHECK(empty->size() == 0);
  CHECK(empty->data() == nullptr);
}

TEST_CASE("a missing file or a folder is named") {
  const auto missing = scratch("none.bin");
  const std::string expected = missing.string() + ": cannot open";
  CHECK_THROWS_WITH_AS(map_file(missing), doctest::Contains(expected.c_str()), std::runtime_error);
  CHECK_THROWS_WITH_AS(map_file(missing.parent_path()), doctest::Contains("not a regular file"),
                       std::runtime_error);
}
