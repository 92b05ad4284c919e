#include <http_logger/file_stream.hpp>

#include <http_logger/history_line.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iterator>
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

SendResult FileStreamer::send_once(support::HttpClient& http) {
  SendResult result;
  if (!has_work()) return result;
  // The oldest lines first: the spill (then only spilled lines in this
  // request), else memory. As many as fit in the size bound, at least one.
  const size_t line_cap = options_.memory_lines > 0 ? options_.memory_lines : pending_.size();
  support::SpoolChunk chunk;
  const bool from_spill = spilled() > 0;
  if (from_spill) chunk = spill_->peek(line_cap);
  const size_t available = from_spill ? chunk.lines.size() : std::min(line_cap, pending_.size());
  auto line_at = [&](size_t i) -> const std::string& { return from_spill ? chunk.lines[i] : pending_[i]; };
  size_t count = 0, bytes = 0;
  while (count < available) {
    const size_t next = line_at(count).size() + 8;
    if (count > 0 && bytes + next > options_.max_request_bytes) break;
    bytes += next;
    ++count;
  }
  if (from_spill && count < chunk.lines.size()) {
    // Acknowledge exactly what is sent: re-read the shorter chunk's end offset.
    chunk = spill_->peek(count);
  }
  const bool all_lines = !from_spill && count == pending_.size();
  std::optional<int> exitcode;
  if (complete_ && !complete_acked_ && all_lines) exitcode = complete_;
  const std::string* summary = summary_dirty_ && summary_ ? &*summary_ : nullptr;
  std::string body;
  if (from_spill) {
    std::deque<std::string> lines(std::make_move_iterator(chunk.lines.begin()),
                                  std::make_move_iterator(chunk.lines.end()));
    body = file_stream_body(offset_, lines, count, summary, 0, exitcode);
    chunk.lines.assign(count, std::string());  // acknowledge() counts lines only
  } else {
    body = file_stream_body(offset_, pending_, count, summary, 0, exitcode);
  }

  const support::HttpResponse response =
      http.perform(support::HttpRequest::post_json(target_.url(), std::move(body)));
  const support::RetryDecision decision = classify(response);
  if (decision == support::RetryDecision::success) {
    backoff_.reset();
    if (from_spill)
      spill_->acknowledge(chunk);
    else
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
