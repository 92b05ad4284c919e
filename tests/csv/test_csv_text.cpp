// csv_text: cells (quoting, round-trip numbers, non-finite values) and the
// quote-aware record and field splitting the header widening relies on.
#include <trainhook/csv/csv_text.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

using namespace trainhook::csv;

TEST_CASE("quote_cell quotes only what needs it") {
  CHECK(quote_cell("loss") == "loss");
  CHECK(quote_cell("a,b") == "\"a,b\"");
  CHECK(quote_cell("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(quote_cell("two\nlines") == "\"two\nlines\"");
  CHECK(quote_cell(" padded") == "\" padded\"");
  CHECK(quote_cell("") == "");
}

TEST_CASE("value_cell writes numbers that read back to the same double") {
  for (double v : {0.1, 1.0 / 3.0, 2.5e-300, 1e21, -7.0, 123456789.123456789, 5e-324}) {
    const std::string cell = value_cell(nlohmann::json(v));
    CHECK_MESSAGE(std::strtod(cell.c_str(), nullptr) == v, cell);  // stod refuses subnormals
  }
  CHECK(value_cell(nlohmann::json(int64_t{42})) == "42");
  CHECK(value_cell(nlohmann::json(std::numeric_limits<double>::quiet_NaN())) == "nan");
  CHECK(value_cell(nlohmann::json(std::numeric_limits<double>::infinity())) == "inf");
  CHECK(value_cell(nlohmann::json(-std::numeric_limits<double>::infinity())) == "-inf");
  CHECK(value_cell(nlohmann::json("x,y")) == "\"x,y\"");
  CHECK(value_cell(nlohmann::json(nullptr)) == "");
}

TEST_CASE("split_records keeps quoted line breaks inside a record") {
  const std::string text = "a,b\n\"x\ny\",2\r\n3,4\npartial,5";
  const auto all = split_records(text, false);
  REQUIRE(all.size() == 4);
  CHECK(all[1] == "\"x\ny\",2");
  CHECK(all[2] == "3,4");
  CHECK(all[3] == "partial,5");
  CHECK(split_records(text, true).size() == 3);
  CHECK(split_records("", false).empty());
}

TEST_CASE("parse_fields undoes quote_cell") {
  const std::vector<std::string> cells = {"plain", "a,b", "q\"uote", "two\nlines", ""};
  std::vector<std::string> quoted;
  for (const auto& c : cells) quoted.push_back(quote_cell(c));
  CHECK(parse_fields(join_row(quoted)) == cells);
  CHECK(parse_fields("") == std::vector<std::string>{""});
  CHECK(parse_fields("\"unterminated,x") == std::vector<std::string>{"unterminated,x"});
}
