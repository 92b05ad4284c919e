// The display thread: plain lines on pipes (no control characters, on the
// percent schedule), in-place redraws on a terminal (a real pseudo-terminal
// with a known width), log lines above the bar, and evaluation bars.
// flush() makes the display thread draw, so nothing here depends on timing.
#include <trainhook/progress/display.hpp>

#include <fd_capture.hpp>
#include <thread_wakeups.hpp>
#include <wait_until.hpp>

#include <doctest/doctest.h>

#include <pty.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace trainhook::progress;

namespace {

// The i-th of a run of numbered log lines: a logs dict with one text value,
// and the line the display prints for it.
LogValues line_logs(int i) { return LogValues{{}, {{"line", std::to_string(i)}}}; }
std::string line_text(int i) { return "{'line': '" + std::to_string(i) + "'}"; }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

size_t columns_of(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

DisplayOptions to(int bar_fd, int log_fd) {
  DisplayOptions o;
  o.bar_fd = bar_fd;
  o.log_fd = log_fd;
  o.plain_interval = 1e9;  // only the percent schedule (no timing in tests)
  return o;
}

// The pseudo-terminal of a test: raw mode (no \n -> \r\n), `cols` wide, drained.
class Pty {
 public:
  explicit Pty(unsigned short cols) {
    struct winsize ws {};
    ws.ws_col = cols;
    ws.ws_row = 24;
    REQUIRE(::openpty(&master_, &slave_, nullptr, nullptr, &ws) == 0);
    struct termios t {};
    ::tcgetattr(slave_, &t);
    ::cfmakeraw(&t);
    ::tcsetattr(slave_, TCSANOW, &t);
    reader_ = std::thread([this] {
      char buf[4096];
      for (;;) {
        const ssize_t n = ::read(master_, buf, sizeof buf);
        if (n <= 0) break;  // EIO once the slave is closed
        text_.append(buf, static_cast<size_t>(n));
      }
    });
  }
  int slave() const noexcept { return slave_; }
  std::string finish() {
    ::close(slave_);
    reader_.join();
    ::close(master_);
    return text_;
  }

 private:
  int master_ = -1, slave_ = -1;
  std::thread reader_;
  std::string text_;
};

}  // namespace

TEST_CASE("not a TTY: plain progress lines every 10%, log lines, no control characters") {
  fd_capture::Pipe bar, log;
  {
    Display d(to(bar.write_fd(), log.write_fd()));
    CHECK_FALSE(d.tty());
    d.begin_training(0, 50);
    d.flush();
    for (int step = 1; step <= 50; ++step) {
      d.train_step(step);
      if (step == 25) d.print_logs(LogValues{{{"loss", 0.5}, {"epoch", 0.5}}, {}}, LogFormatOptions{});
      d.flush();
    }
    d.end_training(50);
  }
  const std::string bars = bar.finish(), logs = log.finish();
  CHECK(fd_capture::plain_text(bars));
  CHECK(fd_capture::plain_text(logs));
  CHECK(logs == "{'loss': 0.5, 'epoch': 0.5}\n");
  const auto lines = lines_of(bars);
  REQUIRE(lines.size() == 11);  // 0%, 10%, ..., 100%, each once
  for (size_t i = 0; i < lines.size(); ++i) {
    CAPTURE(lines[i]);
    const std::string counts = " " + std::to_string(i * 5) + "/50 [";
    CHECK(lines[i].find(counts) != std::string::npos);
  }
  CHECK(lines.back().rfind("100% 50/50 [", 0) == 0);
}

TEST_CASE("not a TTY: a time-based line when progress is slow, and the final line at the end") {
  fd_capture::Pipe bar, log;
  {
    DisplayOptions o = to(bar.write_fd(), log.write_fd());
    o.plain_interval = 1e-9;  // every draw with new progress is due
    o.plain_percent = 1000;   // never by percent
    Display d(o);
    d.begin_training(10, 1000);  // resumed at step 10
    d.flush();
    d.train_step(11);
    d.flush();
    d.flush();  // nothing new: no line
    d.train_step(12);
    d.set_postfix(0.25, 0.001);
    d.flush();
    d.end_training(13);
  }
  const auto lines = lines_of(bar.finish());
  log.finish();
  REQUIRE(lines.size() == 4);
  CHECK(lines[0].rfind("  1% 10/1000 [", 0) == 0);
  CHECK(lines[1].find(" 11/1000 [") != std::string::npos);
  CHECK(lines[2].find(" 12/1000 [") != std::string::npos);
  CHECK(lines[2].find("loss=0.25, lr=0.001]") != std::string::npos);
  CHECK(lines[3].find(" 13/1000 [") != std::string::npos);
}

TEST_CASE("not a TTY: an evaluation outside training ends with one line, during training it adds none") {
  fd_capture::Pipe bar, log;
  {
    Display d(to(bar.write_fd(), log.write_fd()));
    for (int b = 0; b < 8; ++b) d.prediction_step(b, 8, false);
    d.flush();
    d.end_prediction();
    d.flush();
    d.begin_training(0, 4);
    d.flush();
    for (int b = 0; b < 3; ++b) d.prediction_step(b, 3, false);
    d.flush();
    d.end_prediction();
    d.flush();
    d.end_training(4);
  }
  const auto lines = lines_of(bar.finish());
  log.finish();
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].rfind("eval: 100% 8/8 [", 0) == 0);
  CHECK(lines[1].rfind("  0% 0/4 [", 0) == 0);
  CHECK(lines[2].rfind("100% 4/4 [", 0) == 0);
}

TEST_CASE("a pseudo-terminal: the bar is rewritten in place, sized to the terminal, logs above it") {
  Pty pty(60);
  {
    DisplayOptions o = to(pty.slave(), pty.slave());
    Display d(o);
    CHECK(d.tty());
    d.begin_training(0, 20);
    for (int step = 1; step <= 20; ++step) {
      d.train_step(step);
      if (step == 10) {
        d.set_postfix(0.5, std::nullopt);
        d.print_logs(LogValues{{{"loss", 0.5}}, {}}, LogFormatOptions{});
      }
      d.flush();
    }
    for (int b = 0; b < 5; ++b) {
      d.prediction_step(b, 5, false);
      d.flush();
    }
    d.end_prediction();
    d.flush();
    d.end_training(20);
  }
  const std::string out = pty.finish();
  CHECK(out.find('\r') != std::string::npos);
  CHECK(out.find("\x1b[K") != std::string::npos);
  // The log line was printed on a cleared line, then the bar came back below it.
  const size_t log_at = out.find("\r\x1b[K{'loss': 0.5}\n");
  REQUIRE(log_at != std::string::npos);
  CHECK(out.find("loss=0.5]", log_at) != std::string::npos);
  // Every drawn bar fits in 59 columns; the evaluation bar showed; the final bar stays with a newline.
  size_t draws = 0;
  bool saw_eval = false;
  std::string last;
  for (size_t at = out.find('\r'); at != std::string::npos; at = out.find('\r', at + 1)) {
    size_t end = out.find_first_of("\r\x1b\n", at + 1);
    const std::string bar = out.substr(at + 1, end == std::string::npos ? std::string::npos : end - at - 1);
    if (bar.empty()) continue;
    CAPTURE(bar);
    CHECK(columns_of(bar) <= 59);
    if (bar.rfind("eval:", 0) == 0) saw_eval = true;
    if (bar.rfind("{", 0) != 0) {
      ++draws;
      last = bar;
    }
  }
  CHECK(draws >= 20);
  CHECK(saw_eval);
  CHECK(last.rfind("100%|", 0) == 0);
  CHECK(last.find("20/20") != std::string::npos);
  CHECK(out.substr(out.size() - 1) == "\n");
}

TEST_CASE("a display that is destroyed without end_training leaves the terminal on a new line") {
  Pty pty(80);
  {
    Display d(to(pty.slave(), pty.slave()));
    d.begin_training(0, 10);
    d.train_step(3);
    d.flush();
  }
  const std::string out = pty.finish();
  CHECK(out.find(" 3/10 [") != std::string::npos);
  CHECK(out.back() == '\n');
}

TEST_CASE("the printer's display: lines only, in order, even on a terminal") {
  Pty pty(80);
  {
    DisplayOptions o = to(pty.slave(), pty.slave());
    o.bars = false;
    Display d(o);
    d.begin_training(0, 10);  // ignored without bars
    d.train_step(5);
    d.prediction_step(0, 3, false);
    for (int i = 0; i < 100; ++i) d.print_logs(line_logs(i), LogFormatOptions{});
    d.flush();
  }
  const std::string out = pty.finish();
  std::string expected;
  for (int i = 0; i < 100; ++i) expected += line_text(i) + "\n";
  CHECK(out == expected);
}

TEST_CASE("log lines do not wake the display thread: they wait for its interval or a flush") {
  fd_capture::Pipe out;
  {
    DisplayOptions o = to(out.write_fd(), out.write_fd());
    o.bars = false;
    o.min_interval = 3600;  // the thread's timer never fires in this test
    Display d(o);
    d.print_logs(line_logs(0), LogFormatOptions{});  // starts the thread
    REQUIRE(testkit::wait_until([] { return testkit::thread_wakeups("th-printer") >= 0; }));
    const int64_t before = testkit::thread_wakeups("th-printer");
    for (int i = 1; i < 100; ++i) {
      d.print_logs(line_logs(i), LogFormatOptions{});
      // Paced like a training loop that logs every step, so that a line that
      // woke the thread would find it asleep each time.
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    // At most the one sleep the thread may not have begun before `before`.
    CHECK(testkit::thread_wakeups("th-printer") - before <= 2);
    d.flush();
  }
  std::string expected;
  for (int i = 0; i < 100; ++i) expected += line_text(i) + "\n";
  CHECK(out.finish() == expected);
}
