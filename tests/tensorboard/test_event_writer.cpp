#include <trainhook/tensorboard/event_builder.hpp>
#include <trainhook/tensorboard/event_writer.hpp>

#include "event_reader.hpp"
#include "file_size_limit.hpp"

#include <doctest/doctest.h>
#include <temp_dir.hpp>
#include <wait_until.hpp>

#include <filesystem>
#include <thread>

using namespace trainhook::tensorboard;
using trainhook::testkit::TempDir;

TEST_CASE("LogRecord keeps keys, values and texts in order") {
  LogRecord r(1.5, 3);
  r.add_scalar("loss", 0.25);
  r.add_scalar("eval_accuracy", 0.75);
  r.add_text("note", "hello");
  r.add_text("", "");
  CHECK(r.wall_time() == 1.5);
  CHECK(r.step() == 3);
  REQUIRE(r.scalar_count() == 2);
  CHECK(r.scalar_key(0) == "loss");
  CHECK(r.scalar_key(1) == "eval_accuracy");
  CHECK(r.scalar_value(1) == 0.75);
  REQUIRE(r.text_count() == 2);
  CHECK(r.text_key(0) == "note");
  CHECK(r.text(0) == "hello");
  CHECK(r.text_key(1).empty());
  CHECK(r.text(1).empty());
}

TEST_CASE("EventWriter writes the version record, every log in order, and final events") {
  const TempDir tmp("tb_writer_order");
  const auto& dir = tmp.path;
  const auto path = dir / "events.out.tfevents.1.h.1.0";
  WriterStats stats;
  std::vector<std::string> seen_tags;
  {
    EventWriter w(path, 100000, std::chrono::milliseconds(5), {});
    CHECK(std::filesystem::exists(path));
    for (int step = 1; step <= 2000; ++step) {
      LogRecord r(100.0 + step, step);
      r.add_scalar("loss", 1.0 / step);
      if (step % 100 == 0) r.add_scalar("eval_loss", 2.0 / step);
      if (step == 1000) r.add_text("note", "half way");
      CHECK(w.log(std::move(r)));
    }
    stats = w.finish([&](const std::vector<std::string>& tags) {
      seen_tags = tags;
      std::string e;
      encode_summary_event(e, 1.0, 2001, [](ProtoWriter& s) { write_scalar_value(s, "", "final", 1.0f); });
      return std::vector<std::string>{e};
    });
    CHECK(w.finish().events_written == stats.events_written);  // idempotent
  }
  CHECK(stats.error.empty());
  CHECK(stats.dropped_records == 0);
  CHECK(stats.scalars_written == 2020);
  CHECK(stats.events_written == 2001);
  CHECK(seen_tags == std::vector<std::string>{"eval/loss", "train/loss"});
  const auto events = tbtest::read_events(path.string());
  REQUIRE(events.size() == 2002);
  CHECK(events[0].file_version == "brain.Event:2");
  CHECK(stats.bytes == std::filesystem::file_size(path));
  for (int step = 1; step <= 2000; ++step) {
    const auto& e = events[static_cast<size_t>(step)];
    CHECK(e.step == step);
    CHECK(e.wall_time == 100.0 + step);
    REQUIRE(!e.values.empty());
    CHECK(e.values[0].tag == "train/loss");
    CHECK(*e.values[0].simple_value == static_cast<float>(1.0 / step));
  }
  CHECK(events[100].values[1].tag == "eval/loss");
  CHECK(events[1000].values.back().tag == "train/note");
  CHECK(events[1000].values.back().string_val == std::vector<std::string>{"half way"});
  CHECK(events.back().values[0].tag == "final");
}

TEST_CASE("EventWriter never blocks: a full queue drops records and counts them") {
  const TempDir tmp("tb_writer_drop");
  const auto& dir = tmp.path;
  const auto path = dir / "events.out.tfevents.2.h.1.0";
  EventWriter w(path, 1, std::chrono::milliseconds(5), {});
  uint64_t accepted = 0, refused = 0;
  for (int i = 0; i < 20000; ++i) {
    LogRecord r(1.0, i);
    r.add_scalar("a", 1);
    r.add_scalar("b", 2);
    (w.log(std::move(r)) ? accepted : refused) += 1;
  }
  const auto stats = w.finish();
  CHECK(refused > 0);  // a one-record queue drained every 5 ms cannot take 20000 back-to-back logs
  CHECK(stats.dropped_records == refused);
  CHECK(stats.dropped_scalars == 2 * refused);
  CHECK(stats.events_written == accepted);
  CHECK(tbtest::read_events(path.string()).size() == accepted + 1);
}

TEST_CASE("records reach the file within the flush interval, before finish") {
  const TempDir tmp("tb_writer_live");
  const auto& dir = tmp.path;
  const auto path = dir / "events.out.tfevents.3.h.1.0";
  EventWriter w(path, 1000, std::chrono::milliseconds(10), {});
  LogRecord r(1.0, 1);
  r.add_scalar("loss", 0.5);
  CHECK(w.log(std::move(r)));
  // What a live TensorBoard sees: poll the file (no time limit asserted).
  size_t n = 0;
  testkit::wait_until([&] { return (n = tbtest::read_events(path.string()).size()) >= 2; },
                      testkit::kDefaultDeadline, std::chrono::milliseconds(10));
  CHECK(n == 2);
  w.finish();
}

TEST_CASE("after a write error the writer warns once, counts what it lost, and the file stays readable") {
  const TempDir tmp("tb_writer_full");
  const auto& dir = tmp.path;
  const auto path = dir / "events.out.tfevents.4.h.1.0";
  std::vector<std::string> warnings;  // the warn callback runs on the writer thread, read after finish
  WriterStats stats;
  {
    tbtest::FileSizeLimit limit(4096);
    EventWriter w(path, 100000, std::chrono::milliseconds(5),
                  [&](trainhook::LogLevel, const std::string& m) { warnings.push_back(m); });
    for (int step = 1; step <= 2000; ++step) {
      LogRecord r(1.0, step);
      r.add_scalar("loss", step);
      w.log(std::move(r));
    }
    stats = w.finish();
  }
  CHECK(stats.error.find(path.string()) != std::string::npos);
  CHECK(stats.lost_records > 0);
  CHECK(stats.events_written + stats.lost_records == 2000);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find(path.string()) != std::string::npos);
  const auto events = tbtest::read_events(path.string());  // throws on a torn record
  CHECK(events.size() == stats.events_written + 1);
  CHECK(std::filesystem::file_size(path) <= 4096);
}

TEST_CASE("EventWriter names the file when it cannot create it") {
  CHECK_THROWS_WITH_AS(
      EventWriter("/nonexistent-folder/events.out.tfevents.x", 10, std::chrono::milliseconds(5), {}),
      doctest::Contains("/nonexistent-folder/events.out.tfevents.x"), std::runtime_error);
}

TEST_CASE("tags follow HF rewrite_logs (support::split_log_key), texts included") {
  const TempDir tmp("tb_writer_tags");
  const auto& dir = tmp.path;
  const auto path = dir / "events.out.tfevents.5.h.1.0";
  EventWriter w(path, 100, std::chrono::milliseconds(5), {});
  LogRecord r(1.0, 1);
  for (const char* key : {"eval_loss", "test_f1", "loss", "eval", "evaluation", "eval_", "EVAL_x"})
    r.add_scalar(key, 1.0);
  r.add_text("test_note", "t");
  CHECK(w.log(std::move(r)));
  CHECK(w.finish().error.empty());
  const auto events = tbtest::read_events(path.string());
  REQUIRE(events.size() == 2);
  std::vector<std::string> tags;
  for (const auto& v : events[1].values) tags.push_back(v.tag);
  CHECK(tags == std::vector<std::string>{"eval/loss", "test/f1", "train/loss", "train/eval",
                                         "train/evaluation", "eval/", "train/EVAL_x", "test/note"});
}

TEST_CASE("finish writes everything queued even when the worker's timer has not come by") {
  const TempDir tmp("tb_writer_finish");
  const auto& dir = tmp.path;
  const auto path = dir / "events.out.tfevents.6.h.1.0";
  // An hour-long interval and fewer records than wake the thread: only finish() can
  // get these records to the file.
  EventWriter w(path, 100000, std::chrono::hours(1), {});
  for (int step = 1; step <= 50; ++step) {
    LogRecord r(1.0, step);
    r.add_scalar("loss", step);
    CHECK(w.log(std::move(r)));
  }
  const auto stats = w.finish();
  CHECK(stats.events_written == 50);
  CHECK(stats.scalars_written == 50);
  CHECK(stats.dropped_records == 0);
  const auto events = tbtest::read_events(path.string());
  REQUIRE(events.size() == 51);
  for (int step = 1; step <= 50; ++step) CHECK(events[static_cast<size_t>(step)].step == step);
  CHECK_FALSE(w.log(LogRecord(2.0, 51)));  // refused after finish
}
