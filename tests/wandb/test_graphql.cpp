// GraphQL bodies and answers: UpsertBucket, RunResumeStatus, config from args.
#include <trainhook/wandb/graphql.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using namespace trainhook::wandb;
using nlohmann::json;

TEST_CASE("config is the training arguments as {k: {value: v}} without secrets") {
  std::vector<std::string> dropped;
  json c = json::parse(config_from_training_args(
      R"({"learning_rate":0.1,"report_to":["wandb"],"hub_token":"x","push_to_hub_token":null})", &dropped));
  CHECK(c == json::parse(R"({"learning_rate":{"value":0.1},"report_to":{"value":["wandb"]}})"));
  CHECK(dropped.size() == 2);
  CHECK_THROWS_AS(config_from_training_args("[1]"), std::invalid_argument);
}

TEST_CASE("UpsertBucket request and answer") {
  RunSpec spec;
  spec.run_id = "abc123";
  spec.project = "p";
  spec.display_name = "run";
  spec.config_json = R"({"lr":{"value":1}})";
  spec.tags = {"t1"};
  json body = json::parse(upsert_bucket_body(spec));
  CHECK(body["query"].get<std::string>().find("mutation UpsertBucket") == 0);
  CHECK(body["variables"]["name"] == "abc123");
  CHECK(body["variables"]["project"] == "p");
  CHECK(body["variables"]["entity"].is_null());
  CHECK(body["variables"]["config"] == R"({"lr":{"value":1}})");  // a JSONString, as W&B sends it
  CHECK(body["variables"]["tags"] == json::array({"t1"}));

  UpsertResult r = parse_upsert_response(
      R"({"data":{"upsertBucket":{"bucket":{"name":"abc123","historyLineCount":7,"project":{"name":"p","entity":{"name":"me"}}}}}})");
  CHECK(r.run_id == "abc123");
  CHECK(r.entity == "me");
  CHECK(r.history_line_count == 7);
  CHECK_THROWS_WITH_AS(parse_upsert_response(R"({"errors":[{"message":"permission denied"}]})"),
                       doctest::Contains("permission denied"), GraphqlError);
  CHECK_THROWS_AS(parse_upsert_response("<html>"), GraphqlError);
}

TEST_CASE("RunResumeStatus: missing run, counts, next _step and runtime") {
  CHECK_FALSE(parse_resume_status(R"({"data":{"model":{"bucket":null}}})").exists);
  CHECK_FALSE(parse_resume_status(R"({"data":{"model":null}})").exists);
  ResumeStatus s = parse_resume_status(
      R"({"data":{"model":{"bucket":{"historyLineCount":5,"summaryMetrics":"{\"_step\":4,\"_runtime\":9.5,\"loss\":1}","historyTail":"[\"{\\\"_step\\\":6,\\\"_runtime\\\":10}\"]"}}}})");
  CHECK(s.exists);
  CHECK(s.history_line_count == 5);
  CHECK(s.next_step == 7);
  CHECK(s.runtime == 10);
  CHECK(json::parse(s.summary_json)["loss"] == 1);
  RunSpec spec;
  spec.run_id = "r";
  spec.project = "p";
  CHECK(json::parse(resume_status_body(spec))["query"].get<std::string>().find("RunResumeStatus") !=
        std::string::npos);
}
