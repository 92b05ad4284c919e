// The CSV text the csv logger writes and reads back (RFC 4180): cells of
// log_history values, and the quote-aware splitting it needs to widen the
// header of an existing file. Reading is of files a crashed run may have cut
// anywhere, so it accepts any bytes and never throws.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace trainhook::csv {

// A string cell: quoted (quotes doubled) when it holds a comma, a quote, a
// line break or leading/trailing spaces, else as is.
std::string quote_cell(std::string_view s);
// A value's cell: integers as integers, doubles in the shortest text that
// reads back to the same double ("nan", "inf", "-inf" for non-finite ones, as
// Python's float() and pandas read them), strings quoted, null empty.
std::string value_cell(const nlohmann::json& v);
// One row of cells joined by commas (no newline).
std::string join_row(const std::vector<std::string>& cells);

// The records of a CSV text: split at line breaks outside quotes; a final
// record without a newline is returned too (complete_only = false) or left
// out (true: a line a killed writer did not finish).
std::vector<std::string_view> split_records(std::string_view text, bool complete_only);
// The fields of one record, unquoted.
std::vector<std::string> parse_fields(std::string_view record);

}  // namespace trainhook::csv
