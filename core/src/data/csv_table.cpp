// A strict reader for numeric CSV files: comma-separated, no quoting (numbers
// need none), blank lines skipped, CRLF tolerated.
#include <trainhook/data/csv_table.hpp>

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace trainhook {
namespace {

std::vector<std::string> split_fields(const std::string& line) {
  std::vector<std::string> fields;
  std::string::size_type start = 0;
  while (true) {
    const auto comma = line.find(',', start);
    std::string f = line.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const auto b = f.find_first_not_of(" \t");
    const auto e = f.find_last_not_of(" \t");
    fields.push_back(b == std::string::npos ? std::string() : f.substr(b, e - b + 1));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return fields;
}

std::string where(const std::filesystem::path& file, int64_t line) {
  return file.string() + ":" + std::to_string(line) + ": ";
}

double parse_number(const std::string& text, const std::filesystem::path& file, int64_t line, size_t column) {
  if (text.empty()) {
    throw std::runtime_error(where(file, line) + "field " + std::to_string(column + 1) +
                             " is empty (expected a number)");
  }
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v)) {
    throw std::runtime_error(where(file, line) + "field " + std::to_string(column + 1) + " '" + text +
                             "' is not a finite number");
  }
  return v;
}

// Features become 32-bit floats (the training dtype): a value that is finite
// as a double but not as a float (1e39) would turn into inf and every weight
// into NaN, silently.
float feature_value(double v, const std::string& text, const std::filesystem::path& file, int64_t line,
                    size_t column) {
  if (std::fabs(v) > static_cast<double>(FLT_MAX)) {
    throw std::runtime_error(where(file, line) + "field " + std::to_string(column + 1) + " '" + text +
                             "' does not fit a 32-bit float, the training dtype (largest magnitude about "
                             "3.4e38)");
  }
  return static_cast<float>(v);
}

// A class id becomes the size of the output layer: ids beyond both this and
// the number of rows (a CSV cannot hold more distinct classes than rows) are a
// data error rather than a giant allocation.
constexpr int64_t kClassIdsAlwaysAllowed = 65536;

size_t resolve_label_column(const std::string& spec, const std::vector<std::string>& header, size_t columns,
                            const std::filesystem::path& file) {
  if (spec == "last") return columns - 1;
  if (spec == "first") return 0;
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == spec) return i;
  }
  char* end = nullptr;
  const long idx = std::strtol(spec.c_str(), &end, 10);
  if (!spec.empty() && end == spec.c_str() + spec.size()) {
    if (idx < 0 || static_cast<size_t>(idx) >= columns) {
      throw std::runtime_error("label_column: index " + spec + " is out of range for " + file.string() +
                               ", which has " + std::to_string(columns) +
                               " columns (0-based index expected)");
    }
    return static_cast<size_t>(idx);
  }
  throw std::runtime_error("label_column: '" + spec + "' is not first, last, a column index" +
                           (header.empty() ? std::string(" (and ") + file.string() +
                                                 " has no header; set csv_header for column names)"
                                           : std::string(" or a column of the header of ") + file.string()));
}

}  // namespace

LabeledTable read_labeled_csv(const std::filesystem::path& file, const std::string& label_column,
                              bool header, bool integer_labels) {
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec))
    throw std::runtime_error(file.string() + ": is a folder, not a CSV file (give the path of a .csv file)");
  std::ifstream in(file);
  if (!in) throw std::runtime_error(file.string() + ": cannot open the CSV file (missing or unreadable)");
  return read_labeled_csv(in, file, label_column, header, integer_labels);
}

LabeledTable read_labeled_csv(std::istream& in, const std::filesystem::path& file,
                              const std::string& label_column, bool header, bool integer_labels) {
  LabeledTable t;
  std::vector<std::string> names;
  size_t columns = 0;
  size_t label = 0;
  std::string line;
  int64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    // A UTF-8 byte-order mark (Excel writes one) is not part of the first field.
    if (line_no == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    std::vector<std::string> fields = split_fields(line);
    if (columns == 0) {
      columns = fields.size();
      if (columns < 2) {
        throw std::runtime_error(where(file, line_no) +
                                 "expected at least 2 fields (features and a label), found " +
                                 std::to_string(columns));
      }
      if (header) {
        names = fields;
        label = resolve_label_column(label_column, names, columns, file);
        continue;
      }
      label = resolve_label_column(label_column, names, columns, file);
    }
    if (fields.size() != columns) {
      throw std::runtime_error(where(file, line_no) + "expected " + std::to_string(columns) +
                               " fields, found " + std::to_string(fields.size()) + " (ragged CSV)");
    }
    for (size_t c = 0; c < columns; ++c) {
      const double v = parse_number(fields[c], file, line_no, c);
      if (c == label && !integer_labels) {
        // A real-valued target must fit the training dtype like a feature.
        t.real_labels.push_back(static_cast<double>(feature_value(v, fields[c], file, line_no, c)));
      } else if (c == label) {
        if (v < 0 || v != std::floor(v)) {
          throw std::runtime_error(where(file, line_no) + "label '" + fields[c] +
                                   "' is not a non-negative integer class id (for real-valued labels use --loss mse or l1)");
        }
        if (v > 9007199254740992.0) {  // 2^53: beyond it a double is no exact integer (and 1e300 no int64)
          throw std::runtime_error(where(file, line_no) + "label '" + fields[c] +
                                   "' is far too large for a class id (class ids are 0, 1, 2, ...)");
        }
        t.labels.push_back(static_cast<int64_t>(v));
      } else {
        t.values.push_back(feature_value(v, fields[c], file, line_no, c));
      }
    }
    t.lines.push_back(line_no);
    ++t.rows;
  }
  if (t.rows == 0) throw std::runtime_error(file.string() + ": no data rows");
  const int64_t class_limit = std::max(kClassIdsAlwaysAllowed, t.rows);
  for (size_t i = 0; i < t.labels.size(); ++i) {
    if (t.labels[i] >= class_limit)
      throw std::runtime_error(where(file, t.lines[i]) + "label " + std::to_string(t.labels[i]) +
                               " is too large a class id: the file has " + std::to_string(t.rows) +
                               " rows, and class ids must be below " + std::to_string(class_limit) +
                               " (the larger of 65536 and the number of rows; each id up to the largest "
                               "gets an output of the model)");
  }
  t.features = static_cast<int64_t>(columns) - 1;
  return t;
}

}  // namespace trainhook
