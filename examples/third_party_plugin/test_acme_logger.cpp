// The pack's own test of acme_logger, on the installed test host
// (Trainhook::testkit): the built library is loaded through the C ABI as a
// trainer would load it, with no trainer and no LibTorch, and driven through
// a run's events.
//   1. its options errors are the SDK's ("did you mean"), and url is required;
//   2. against a 1.1 trainer (the oldest it declares, ABI_MIN_MINOR 1), with
//      an endpoint that refuses connections: every log record ends up in the
//      spool, and the end-of-run line says so as a warning;
//   3. a failed run (EXCEPTION, ABI 1.3) is closed as FAILED with its reason.
// Usage: test_acme_logger <libtrainhook_acme_logger.so> <scratch folder (emptied first)>
#include <trainhook/testkit/plugin_driver.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

int failures = 0;
#define CHECK(cond)                                                                 \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                                   \
    }                                                                               \
  } while (0)

// A port on 127.0.0.1 that refuses connections (bound, then closed).
int closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    return -1;
  ::close(fd);
  return ntohs(a.sin_port);
}

size_t lines_in(const std::string& file) {
  std::ifstream in(file);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) n += line.empty() ? 0 : 1;
  return n;
}

// INIT_END, TRAIN_BEGIN, then `steps` steps each with its events and a LOG.
void train(testkit::Instance& cb, testkit::Run& run, int steps) {
  cb.fire(TH_EVENT_INIT_END, run);
  cb.fire(TH_EVENT_TRAIN_BEGIN, run);
  cb.fire(TH_EVENT_EPOCH_BEGIN, run);
  for (int s = 1; s <= steps; ++s) {
    run.state.global_step = s;
    run.state.epoch = s / 10.0;
    run.set_step_values(1.0 / s, 0.5, 1e-3);
    cb.fire(TH_EVENT_STEP_BEGIN, run);
    cb.fire(TH_EVENT_PRE_OPTIMIZER_STEP, run);
    cb.fire(TH_EVENT_OPTIMIZER_STEP, run);
    cb.fire(TH_EVENT_STEP_END, run);
    testkit::Values logs{{"loss", 1.0 / s}, {"learning_rate", 1e-3}};
    cb.fire(TH_EVENT_LOG, run, logs.view());
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: test_acme_logger <plugin library> <scratch folder>\n");
    return 2;
  }
  const std::string library = argv[1], scratch = argv[2];
  std::filesystem::remove_all(scratch);
  std::filesystem::create_directories(scratch);
  const std::string url = "http://127.0.0.1:" + std::to_string(closed_port()) + "/log";

  {  // 1. options
    testkit::FakeHost host;
    testkit::Library lib(library);
    const th_callback_info& info = lib.callback("acme_logger");
    CHECK(info.kind == TH_KIND_INTEGRATION);
    const testkit::CallError typo = testkit::create_error(info, host, R"({"urll": "http://x"})");
    CHECK(typo.status == TH_INVALID_ARGUMENT);
    CHECK(std::string(typo.what()).find("did you mean 'url'?") != std::string::npos);
    const testkit::CallError missing = testkit::create_error(info, host, "{}");
    CHECK(std::string(missing.what()).find("acme_logger.url: required") != std::string::npos);
    const testkit::CallError range =
        testkit::create_error(info, host, R"({"url": "http://x", "max_attempts": 0})");
    CHECK(std::string(range.what()).find("max_attempts") != std::string::npos);
  }

  {  // 2. a 1.1 trainer, an endpoint that refuses: spooled, and said so
    testkit::FakeHost host;
    host.play_abi_minor(1);
    host.output_dir = scratch;
    testkit::Library lib(library, 1);
    CHECK(lib.info().abi_minor == 1);
    {
      testkit::Instance cb(lib.callback("acme_logger"), host,
                           R"({"url": ")" + url + R"(", "max_attempts": 2})");
      testkit::Run run;
      train(cb, run, 5);
      cb.fire(TH_EVENT_TRAIN_END, run);
    }
    CHECK(lines_in(scratch + "/acme_logger_spool.jsonl") == 5);
    CHECK(host.has(TH_LOG_WARN, "Acme run " + url + " FINISHED: 0 records delivered, 5 spooled"));
    CHECK(host.has(TH_LOG_WARN, "0 records delivered, 5 spooled in " + scratch + "/acme_logger_spool.jsonl"));
    if (failures > 0) std::fputs(host.all_logs().c_str(), stderr);
  }

  {  // 3. a failed run: closed as FAILED with the reason; the spool keeps growing
    testkit::FakeHost host;
    host.output_dir = scratch;
    testkit::Library lib(library);
    {
      testkit::Instance cb(lib.callback("acme_logger"), host,
                           R"({"url": ")" + url + R"(", "max_attempts": 1})");
      testkit::Run run;
      train(cb, run, 2);
      const th_failure failure{TH_FAILURE_STRUCT_SIZE, TH_FAILURE_ERROR, "the data ran out", 2};
      cb.fire_exception(run, failure);
    }
    CHECK(lines_in(scratch + "/acme_logger_spool.jsonl") == 7);
    CHECK(host.has(TH_LOG_WARN, "FAILED (error at step 2: the data ran out)"));
    if (failures > 0) std::fputs(host.all_logs().c_str(), stderr);
  }

  std::printf("test_acme_logger: %s\n", failures == 0 ? "ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
