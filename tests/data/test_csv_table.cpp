// The labelled CSV reader and its errors (file:line named).
#include <trainhook/data/csv_table.hpp>

#include <doctest/doctest.h>

#include <unistd.h>
#include <fstream>

using namespace trainhook;
namespace fs = std::filesystem;

namespace {

fs::path write_csv(const std::string& name, const std::string& text) {
  const fs::path p = fs::temp_directory_path() / ("trainhook-csv-" + std::to_string(::getpid()) + "-" + name);
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
  fs::remove(p);
  fs::remove(h);
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
  for (const auto& p : {ragged, text, label, negative, empty}) fs::remove(p);
}
