// Reads a CSV of numeric features with one integer label column (the built-in
// tabular format). Every error names the file and line. No LibTorch here.
#pragma once

#include <cstdint>
#include <filesystem>
#include <istream>
#include <string>
#include <vector>

namespace trainhook {

struct LabeledTable {
  int64_t rows = 0;
  int64_t features = 0;         // columns minus the label
  std::vector<float> values;    // rows × features, row-major
  std::vector<int64_t> labels;  // one per row, >= 0 (integer labels)
  std::vector<double> real_labels;  // one per row (integer_labels = false: regression)
  std::vector<int64_t> lines;   // the file line of each row (for errors)
};

// label_column: "first", "last", a header name (needs header) or a 0-based
// index. Throws std::runtime_error: missing file, empty file, ragged row
// ("<file>:<line>: expected N fields, found M"), a field that is not a number,
// a label that is not a non-negative integer.
// integer_labels = false reads the label as any finite number into real_labels.
LabeledTable read_labeled_csv(const std::filesystem::path& file, const std::string& label_column,
                              bool header, bool integer_labels = true);
// The same from a stream; `file` only names it in errors (the fuzz target's way in).
LabeledTable read_labeled_csv(std::istream& in, const std::filesystem::path& file,
                              const std::string& label_column, bool header, bool integer_labels = true);

}  // namespace trainhook
