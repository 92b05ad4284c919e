#include <http_logger/file_stream.hpp>

#include <http_logger/history_line.hpp>

#include <nlohmann/json.hpp>

namespace trainhook::wandb {

std::string StreamTarget::url() const {
  return base_url + "/files/" + support::url_encode(entity) + "/" + support::url_encode(project) + "/" +
         support::url_encode(run_id) + "/file_stream";
}

std::string file_stream_body(int64_t history_offset, const std::deque<std::string>& lines, size_t count,
                             const std::string* summary, int64_t summary_offset,
                             std::optional<int> exitcode) {
  std::string body = "{\"files\":{";
  bool first_file = true;
  if (count > 0) {
    body += "\"";
    body += kHistoryFile;
    body += "\":{\"offset\":" + std::to_string(history_offset) + ",\"content\":[";
    for (size_t i = 0; i < count; ++i) {
      if (i > 0) body += ',';
      body += json_string(lines[i]);
    }
    body += "]}";
    first_file = false;
  }
  if (summary != nullptr) {
    if (!first_file) body += ',';
    body += "\"";
    body += kSummaryFile;
    body +=
        "\":{\"offset\":" + std::to_string(summary_offset) + ",\"content\":[" + json_string(*summary) + "]}";
  }
  body += '}';
  if (exitcode) body += ",\"complete\":true,\"exitcode\":" + std::to_string(*exitcode);
  body += '}';
  return body;
}

support::RetryClassification wandb_retry_classification() {
  support::RetryClassification c;
  c.never_retry = {400, 401, 403, 404, 409, 410, 413, 422, 501};
  return c;
}

support::RetryDecision classify(const support::HttpResponse& response) {
  static const support::RetryClassification c = wandb_retry_classification();
  // A transfer we aborted ourselves (shutting down) proves nothing: not final.
  if (response.aborted) return support::RetryDecision::retry;
  support::RetryDecision d = c.decide(response);
  // W&B's filestream retries any answer it does not know to be final.
  if (d == support::RetryDecision::fail && response.status != 0 && c.never_retry.count(response.status) == 0)
    d = support::RetryDecision::retry;
  return d;
}

bool reply_says_stopped(const std::string& body) {
  const auto j = nlohmann::json::parse(body, nullptr, false);
  return !j.is_discarded() && j.is_object() && j.contains("stopped") && j["stopped"].is_boolean() &&
         j["stopped"].get<bool>();
}

FileStreamer::FileStreamer(StreamTarget target, int64_t history_offset, StreamOptions options)
    : target_(std::move(target)), options_(options), backoff_(options.policy), offset_(history_offset) {}

SendResult FileStreamer::send_once(support::HttpClient& http) {
  SendResult result;
  if (!has_work()) return result;
  // As many lines as fit in the size bound, at least one.
  size_t count = 0, bytes = 0;
  while (count < pending_.size()) {
    const size_t next = pending_[count].size() + 8;
    if (count > 0 && bytes + next > options_.max_request_bytes) break;
    bytes += next;
    ++count;
  }
  const bool all_lines = count == pending_.size();
  std::optional<int> exitcode;
  if (complete_ && !complete_acked_ && all_lines) exitcode = complete_;
  const std::string* summary = summary_dirty_ && summary_ ? &*summary_ : nullptr;
  std::string body = file_stream_body(offset_, pending_, count, summary, 0, exitcode);

  const support::HttpResponse response =
      http.perform(support::HttpRequest::post_json(target_.url(), std::move(body)));
  const support::RetryDecision decision = classify(response);
  if (decision == support::RetryDecision::success) {
    backoff_.reset();
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(count));
    offset_ += static_cast<int64_t>(count);
    if (summary != nullptr) summary_dirty_ = false;
    if (exitcode) complete_acked_ = true;
    result.status = SendStatus::delivered;
    result.lines = count;
    result.stopped = reply_says_stopped(response.body);
    return result;
  }
  result.message = response.describe();
  if (decision == support::RetryDecision::retry) {
    result.status = SendStatus::retry;
    result.retry_in = backoff_.next_delay(&response);
  } else {
    result.status = SendStatus::fatal;
  }
  return result;
}

}  // namespace trainhook::wandb
