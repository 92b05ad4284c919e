#include <trainhook/support/http_client.hpp>

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <mutex>
#include <stdexcept>

namespace trainhook::support {

namespace {

void global_init_once() {
  // curl_global_init is not thread-safe in libcurl 7.88; do it once per process.
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t write_body(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

size_t write_header(char* data, size_t size, size_t n, void* user) {
  auto* headers = static_cast<std::map<std::string, std::string>*>(user);
  std::string line(data, size * n);
  // A new status line (redirect, 100 Continue) starts a new header block.
  if (line.rfind("HTTP/", 0) == 0) {
    headers->clear();
    return size * n;
  }
  auto colon = line.find(':');
  if (colon == std::string::npos) return size * n;
  std::string name = line.substr(0, colon);
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string value = line.substr(colon + 1);
  auto b = value.find_first_not_of(" \t");
  auto e = value.find_last_not_of(" \t\r\n");
  (*headers)[name] = b == std::string::npos ? std::string() : value.substr(b, e - b + 1);
  return size * n;
}

// The request body read from disk: a whole file or a byte range of it.
struct FileBody {
  std::FILE* file = nullptr;
  uint64_t remaining = 0;
};

size_t read_file(char* buffer, size_t size, size_t n, void* user) {
  auto* body = static_cast<FileBody*>(user);
  size_t want = size * n;
  if (want > body->remaining) want = static_cast<size_t>(body->remaining);
  size_t got = std::fread(buffer, 1, want, body->file);
  body->remaining -= got;
  return got;
}

// Where the response body goes: HttpResponse::body, or response_file when the
// answer is a 2xx (decided at the first chunk, when the status is known).
struct BodySink {
  CURL* curl = nullptr;
  std::string* body = nullptr;
  const std::filesystem::path* file_path = nullptr;  // null = always body
  std::FILE* file = nullptr;
  bool decided = false;
  bool file_failed = false;
};

size_t write_sink(char* data, size_t size, size_t n, void* user) {
  auto* sink = static_cast<BodySink*>(user);
  if (!sink->decided) {
    sink->decided = true;
    long status = 0;
    curl_easy_getinfo(sink->curl, CURLINFO_RESPONSE_CODE, &status);
    if (sink->file_path != nullptr && status >= 200 && status < 300) {
      sink->file = std::fopen(sink->file_path->c_str(), "wb");
      if (sink->file == nullptr) {
        sink->file_failed = true;
        return 0;  // stops the transfer with CURLE_WRITE_ERROR
      }
    }
  }
  if (sink->file != nullptr) return std::fwrite(data, size, n, sink->file) * size;
  return write_body(data, size, n, sink->body);
}

int progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* flag = static_cast<const std::atomic<bool>*>(user);
  return flag != nullptr && flag->load() ? 1 : 0;
}

struct FileCloser {
  void operator()(std::FILE* f) const noexcept {
    if (f != nullptr) std::fclose(f);
  }
};

struct SlistFree {
  void operator()(curl_slist* l) const noexcept { curl_slist_free_all(l); }
};

}  // namespace

HttpRequest HttpRequest::get(std::string url) {
  HttpRequest r;
  r.url = std::move(url);
  return r;
}

HttpRequest HttpRequest::post_json(std::string url, std::string json) {
  HttpRequest r;
  r.method = "POST";
  r.url = std::move(url);
  r.body = std::move(json);
  r.headers.emplace_back("Content-Type", "application/json");
  return r;
}

HttpRequest HttpRequest::put_file(std::string url, std::filesystem::path file) {
  HttpRequest r;
  r.method = "PUT";
  r.url = std::move(url);
  r.body_file = std::move(file);
  r.headers.emplace_back("Content-Type", "application/octet-stream");
  return r;
}

bool HttpResponse::ambiguous() const noexcept {
  if (status >= 500) return true;
  if (status != 0) return false;
  switch (curl_code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
      return false;  // provably never reached the server
    default:
      return true;
  }
}

std::optional<std::string> HttpResponse::header(std::string_view lower_name) const {
  auto it = headers.find(std::string(lower_name));
  if (it == headers.end()) return std::nullopt;
  return it->second;
}

namespace {
// What to do about a TLS failure: the usual cause at a site is its own
// certificate authority, which the system's bundle does not hold.
std::string tls_hint(CURLcode rc, const HttpClientOptions& o) {
  switch (rc) {
    case CURLE_PEER_FAILED_VERIFICATION:
      return o.ca_bundle_.empty()
                 ? "; the server's TLS certificate is not signed by a certificate authority this machine "
                   "trusts: if your site has its own, give its PEM bundle (the plugin's ca_bundle key, or "
                   "the variable its README names)"
                 : "; the server's TLS certificate is not signed by a certificate authority in " + o.ca_bundle_;
    case CURLE_SSL_CACERT_BADFILE:
      return "; cannot read the CA bundle " + o.ca_bundle_ + " (expected PEM certificates)";
    case CURLE_SSL_CERTPROBLEM:
      return "; cannot use the client certificate " + o.client_cert_ +
             " (expected a PEM certificate followed by its private key)";
    default:
      return {};
  }
}
}  // namespace

std::string HttpResponse::describe() const {
  if (status == 0) return (aborted ? "request aborted: " : "connection failed: ") + error;
  std::string excerpt = body.substr(0, 300);
  for (char& c : excerpt)
    if (c == '\n' || c == '\r') c = ' ';
  return "HTTP " + std::to_string(status) + (excerpt.empty() ? std::string() : ": " + excerpt);
}

struct HttpClient::Impl {
  CURL* curl = nullptr;
};

HttpClient::HttpClient(HttpClientOptions options) : options_(std::move(options)), impl_(new Impl) {
  global_init_once();
  impl_->curl = curl_easy_init();
  if (impl_->curl == nullptr) throw std::runtime_error("libcurl: curl_easy_init failed");
}

HttpClient::~HttpClient() {
  if (impl_ && impl_->curl != nullptr) curl_easy_cleanup(impl_->curl);
}

HttpResponse HttpClient::perform(const HttpRequest& request) {
  CURL* c = impl_->curl;
  curl_easy_reset(c);  // keeps the connection cache, clears the previous options
  HttpResponse response;

  std::unique_ptr<std::FILE, FileCloser> file;
  if (!request.body_file.empty()) {
    file.reset(std::fopen(request.body_file.c_str(), "rb"));
    if (!file) throw std::runtime_error("cannot open " + request.body_file.string() + " for upload");
  }

  curl_easy_setopt(c, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_USERAGENT, options_.user_agent_.c_str());
  auto timeout = request.timeout.count() > 0 ? request.timeout : options_.timeout_;
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout_.count()));
  if (options_.insecure_tls_) {
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!options_.ca_bundle_.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, options_.ca_bundle_.c_str());
  if (!options_.client_cert_.empty()) {
    curl_easy_setopt(c, CURLOPT_SSLCERT, options_.client_cert_.c_str());
    curl_easy_setopt(c, CURLOPT_SSLKEY, options_.client_cert_.c_str());
  }
  if (options_.user_ && !options_.aws_sigv4_.empty()) {
    // CURLOPT_AWS_SIGV4 selects the signing itself; the key pair is the "user".
    curl_easy_setopt(c, CURLOPT_AWS_SIGV4, options_.aws_sigv4_.c_str());
    curl_easy_setopt(c, CURLOPT_USERNAME, options_.user_->c_str());
    curl_easy_setopt(c, CURLOPT_PASSWORD, options_.password_.c_str());
  } else if (options_.user_) {
    curl_easy_setopt(c, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(c, CURLOPT_USERNAME, options_.user_->c_str());
    curl_easy_setopt(c, CURLOPT_PASSWORD, options_.password_.c_str());
  }

  curl_slist* raw_headers = nullptr;
  auto add = [&](const std::string& name, const std::string& value) {
    std::string line = name + ": " + value;
    if (value.empty()) line = name + ";";  // curl's syntax for an empty header value
    raw_headers = curl_slist_append(raw_headers, line.c_str());
  };
  if (!options_.bearer_.empty() && !options_.user_) add("Authorization", "Bearer " + options_.bearer_);
  for (const auto& [n, v] : options_.headers_) add(n, v);
  for (const auto& [n, v] : request.headers) add(n, v);
  raw_headers = curl_slist_append(raw_headers, "Expect:");  // no 100-continue round trip
  std::unique_ptr<curl_slist, SlistFree> headers(raw_headers);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());

  FileBody file_body;
  if (file) {
    std::error_code ec;
    uint64_t size = std::filesystem::file_size(request.body_file, ec);
    if (ec) size = 0;
    if (request.body_offset > size)
      throw std::runtime_error("upload range starts past the end of " + request.body_file.string());
    if (request.body_offset > 0 && fseeko(file.get(), static_cast<off_t>(request.body_offset), SEEK_SET) != 0)
      throw std::runtime_error("cannot seek in " + request.body_file.string() + " for upload");
    uint64_t length = size - request.body_offset;
    if (request.body_length) {
      if (*request.body_length > length)
        throw std::runtime_error("upload range ends past the end of " + request.body_file.string());
      length = *request.body_length;
    }
    file_body.file = file.get();
    file_body.remaining = length;
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, &read_file);
    curl_easy_setopt(c, CURLOPT_READDATA, &file_body);
    if (!ec) curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(length));
    if (request.method != "PUT") curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  } else if (request.method == "GET") {
    curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
  } else if (request.method == "HEAD") {
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  } else {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    if (request.method != "POST") curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }

  BodySink sink;
  sink.curl = c;
  sink.body = &response.body;
  if (!request.response_file.empty()) sink.file_path = &request.response_file;
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &write_sink);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, &write_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &response.headers);
  if (options_.abort_ != nullptr) {
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, &progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, const_cast<std::atomic<bool>*>(options_.abort_));
  }
  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);

  CURLcode rc = curl_easy_perform(c);
  if (sink.file != nullptr && std::fclose(sink.file) != 0 && rc == CURLE_OK) rc = CURLE_WRITE_ERROR;
  if (sink.file_failed || (rc == CURLE_WRITE_ERROR && !request.response_file.empty()))
    std::snprintf(errbuf, sizeof errbuf, "cannot write %s", request.response_file.c_str());
  if (!request.response_file.empty() && sink.file_path != nullptr && !sink.decided && rc == CURLE_OK) {
    // An empty 2xx body never reaches write_sink: still create the (empty) file.
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (status >= 200 && status < 300) {
      std::FILE* empty = std::fopen(request.response_file.c_str(), "wb");
      if (empty == nullptr || std::fclose(empty) != 0) rc = CURLE_WRITE_ERROR;
    }
  }
  if (rc == CURLE_OK) {
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &response.status);
  } else {
    response.status = 0;
    response.curl_code = static_cast<int>(rc);
    response.aborted = rc == CURLE_ABORTED_BY_CALLBACK;
    response.error = errbuf[0] != '\0' ? errbuf : curl_easy_strerror(rc);
    response.error += " (" + request.method + " " + request.url + ")";
    response.error += tls_hint(rc, options_);
  }
  return response;
}

std::string url_encode(std::string_view text, bool keep_slash) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

}  // namespace trainhook::support
