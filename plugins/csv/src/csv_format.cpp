#include <trainhook/csv/csv_format.hpp>

#include <trainhook/csv/csv_text.hpp>

#include <algorithm>

namespace trainhook::csv {

bool CsvFormat::widen(const nlohmann::json& entry) {
  std::vector<std::string> added;
  for (auto it = entry.begin(); it != entry.end(); ++it)
    if (std::find(header_.begin(), header_.end(), it.key()) == header_.end()) added.push_back(it.key());
  std::sort(added.begin(), added.end());
  header_.insert(header_.end(), added.begin(), added.end());
  return !added.empty();
}

std::string CsvFormat::row(const nlohmann::json& entry) const {
  std::vector<std::string> cells;
  cells.reserve(header_.size());
  for (const std::string& k : header_) {
    auto it = entry.find(k);
    cells.push_back(it == entry.end() ? std::string() : value_cell(*it));
  }
  return join_row(cells);
}

void CsvFormat::reset(const std::filesystem::path& file, const nlohmann::json& entries) {
  header_.clear();
  for (const nlohmann::json& e : entries) widen(e);
  std::string text;
  if (!header_.empty()) {
    std::vector<std::string> names;
    for (const std::string& k : header_) names.push_back(quote_cell(k));
    text = join_row(names) + "\n";
    for (const nlohmann::json& e : entries) text += row(e) + "\n";
  }
  out_.close();
  support::write_file_atomically(file, text);
  header_known_ = true;
}

void CsvFormat::read_header(const std::filesystem::path& file) {
  header_.clear();
  const std::optional<std::string> text = support::read_file_if_exists(file);
  if (text) {
    const std::vector<std::string_view> records = split_records(*text, true);
    if (!records.empty()) header_ = parse_fields(records.front());
  }
  header_known_ = true;
}

void CsvFormat::append(const std::filesystem::path& file, const nlohmann::json& entry) {
  if (!header_known_) read_header(file);
  const size_t old_width = header_.size();
  if (widen(entry)) {
    // Rewrite: the new header, and every complete row of the file padded to it
    // (an unfinished last row, from a killed run, is dropped).
    std::vector<std::string> names;
    for (const std::string& k : header_) names.push_back(quote_cell(k));
    std::string text = join_row(names) + "\n";
    if (old_width > 0) {
      const std::optional<std::string> old = support::read_file_if_exists(file);
      const std::string pad(header_.size() - old_width, ',');
      if (old) {
        const std::vector<std::string_view> records = split_records(*old, true);
        for (size_t i = 1; i < records.size(); ++i) {
          text.append(records[i].data(), records[i].size());
          text += pad;
          text += '\n';
        }
      }
    }
    out_.close();
    support::write_file_atomically(file, text);
  }
  if (!out_.is_open()) out_ = support::AppendFile(file);
  out_.write_line(row(entry));
}

}  // namespace trainhook::csv
