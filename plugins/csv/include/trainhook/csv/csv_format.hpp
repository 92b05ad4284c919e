// The csv logger's file format: a header row, then one row per log_history
// entry. The header grows as Lightning's CSVLogger's does: when an entry
// brings keys the header lacks, they are added at its end (sorted among
// themselves) and the file is rewritten atomically with the wider header and
// the earlier rows padded with empty cells; then the row is appended.
#pragma once

#include <trainhook/support/line_file.hpp>
#include <trainhook/support/log_history_file.hpp>

#include <string>
#include <vector>

namespace trainhook::csv {

class CsvFormat final : public support::LogHistoryFormat {
 public:
  void reset(const std::filesystem::path& file, const nlohmann::json& entries) override;
  void append(const std::filesystem::path& file, const nlohmann::json& entry) override;

  const std::vector<std::string>& header() const noexcept { return header_; }
  // Rewrites of the whole file so far (header widenings and resets), for tests.

 private:
  // Adds the keys of `entry` the header lacks; true when it grew.
  bool widen(const nlohmann::json& entry);
  std::string row(const nlohmann::json& entry) const;
  void read_header(const std::filesystem::path& file);

  std::vector<std::string> header_;
  bool header_known_ = false;  // header_ matches the file (read, reset or written)
  support::AppendFile out_;
};

}  // namespace trainhook::csv
