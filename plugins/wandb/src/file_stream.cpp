#include <trainhook/wandb/file_stream.hpp>

#include <trainhook/wandb/history_line.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <system_error>

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
    : target_(std::move(target)),
      options_(std::move(options)),
      backoff_(options_.policy),
      offset_(history_offset) {
  if (options_.memory_lines > 0) {
    if (options_.spill_file.empty())
      throw std::invalid_argument("FileStreamer: memory_lines needs a spill_file");
    remove_spill_files();
  }
}

FileStreamer::~FileStreamer() {
  runner_.reset();
  spill_.reset();
  if (options_.memory_lines > 0) remove_spill_files();
}

void FileStreamer::remove_spill_files() const {
  std::error_code ec;
  std::filesystem::remove(options_.spill_file, ec);
  std::filesystem::remove(options_.spill_file.string() + ".ack", ec);
}

void FileStreamer::add_line(std::string line) {
  pending_.push_back(std::move(line));
  if (options_.memory_lines == 0 || pending_.size() <= options_.memory_lines) return;
  // Over the bound: the oldest lines (all but half the bound) go to disk, in
  // one append; the spill is older than everything left in memory.
  const size_t n = pending_.size() - options_.memory_lines / 2;
  std::vector<std::string> lines;
  lines.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    lines.push_back(std::move(pending_.front()));
    pending_.pop_front();
  }
  if (!spill_) spill_ = std::make_unique<support::Spool>(options_.spill_file);
  spill_->append(lines);
}

void FileStreamer::take_pending(const std::function<void(const std::vector<std::string>&)>& sink) {
  if (!inflight_.empty()) sink(std::vector<std::string>(inflight_.begin(), inflight_.end()));
  offset_ += static_cast<int64_t>(inflight_.size());
  inflight_.clear();
  while (spilled() > 0) {
    support::SpoolChunk chunk = spill_->peek(std::max<size_t>(1, options_.memory_lines));
    if (chunk.lines.empty()) break;
    sink(chunk.lines);
    offset_ += static_cast<int64_t>(chunk.lines.size());
    spill_->acknowledge(chunk);
  }
  if (!pending_.empty()) sink(std::vector<std::string>(pending_.begin(), pending_.end()));
  offset_ += static_cast<int64_t>(pending_.size());
  pending_.clear();
}

void FileStreamer::fill_request() {
  // Oldest first: what a failed request carried, the spill, then memory. As
  // many as fit in the size bound (and the memory bound), at least one.
  const size_t cap = options_.memory_lines > 0 ? options_.memory_lines : std::numeric_limits<size_t>::max();
  size_t bytes = 0;
  for (const auto& l : inflight_) bytes += l.size() + 8;
  auto fits = [&](const std::string& l) {
    return inflight_.size() < cap &&
           (inflight_.empty() || bytes + l.size() + 8 <= options_.max_request_bytes);
  };
  if (spilled() > 0 && inflight_.size() < cap) {
    support::SpoolChunk chunk = spill_->peek(cap - inflight_.size());
    size_t take = 0;
    while (take < chunk.lines.size() && fits(chunk.lines[take])) {
      bytes += chunk.lines[take].size() + 8;
      inflight_.push_back(std::move(chunk.lines[take]));
      ++take;
    }
    if (take == 0) return;
    // The lines now live in inflight_ (the spill is this process's buffer,
    // not a durable record): cut exactly those off the spill.
    support::SpoolChunk taken = take == chunk.lines.size() ? std::move(chunk) : spill_->peek(take);
    spill_->acknowledge(taken);
    if (spilled() > 0) return;  // older lines than memory's are still on disk
  }
  while (!pending_.empty() && fits(pending_.front())) {
    bytes += pending_.front().size() + 8;
    inflight_.push_back(std::move(pending_.front()));
    pending_.pop_front();
  }
}

SendResult FileStreamer::send_once(support::HttpClient& http, const std::function<void()>& while_waiting) {
  SendResult result;
  if (!has_work()) return result;
  fill_request();
  const size_t count = inflight_.size();
  const bool all_lines = spilled() == 0 && pending_.empty();
  std::optional<int> exitcode;
  if (complete_ && !complete_acked_ && all_lines) exitcode = complete_;
  const std::string* summary = summary_dirty_ && summary_ ? &*summary_ : nullptr;
  const uint64_t summary_version = summary_version_;
  std::string body = file_stream_body(offset_, inflight_, count, summary, 0, exitcode);

  support::HttpRequest request = support::HttpRequest::post_json(target_.url(), std::move(body));
  support::HttpResponse response;
  if (while_waiting) {
    // The request runs on the streamer's request thread while the caller
    // keeps taking in new lines (add_line/set_summary only touch what this
    // request does not carry), so nothing piles up upstream during a slow
    // request. One long-lived thread, not one per request: each new thread
    // may get a malloc arena of its own, which would grow the RSS with the run.
    if (!runner_) runner_ = std::make_unique<support::RequestThread>();
    response = runner_->perform(http, request, while_waiting);
  } else {
    response = http.perform(request);
  }
  const support::RetryDecision decision = classify(response);
  if (decision == support::RetryDecision::success) {
    backoff_.reset();
    inflight_.clear();
    offset_ += static_cast<int64_t>(count);
    if (summary != nullptr && summary_version_ == summary_version) summary_dirty_ = false;
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
