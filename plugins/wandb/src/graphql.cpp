#include <trainhook/wandb/graphql.hpp>

#include <trainhook/support/secrets.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>

namespace trainhook::wandb {

using nlohmann::json;

namespace {

constexpr const char* kUpsertBucket =
    R"(mutation UpsertBucket($id: String, $name: String, $project: String, $entity: String, $groupName: String, $displayName: String, $config: JSONString, $host: String, $program: String, $jobType: String, $state: String, $tags: [String!]) {
  upsertBucket(input: {id: $id, name: $name, modelName: $project, entityName: $entity, groupName: $groupName, displayName: $displayName, config: $config, host: $host, program: $program, jobType: $jobType, state: $state, tags: $tags}) {
    bucket { id name displayName historyLineCount project { id name entity { id name } } }
    inserted
  }
})";

constexpr const char* kResumeStatus =
    R"(query RunResumeStatus($project: String, $entity: String, $name: String!) {
  model(name: $project, entityName: $entity) {
    id name entity { id name }
    bucket(name: $name, missingOk: true) { id name summaryMetrics historyLineCount historyTail }
  }
})";

json parse_body(const std::string& body, const char* what) {
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw GraphqlError(std::string(what) +
                       ": the server's answer is not a JSON object: " + body.substr(0, 200));
  if (auto e = j.find("errors"); e != j.end() && e->is_array() && !e->empty()) {
    std::string msg;
    for (const auto& err : *e) {
      if (!msg.empty()) msg += "; ";
      msg += err.contains("message") && err["message"].is_string() ? err["message"].get<std::string>()
                                                                   : err.dump();
    }
    throw GraphqlError(std::string(what) + " failed: " + msg);
  }
  return j;
}

std::string opt_string(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t count_of(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return 0;
  // A count beyond int64 (or NaN, or a double past 2^63) is refused rather than
  // converted: the conversion would be undefined behaviour.
  constexpr double kLimit = 9.2e18;
  if (it->is_number_unsigned()) {
    if (it->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      throw GraphqlError(std::string(key) + " in the server's answer is out of range: " + it->dump());
    return static_cast<int64_t>(it->get<uint64_t>());
  }
  if (it->is_number_integer()) return std::max<int64_t>(0, it->get<int64_t>());
  if (it->is_number()) {
    const double d = it->get<double>();
    if (!(d < kLimit))  // NaN and +inf fail this too
      throw GraphqlError(std::string(key) + " in the server's answer is out of range: " + it->dump());
    return d > 0 ? static_cast<int64_t>(d) : 0;
  }
  throw GraphqlError(std::string(key) + " in the server's answer is not a number: " + it->dump());
}

// W&B sends JSONString fields as strings holding JSON; accept objects too.
json json_string_field(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return json();
  if (it->is_string()) {
    json inner = json::parse(it->get<std::string>(), nullptr, false);
    return inner.is_discarded() ? json() : inner;
  }
  return *it;
}

json nullable(const std::string& s) { return s.empty() ? json() : json(s); }

}  // namespace

std::string config_from_training_args(const std::string& args_json, std::vector<std::string>* dropped) {
  json args = json::parse(args_json, nullptr, false);
  if (args.is_discarded() || !args.is_object())
    throw std::invalid_argument("the training arguments are not a JSON object: " + args_json.substr(0, 200));
  json config = json::object();
  for (auto it = args.begin(); it != args.end(); ++it) {
    if (support::looks_secret(it.key())) {
      if (dropped != nullptr) dropped->push_back(it.key());
      continue;
    }
    config[it.key()] = json{{"value", *it}};
  }
  return config.dump();
}

std::string upsert_bucket_body(const RunSpec& spec) {
  json vars = {{"name", spec.run_id},
               {"project", spec.project},
               {"entity", nullable(spec.entity)},
               {"displayName", nullable(spec.display_name)},
               {"config", spec.config_json},
               {"host", nullable(spec.host)},
               {"program", nullable(spec.program)},
               {"jobType", nullable(spec.job_type)},
               {"groupName", nullable(spec.group)},
               {"state", "running"},
               {"tags", spec.tags}};
  return json{{"query", kUpsertBucket}, {"variables", vars}}.dump();
}

std::string resume_status_body(const RunSpec& spec) {
  json vars = {{"name", spec.run_id}, {"project", spec.project}, {"entity", nullable(spec.entity)}};
  return json{{"query", kResumeStatus}, {"variables", vars}}.dump();
}

UpsertResult parse_upsert_response(const std::string& body) {
  json j = parse_body(body, "UpsertBucket");
  const json* bucket = nullptr;
  if (j.contains("data") && j["data"].is_object() && j["data"].contains("upsertBucket") &&
      j["data"]["upsertBucket"].is_object() && j["data"]["upsertBucket"].contains("bucket") &&
      j["data"]["upsertBucket"]["bucket"].is_object())
    bucket = &j["data"]["upsertBucket"]["bucket"];
  if (bucket == nullptr)
    throw GraphqlError("UpsertBucket: the answer has no data.upsertBucket.bucket: " + body.substr(0, 200));
  UpsertResult r;
  r.run_id = opt_string(*bucket, "name");
  r.history_line_count = count_of(*bucket, "historyLineCount");
  if (auto p = bucket->find("project"); p != bucket->end() && p->is_object()) {
    r.project = opt_string(*p, "name");
    if (auto e = p->find("entity"); e != p->end() && e->is_object()) r.entity = opt_string(*e, "name");
  }
  return r;
}

ResumeStatus parse_resume_status(const std::string& body) {
  json j = parse_body(body, "RunResumeStatus");
  ResumeStatus r;
  if (!j.contains("data") || !j["data"].is_object())
    throw GraphqlError("RunResumeStatus: the answer has no data");
  const json& model = j["data"].value("model", json());
  if (!model.is_object()) return r;  // no such project: the run does not exist
  const json& bucket = model.value("bucket", json());
  if (!bucket.is_object()) return r;
  r.exists = true;
  r.history_line_count = count_of(bucket, "historyLineCount");
  r.next_step = r.history_line_count;
  json summary = json_string_field(bucket, "summaryMetrics");
  if (summary.is_object()) {
    r.summary_json = summary.dump();
    if (auto s = summary.find("_step"); s != summary.end() && s->is_number())
      r.next_step = std::max(r.next_step, static_cast<int64_t>(s->get<double>()) + 1);
    if (auto t = summary.find("_runtime"); t != summary.end() && t->is_number()) r.runtime = t->get<double>();
  }
  json tail = json_string_field(bucket, "historyTail");
  if (tail.is_array()) {
    for (const auto& item : tail) {
      json line = item.is_string() ? json::parse(item.get<std::string>(), nullptr, false) : item;
      if (line.is_object() && line.contains("_step") && line["_step"].is_number())
        r.next_step = std::max(r.next_step, static_cast<int64_t>(line["_step"].get<double>()) + 1);
      if (line.is_object() && line.contains("_runtime") && line["_runtime"].is_number())
        r.runtime = std::max(r.runtime, line["_runtime"].get<double>());
    }
  }
  return r;
}

}  // namespace trainhook::wandb
