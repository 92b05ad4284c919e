// The progress bar's and the log line's text (pure functions).
#include <trainhook/progress/bar_format.hpp>
#include <trainhook/progress/log_format.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

using namespace trainhook::progress;

namespace {
// Display columns of UTF-8 text (every code point here is one column wide).
size_t columns_of(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}
}  // namespace

TEST_CASE("python_float_repr matches Python's repr(float)") {
  CHECK(python_float_repr(0.1) == "0.1");
  CHECK(python_float_repr(1.0) == "1.0");
  CHECK(python_float_repr(-2.5) == "-2.5");
  CHECK(python_float_repr(0.0) == "0.0");
  CHECK(python_float_repr(5e-05) == "5e-05");
  CHECK(python_float_repr(0.0001) == "0.0001");
  CHECK(python_float_repr(0.00012345) == "0.00012345");
  CHECK(python_float_repr(1.5e-7) == "1.5e-07");
  CHECK(python_float_repr(123456789012345.0) == "123456789012345.0");
  CHECK(python_float_repr(1e16) == "1e+16");
  CHECK(python_float_repr(2.5e20) == "2.5e+20");
  CHECK(python_float_repr(0.6931471805599453) == "0.6931471805599453");
  CHECK(python_float_repr(100.0) == "100.0");
  CHECK(python_float_repr(std::nan("")) == "nan");
  CHECK(python_float_repr(std::numeric_limits<double>::infinity()) == "inf");
}

TEST_CASE("format_logs prints the dict like HF's ProgressCallback") {
  const char* keys[] = {"loss", "grad_norm", "learning_rate", "total_flos", "epoch"};
  const double values[] = {0.6931, 1.5, 5e-05, 123456789.0, 1.0 / 3.0};
  const char* skeys[] = {"note", "long"};
  const std::string long_value(150, 'x');
  const char* svalues[] = {"it's fine", long_value.c_str()};
  th_values v{TH_VALUES_STRUCT_SIZE, 5, keys, values, 2, skeys, svalues};

  CHECK(format_logs(copy_logs(&v), LogFormatOptions{}) ==
        "{'loss': 0.6931, 'grad_norm': 1.5, 'learning_rate': 5e-05, 'epoch': 0.33, 'note': 'it\\'s fine', "
        "'long': '[String too long to display, length: 150 > 100. Consider increasing `max_str_len` if "
        "needed.]'}");

  LogFormatOptions printer;
  printer.round_epoch = false;
  printer.max_str_len = 0;
  const std::string raw = format_logs(copy_logs(&v), printer);
  CHECK(raw.find("'epoch': 0.3333333333333333") != std::string::npos);
  CHECK(raw.find("'long': '" + long_value + "'") != std::string::npos);
  CHECK(raw.find("total_flos") == std::string::npos);

  CHECK(format_logs(copy_logs(nullptr), LogFormatOptions{}) == "{}");
}

TEST_CASE("durations and rates as tqdm writes them") {
  CHECK(format_duration(0) == "00:00");
  CHECK(format_duration(75.9) == "01:15");
  CHECK(format_duration(3600 + 62) == "1:01:02");
  CHECK(format_rate(3.6149) == " 3.61it/s");
  CHECK(format_rate(0.4) == " 2.50s/it");
  CHECK(format_rate(0) == "?it/s");
  CHECK(format_postfix(0.123456, 4.5e-05) == "loss=0.1235, lr=4.5e-05");
  CHECK(format_postfix(std::nullopt, 0.001) == "lr=0.001");
  CHECK(format_postfix(std::nullopt, std::nullopt).empty());
}

TEST_CASE("the TTY line: percentage, bar, counts, elapsed<remaining, rate, postfix, within the width") {
  BarSnapshot s;
  s.n = 45;
  s.total = 100;
  s.elapsed = 12;
  s.rate = 3.75;
  s.postfix = "loss=0.5, lr=5e-05";
  const std::string ascii = format_tty_line(s, 100, false);
  CHECK(ascii.size() == 99);
  CHECK(ascii.rfind(" 45%|", 0) == 0);
  CHECK(ascii.find("| 45/100 [00:12<00:14,  3.75it/s, loss=0.5, lr=5e-05]") != std::string::npos);
  const size_t bar_start = ascii.find('|') + 1, bar_end = ascii.find('|', bar_start);
  const std::string bar = ascii.substr(bar_start, bar_end - bar_start);
  CHECK(bar.find_first_not_of('#') == bar.size() * 45 / 100);

  for (int cols : {20, 40, 60, 80, 120, 200}) {
    CAPTURE(cols);
    const std::string u = format_tty_line(s, cols, true);
    CHECK(columns_of(u) <= static_cast<size_t>(cols - 1));
    CHECK(u.find('\r') == std::string::npos);
    CHECK(u.find('\n') == std::string::npos);
  }
  // Wide terminals get a full-width line with Unicode blocks.
  CHECK(columns_of(format_tty_line(s, 120, true)) == 119);
  CHECK(format_tty_line(s, 120, true).find("\u2588") != std::string::npos);

  // Complete: full bar, no time left.
  s.n = 100;
  const std::string done = format_tty_line(s, 80, false);
  CHECK(done.rfind("100%|", 0) == 0);
  CHECK(done.find(" ") > done.find("|#"));
  CHECK(done.find("<00:00") != std::string::npos);
}

TEST_CASE("unknown total and unknown rate") {
  BarSnapshot s;
  s.label = "eval";
  s.n = 7;
  s.total = -1;
  CHECK(format_plain_line(s) == "eval: 7it [00:00, ?it/s]");
  s.total = 10;
  CHECK(format_plain_line(s) == "eval:  70% 7/10 [00:00<?, ?it/s]");
  CHECK(format_tty_line(s, 80, false).rfind("eval:  70%|", 0) == 0);
}
