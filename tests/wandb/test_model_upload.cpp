// ModelUploader (WANDB_LOG_MODEL) against a scripted in-process HTTP server:
// one PUT per file at artifacts/<name>/<relative path> with the file's bytes,
// retries keep the file, a final refusal gives up only that folder, folders
// removed before their upload are skipped, encoded URLs.
#include <trainhook/wandb/model_upload.hpp>

#include <temp_dir.hpp>
#include <test_http_server.hpp>

#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <string>

using namespace trainhook::wandb;
using trainhook::testing::TestHttpServer;
using trainhook::testing::TestReply;
using trainhook::testing::TestRequest;
namespace fs = std::filesystem;

namespace {

using trainhook::testkit::TempDir;

using trainhook::testkit::write_file;

trainhook::support::RetryPolicy fast() {
  return trainhook::support::RetryPolicy()
      .initial_delay(std::chrono::milliseconds(50))
      .max_delay(std::chrono::milliseconds(200));
}

trainhook::support::HttpClient client() {
  return trainhook::support::HttpClient(trainhook::support::HttpClientOptions().basic_auth("api", "k"));
}

// Drives the uploader like the worker does (retries immediately, bounded).
std::vector<UploadResult> run_all(ModelUploader& up, trainhook::support::HttpClient& http,
                                  const StreamTarget& target) {
  std::vector<UploadResult> out;
  for (int i = 0; i < 100 && up.has_work(); ++i) out.push_back(up.upload_once(http, target));
  return out;
}

}  // namespace

TEST_CASE("artifact file URLs: every segment encoded, folders of the relative path kept") {
  StreamTarget t{"http://h", "my team", "p", "r1"};
  CHECK(artifact_file_url(t, "checkpoint-4", "sub dir/model.pt") ==
        "http://h/files/my%20team/p/r1/artifacts/checkpoint-4/sub%20dir/model.pt");
}

TEST_CASE("ModelUploader: every file's bytes, one PUT each, retried on 500 and a dropped connection") {
  TempDir tmp("th_model_upload");
  const std::string big(300000, 'x');
  write_file(tmp.path / "checkpoint-4" / "model.pt", big);
  write_file(tmp.path / "checkpoint-4" / "trainer_state.json", "{\"global_step\": 4}");
  write_file(tmp.path / "checkpoint-4" / "sub" / "extra.bin", std::string("\0\1\2", 3));
  int n = 0;
  TestHttpServer server([&](const TestRequest&) {
    ++n;
    TestReply r;
    if (n == 1) r.status = 500;
    if (n == 3) r.drop = true;
    return r;
  });
  auto http = client();
  ModelUploader up(fast());
  up.add({"checkpoint-4", tmp.path / "checkpoint-4"});
  REQUIRE(up.has_work());
  auto results = run_all(up, http, StreamTarget{server.url(), "e", "p", "r"});
  CHECK_FALSE(up.has_work());
  CHECK(up.files_uploaded() == 3);
  int retries = 0;
  for (const auto& r : results) retries += r.status == UploadStatus::retry ? 1 : 0;
  CHECK(retries == 2);
  CHECK(results.back().finished == "checkpoint-4");

  std::map<std::string, std::string> stored;  // last successful body per path
  auto reqs = server.requests();
  REQUIRE(reqs.size() == 5);
  for (size_t i = 0; i < reqs.size(); ++i) {
    CHECK(reqs[i].method == "PUT");
    CHECK(reqs[i].headers["authorization"] == "Basic YXBpOms=");  // base64("api:k")
    if (i != 0 && i != 2) stored[reqs[i].target] = reqs[i].body;
  }
  CHECK(stored.size() == 3);
  CHECK(stored["/files/e/p/r/artifacts/checkpoint-4/model.pt"] == big);
  CHECK(stored["/files/e/p/r/artifacts/checkpoint-4/trainer_state.json"] == "{\"global_step\": 4}");
  CHECK(stored["/files/e/p/r/artifacts/checkpoint-4/sub/extra.bin"] == std::string("\0\1\2", 3));
}

TEST_CASE("ModelUploader: a final refusal gives up that folder only, a removed folder is skipped") {
  TempDir tmp("th_model_upload");
  write_file(tmp.path / "a" / "1.txt", "one");
  write_file(tmp.path / "a" / "2.txt", "two");
  write_file(tmp.path / "c" / "3.txt", "three");
  TestHttpServer server([&](const TestRequest& q) {
    TestReply r;
    if (q.target.find("/artifacts/a/") != std::string::npos) {
      r.status = 403;
      r.body = "{\"error\": \"not allowed\"}";
    }
    return r;
  });
  auto http = client();
  ModelUploader up(fast());
  up.add({"a", tmp.path / "a"});
  up.add({"b", tmp.path / "b-was-rotated-away"});
  up.add({"c", tmp.path / "c"});
  CHECK(up.pending_description().size() == 3);
  auto results = run_all(up, http, StreamTarget{server.url(), "e", "p", "r"});
  REQUIRE(results.size() == 3);
  CHECK(results[0].status == UploadStatus::fatal);
  CHECK(results[0].message.find("403") != std::string::npos);
  CHECK(results[0].message.find("not allowed") != std::string::npos);
  CHECK(results[0].message.find("2 file(s) not uploaded") != std::string::npos);
  CHECK(results[1].status == UploadStatus::skipped);
  CHECK(results[1].message.find("b-was-rotated-away") != std::string::npos);
  CHECK(results[2].status == UploadStatus::uploaded);
  CHECK(results[2].finished == "c");
  CHECK(up.files_uploaded() == 1);
  CHECK(server.requests().size() == 2);  // a/1.txt refused (a given up), c/3.txt
}

TEST_CASE("ModelUploader: nothing queued, nothing sent") {
  auto http = client();
  ModelUploader up(fast());
  CHECK(up.upload_once(http, StreamTarget{"http://127.0.0.1:9", "e", "p", "r"}).status ==
        UploadStatus::nothing_to_send);
}
