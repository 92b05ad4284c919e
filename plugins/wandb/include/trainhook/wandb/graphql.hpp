// The two GraphQL calls of a run's start, as request-body builders and
// response parsers (pure; no I/O):
//  - RunResumeStatus: does the run exist, how many history lines does it
//    have, what is its summary (for WANDB_RESUME);
//  - UpsertBucket: create or update the run (config, name, host, tags, ...),
//    answering the run's name, project, entity and historyLineCount.
// Both go to POST <base>/graphql as {"query": ..., "variables": {...}}.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace trainhook::wandb {

// What the run is: the UpsertBucket variables.
struct RunSpec {
  std::string run_id;  // W&B's "name" of the bucket (the id in URLs)
  std::string project;
  std::string entity;              // empty: the server's default
  std::string display_name;        // the training run_name
  std::string config_json = "{}";  // {"key": {"value": v}, ...}
  std::string host;
  std::string program = "trainhook";
  std::string job_type;
  std::string group;
  std::vector<std::string> tags;
};

// The server refused a GraphQL call ({"errors": [...]}) or answered something
// we cannot read; the message is the server's.
class GraphqlError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The training arguments (JSON object text) as W&B config: every key wrapped
// as {"value": v}; keys that look like credentials (support::looks_secret) are
// dropped and returned in `dropped`. Throws std::invalid_argument when args
// is not a JSON object.
std::string config_from_training_args(const std::string& args_json,
                                      std::vector<std::string>* dropped = nullptr);

std::string upsert_bucket_body(const RunSpec& spec);
std::string resume_status_body(const RunSpec& spec);

struct UpsertResult {
  std::string run_id;
  std::string project;
  std::string entity;
  int64_t history_line_count = 0;
};
UpsertResult parse_upsert_response(const std::string& body);

struct ResumeStatus {
  bool exists = false;
  int64_t history_line_count = 0;
  int64_t next_step = 0;            // last _step + 1 (from historyTail / summary), else historyLineCount
  double runtime = 0;               // the run's _runtime so far
  std::string summary_json = "{}";  // summaryMetrics
};
ResumeStatus parse_resume_status(const std::string& body);

}  // namespace trainhook::wandb
