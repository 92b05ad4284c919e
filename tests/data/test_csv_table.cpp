// The labelled CSV reader and its errors (file:line named).
#include <trainhook/data/csv_table.hpp>

#include <doctest/doctest.h>
#include <temp_dir.hpp>

#include <fstream>

using namespace trainhook;
namespace fs = std::filesystem;

namespace {

// In one folder per test process (each CTest case is one), removed when it exits.
fs::path write_csv(const std::string& name, const std::string& text) {
  static const testkit::TempDir dir("trainhook-csv");
  const fs::path p = dir.path / name;
  std::ofstream(p) << text;
  return p;
}

}  // namespace

TEST_CASE("rows of features with the label last, first, or named") {
  const auto p = write_csv("ok.csv", "1,2,0\n3,4.5,2\r\n\n5,6,1\n");
  const auto t = read_labeled_csv(p, "last", false);
  CHECK(t.rows == 3);
  CHECK(t.features == 2);
  CHECK(t.values == std::vector<float>{1, 2, 3, 4.5f, 5, 6});
  CHECK(t.labels == std::vector<int64_t>{0, 2, 1});
  CHECK(t.lines == std::vector<int64_t>{1, 2, 4});
  const auto first = read_labeled_csv(p, "first", false);
  CHECK(first.labels == std::vector<int64_t>{1, 3, 5});
  const auto h = write_csv("header.csv", "a,label,b\n1,1,2\n");
  const auto named = read_labeled_csv(h, "label", true);
  CHECK(named.labels == std::vector<int64_t>{1});
  CHECK(named.values == std::vector<float>{1, 2});
  CHECK(read_labeled_csv(h, "0", true).labels == std::vector<int64_t>{1});
}

TEST_CASE("errors name the file and line") {
  CHECK_THROWS_WITH_AS(read_labeled_csv("/nonexistent/x.csv", "last", false),
                       doctest::Contains("/nonexistent/x.csv: cannot open"), std::runtime_error);
  const auto ragged = write_csv("ragged.csv", "1,2,0\n1,2\n");
  CHECK_THROWS_WITH_AS(read_labeled_csv(ragged, "last", false),
                       doctest::Contains((ragged.string() + ":2: expected 3 fields, found 2").c_str()),
                       std::runtime_error);
  const auto text = write_csv("text.csv", "1,2,0\n1,abc,1\n");
  CHECK_THROWS_WITH_AS(read_labeled_csv(text, "last", false),
                       doctest::Contains(":2: field 2 'abc' is not a finite number"), std::runtime_error);
  const auto label = write_csv("label.csv", "1,2,0\n1,2,1.5\n");
  CHECK_THROWS_WITH_AS(read_labeled_csv(label, "last", false), doctest::Contains(":2: label '1.5'"),
                       std::runtime_error);
  const auto negative = write_csv("negative.csv", "1,2,-1\n");
  CHECK_THROWS_WITH_AS(read_labeled_csv(negative, "last", false), doctest::Contains(":1: label '-1'"),
                       std::runtime_error);
  const auto empty = write_csv("empty.csv", "\n\n");
  CHECK_THROWS_WITH_AS(read_labeled_csv(empty, "last", false), doctest::Contains("no data rows"),
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(read_labeled_csv(ragged, "label", false), doctest::Contains("no header"),
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(read_labeled_csv(ragged, "7", false), doctest::Contains("out of range"),
                       std::runtime_error);
}

// Values and files the reader used to accept wrongly or report in
// library terms.
TEST_CASE("a value that is finite as a double but not as a float is a data error naming file, line, field") {
  const auto p = write_csv("overflow.csv", "1,2,0\n3,1e39,1\n");
  CHECK_THROWS_WITH_AS(
      read_labeled_csv(p, "last", false),
      doctest::Contains((p.string() + ":2: field 2 '1e39' does not fit a 32-bit float").c_str()),
      std::runtime_error);
  const auto neg = write_csv("overflow-neg.csv", "-3.5e38,2,0\n");
  CHECK_THROWS_WITH_AS(read_labeled_csv(neg, "last", false), doctest::Contains(":1: field 1 '-3.5e38'"),
                       std::runtime_error);
  const auto ok = write_csv("float-max.csv", "3.4e38,-3.4e38,0\n");
  CHECK(read_labeled_csv(ok, "last", false).rows == 1);
}

TEST_CASE("a UTF-8 byte-order mark at the start is accepted") {
  const auto p = write_csv("bom.csv",
                           "\xEF\xBB\xBF"
                           "0,2,1\n3,4,0\n");
  const auto t = read_labeled_csv(p, "last", false);
  CHECK(t.values == std::vector<float>{0, 2, 3, 4});
  const auto h = write_csv("bom-header.csv",
                           "\xEF\xBB\xBF"
                           "label,x\n1,2\n");
  CHECK(read_labeled_csv(h, "label", true).labels == std::vector<int64_t>{1});
}

TEST_CASE("a folder given as the CSV file is named as a folder") {
  const testkit::TempDir tmp("trainhook-csv-dir");
  const fs::path dir = tmp.path / "table.csv";
  fs::create_directories(dir);
  CHECK_THROWS_WITH_AS(read_labeled_csv(dir, "last", false),
                       doctest::Contains((dir.string() + ": is a folder, not a CSV file").c_str()),
                       std::runtime_error);
}

TEST_CASE("class ids out of range are a data error naming file and line") {
  const auto huge = write_csv("label-1e300.csv", "1,0\n2,1e300\n");
  CHECK_THROWS_WITH_AS(read_labeled_csv(huge, "last", false),
                       doctest::Contains((huge.string() + ":2: label '1e300' is far too large").c_str()),
                       std::runtime_error);
  const auto big = write_csv("label-1e12.csv", "1,0\n2,1\n\n3,1e12\n");
  CHECK_THROWS_WITH_AS(
      read_labeled_csv(big, "last", false),
      doctest::Contains((big.string() + ":4: label 1000000000000 is too large a class id").c_str()),
      std::runtime_error);
  const auto fine = write_csv("label-65535.csv", "1,0\n2,65535\n");
  CHECK(read_labeled_csv(fine, "last", false).labels == std::vector<int64_t>{0, 65535});
}
