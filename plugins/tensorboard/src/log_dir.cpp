#include <trainhook/tensorboard/log_dir.hpp>

#include <cstdio>

namespace trainhook::tensorboard {

std::string run_folder_name(std::time_t now, std::string_view host) {
  static const char* const kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%02d_%02d-%02d-%02d_", kMonths[tm.tm_mon % 12], tm.tm_mday, tm.tm_hour,
                tm.tm_min, tm.tm_sec);
  return std::string(buf).append(host);
}

std::string event_file_name(std::time_t now, std::string_view host, int64_t pid, uint64_t n) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "events.out.tfevents.%010lld.", static_cast<long long>(now));
  std::string name(buf);
  name.append(host);
  name.append(".").append(std::to_string(pid)).append(".").append(std::to_string(n));
  return name;
}

std::filesystem::path resolve_log_dir(const LogDirInputs& in, std::time_t now, std::string_view host) {
  std::filesystem::path dir;
  if (!in.configured.empty()) {
    dir = in.configured;
  } else if (!in.environment.empty()) {
    dir = in.environment;
  } else {
    dir = std::filesystem::path(in.output_dir.empty() ? "." : in.output_dir) / "runs" /
          run_folder_name(now, host);
  }
  if (!in.trial_name.empty()) dir /= in.trial_name;
  return dir;
}

}  // namespace trainhook::tensorboard
