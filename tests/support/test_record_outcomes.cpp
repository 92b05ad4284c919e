#include <doctest/doctest.h>
#include <trainhook/support/record_outcomes.hpp>

#include <stdexcept>
#include <string>

using namespace trainhook::support;

TEST_CASE("record outcomes: rows start waiting and keep what they were set to") {
  RecordOutcomes t;
  const size_t a = t.add("checkpoint-1");
  const size_t b = t.add("checkpoint-2");
  CHECK(t.at(a).status == RecordStatus::waiting);
  t.set(a, RecordStatus::failed, "HTTP 403");
  t.set(b, RecordStatus::superseded, "replaced by checkpoint-3");
  CHECK(t.at(a).status == RecordStatus::failed);
  CHECK(t.at(a).detail == "HTTP 403");
  const auto all = t.all();
  REQUIRE(all.size() == 2);
  CHECK(all[1].name == "checkpoint-2");
  CHECK(std::string(to_string(all[1].status)) == "superseded");
  CHECK(std::string(to_string(RecordStatus::not_started)) == "not started");
}

TEST_CASE("record outcomes: a record sent again counts once by its last attempt in first-seen order") {
  RecordOutcomes t;
  t.set(t.add("checkpoint-1"), RecordStatus::failed, "timeout");
  t.set(t.add("checkpoint-2"), RecordStatus::failed, "timeout");
  t.set(t.add("deck"), RecordStatus::delivered);
  t.set(t.add("checkpoint-2"), RecordStatus::delivered);
  const auto latest = t.latest_per_name();
  REQUIRE(latest.size() == 3);
  CHECK(latest[0].name == "checkpoint-1");
  CHECK(latest[0].status == RecordStatus::failed);
  CHECK(latest[1].name == "checkpoint-2");
  CHECK(latest[1].status == RecordStatus::delivered);
  CHECK(latest[1].detail.empty());
  CHECK(latest[2].name == "deck");
}

TEST_CASE("record outcomes: an id never added is refused with what exists") {
  RecordOutcomes t;
  t.add("x");
  CHECK_THROWS_WITH_AS(t.set(3, RecordStatus::delivered), doctest::Contains("no record 3 (1 added)"),
                       std::out_of_range);
  CHECK_THROWS_AS(t.at(1), std::out_of_range);
}
