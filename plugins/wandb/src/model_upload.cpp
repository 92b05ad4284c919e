#include <trainhook/wandb/model_upload.hpp>

#include <algorithm>
#include <system_error>

namespace trainhook::wandb {

namespace fs = std::filesystem;

std::string artifact_file_url(const StreamTarget& target, const std::string& name,
                              const std::string& relative_path) {
  return target.base_url + "/files/" + support::url_encode(target.entity) + "/" +
         support::url_encode(target.project) + "/" + support::url_encode(target.run_id) + "/artifacts/" +
         support::url_encode(name) + "/" + support::url_encode(relative_path, true);
}

ModelUploader::ModelUploader(support::RetryPolicy policy) : backoff_(policy) {}

UploadResult ModelUploader::upload_once(support::HttpClient& http, const StreamTarget& target) {
  UploadResult result;
  if (queue_.empty()) return result;
  Pending& p = queue_.front();
  if (!p.listed) {
    std::error_code ec;
    if (!fs::is_directory(p.upload.dir, ec)) {
      result.status = UploadStatus::skipped;
      result.message = "folder " + p.upload.dir.string() +
                       " no longer exists (removed by save_total_limit?); artifact '" + p.upload.name +
                       "' not uploaded";
      result.finished = p.upload.name;
      queue_.pop_front();
      return result;
    }
    for (auto it = fs::recursive_directory_iterator(p.upload.dir, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      std::error_code fec;
      if (it->is_regular_file(fec))
        p.files.push_back(fs::relative(it->path(), p.upload.dir).generic_string());
    }
    std::sort(p.files.begin(), p.files.end());
    p.listed = true;
  }
  if (p.next >= p.files.size()) {  // an empty folder: nothing to send
    result.status = UploadStatus::uploaded;
    result.finished = p.upload.name;
    queue_.pop_front();
    return result;
  }
  const std::string& rel = p.files[p.next];
  const fs::path file = p.upload.dir / rel;
  std::error_code ec;
  const uint64_t size = fs::file_size(file, ec);
  support::HttpResponse response;
  if (!ec) {
    try {
      response =
          http.perform(support::HttpRequest::put_file(artifact_file_url(target, p.upload.name, rel), file));
    } catch (const std::exception&) {
      ec = std::make_error_code(std::errc::no_such_file_or_directory);  // removed between the two checks
    }
  }
  if (ec) {
    result.status = UploadStatus::skipped;
    result.message =
        "file " + file.string() + " vanished before it was uploaded (artifact '" + p.upload.name + "')";
  } else {
    const support::RetryDecision decision = classify(response);
    if (decision == support::RetryDecision::retry) {
      result.status = UploadStatus::retry;
      result.retry_in = backoff_.next_delay(&response);
      result.message = "uploading " + file.string() + ": " + response.describe();
      return result;
    }
    backoff_.reset();
    if (decision == support::RetryDecision::fail) {
      result.status = UploadStatus::fatal;
      result.message = "uploading " + file.string() + ": " + response.describe() + "; artifact '" +
                       p.upload.name + "' given up (" + std::to_string(p.files.size() - p.next) +
                       " file(s) not uploaded)";
      result.finished = p.upload.name;
      queue_.pop_front();
      return result;
    }
    result.status = UploadStatus::uploaded;
    result.bytes = size;
    p.bytes += size;
    ++files_uploaded_;
  }
  if (++p.next >= p.files.size()) {
    result.finished = p.upload.name;
    queue_.pop_front();
  }
  return result;
}

std::vector<std::string> ModelUploader::pending_description() const {
  std::vector<std::string> out;
  for (const auto& p : queue_) {
    std::string left = p.listed
                           ? std::to_string(p.files.size() - p.next) + " of " + std::to_string(p.files.size())
                           : std::string("all");
    out.push_back("'" + p.upload.name + "' (" + p.upload.dir.string() + ", " + left + " file(s) left)");
  }
  return out;
}

}  // namespace trainhook::wandb
