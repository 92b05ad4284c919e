// A HostServices for tests that create plugin callbacks in process through the
// registry: it keeps every line a plugin logs as "callback|level|message" and
// passes a plugin's stop request to a CallbackHandler when one is set.
// Header-only: only tests that link the core include it (the testkit library
// itself stays free of the core).
#pragma once

#include <trainhook/callbacks/callback_handler.hpp>
#include <trainhook/plugin_host/host/host_services.hpp>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace trainhook::testkit {

struct RecordingHost final : HostServices {
  void log(int32_t level, const std::string& callback, const std::string& message) override {
    std::lock_guard<std::mutex> lock(mu);
    lines.push_back(callback + "|" + std::to_string(level) + "|" + message);
  }
  std::string output_dir() const override { return "/runs/out"; }
  std::string training_args_json() const override { return R"({"output_dir": "/runs/out"})"; }
  void request_stop(const std::string& callback, const std::string& reason) override {
    if (handler != nullptr) handler->request_stop(callback + ": " + reason);
  }
  std::string trainer_state_json() const override { return "{}"; }
  std::string model_description() const override { return "mlp"; }
  std::string run_name() const override { return "run-7"; }
  std::string set_resume_checkpoint(const std::string&) override { return "too late"; }
  bool logged(const std::string& line) const {
    std::lock_guard<std::mutex> lock(mu);
    return std::find(lines.begin(), lines.end(), line) != lines.end();
  }
  mutable std::mutex mu;
  std::vector<std::string> lines;
  CallbackHandler* handler = nullptr;
};

}  // namespace trainhook::testkit
