#include <trainhook/strings.hpp>
#include <trainhook/support/tls_files.hpp>
#include <trainhook/wandb/wandb_options.hpp>

#include <trainhook/plugin.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>

namespace trainhook::wandb {

namespace {

std::string lower_trimmed(const std::string& s) { return strings::lower(strings::trim_view(s)); }

std::chrono::milliseconds seconds_setting(const support::Settings& s, const char* key,
                                          std::chrono::milliseconds fallback) {
  const double v = s.number(key, nullptr, static_cast<double>(fallback.count()) / 1000.0);
  if (!std::isfinite(v) || v < 0)
    throw ConfigError(s.source_of(key, nullptr) + " must be a number of seconds >= 0, got " +
                      std::to_string(v));
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(v * 1000.0)));
}

std::vector<std::string> split_tags(const std::string& text) {
  std::vector<std::string> out;
  for (auto& tag : strings::split(text, ',', /*trim_pieces=*/true))
    if (!tag.empty()) out.push_back(std::move(tag));
  return out;
}

}  // namespace

const std::vector<std::string>& known_config_keys() {
  static const std::vector<std::string> keys = {"mode",
                                                "api_key",
                                                "base_url",
                                                "project",
                                                "entity",
                                                "run_id",
                                                "resume",
                                                "dir",
                                                "log_model",
                                                "tags",
                                                "job_type",
                                                "run_group",
                                                "transmit_interval",
                                                "backoff_initial",
                                                "backoff_max",
                                                "offline_after",
                                                "finish_timeout",
                                                "request_timeout",
                                                "max_request_bytes",
                                                "queue_capacity",
                                                "memory_records",
                                                "ca_bundle"};
  return keys;
}

Mode read_mode(const support::Settings& s) {
  auto v = s.get("mode", "WANDB_MODE");
  if (!v) return Mode::online;
  const std::string m = lower_trimmed(*v);
  if (m == "online" || m == "run") return Mode::online;
  if (m == "offline" || m == "dryrun") return Mode::offline;
  if (m == "disabled") return Mode::disabled;
  throw ConfigError(s.source_of("mode", "WANDB_MODE") + " must be online, offline or disabled, got '" + *v +
                    "'");
}

WandbOptions read_options(const support::Settings& s, const std::string& default_dir) {
  auto unknown = s.unknown_keys(known_config_keys());
  if (!unknown.empty()) {
    std::string known;
    for (const auto& k : known_config_keys()) known += (known.empty() ? "" : ", ") + k;
    throw ConfigError("plugin_config wandb." + unknown.front() +
                      " is not a wandb setting; known keys: " + known);
  }
  WandbOptions w;
  w.mode(read_mode(s));
  if (auto v = s.get("api_key", "WANDB_API_KEY")) w.api_key(*v);
  if (auto v = s.get("base_url", "WANDB_BASE_URL")) w.base_url(*v);
  while (!w.base_url().empty() && w.base_url().back() == '/') w.base_url().pop_back();
  if (w.base_url().rfind("http://", 0) != 0 && w.base_url().rfind("https://", 0) != 0)
    throw ConfigError(s.source_of("base_url", "WANDB_BASE_URL") +
                      " must start with http:// or https://, got '" + w.base_url() + "'");
  // As the W&B client (Python requests): REQUESTS_CA_BUNDLE, else OpenSSL's SSL_CERT_FILE.
  if (auto f = support::find_tls_file(s.get("ca_bundle", nullptr), s.source_of("ca_bundle", nullptr),
                                      {"REQUESTS_CA_BUNDLE", "SSL_CERT_FILE"},
                                      "a PEM bundle of certificate authorities"))
    w.ca_bundle(f->path);
  if (auto v = s.get("project", "WANDB_PROJECT")) w.project(*v);
  if (auto v = s.get("entity", "WANDB_ENTITY")) w.entity(*v);
  if (auto v = s.get("run_id", "WANDB_RUN_ID")) w.run_id(*v);
  for (char c : w.run_id())
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'))
      throw ConfigError(s.source_of("run_id", "WANDB_RUN_ID") +
                        " may hold only letters, digits, '-' and '_', got '" + w.run_id() + "'");
  if (auto v = s.get("resume", "WANDB_RESUME")) {
    const std::string r = lower_trimmed(*v);
    if (r == "allow")
      w.resume(Resume::allow);
    else if (r == "must")
      w.resume(Resume::must);
    else if (r == "never")
      w.resume(Resume::never);
    else if (r == "auto" || r == "true")
      w.resume(Resume::automatic);
    else if (r == "false" || r.empty())
      w.resume(Resume::none);
    else
      throw ConfigError(s.source_of("resume", "WANDB_RESUME") + " must be allow, must, never or auto, got '" +
                        *v + "'");
  }
  w.dir(s.get("dir", "WANDB_DIR").value_or(default_dir));
  if (auto v = s.get("log_model", "WANDB_LOG_MODEL")) {
    const std::string m = lower_trimmed(*v);
    if (m == "checkpoint")
      w.log_model(LogModel::checkpoint);
    else if (m == "end" || support::is_truthy(m))
      w.log_model(LogModel::end);  // HF: truthy means "end"
    else if (m == "false" || m == "0" || m == "no" || m == "off" || m.empty())
      w.log_model(LogModel::off);
    else
      throw ConfigError(s.source_of("log_model", "WANDB_LOG_MODEL") +
                        " must be false, end or checkpoint, got '" + *v + "'");
  }
  if (auto v = s.get("tags", "WANDB_TAGS")) w.tags(split_tags(*v));
  if (auto v = s.get("job_type", "WANDB_JOB_TYPE")) w.job_type(*v);
  if (auto v = s.get("run_group", "WANDB_RUN_GROUP")) w.run_group(*v);

  w.transmit_interval(seconds_setting(s, "transmit_interval", w.transmit_interval()));
  w.backoff_initial(seconds_setting(s, "backoff_initial", w.backoff_initial()));
  w.backoff_max(seconds_setting(s, "backoff_max", w.backoff_max()));
  if (w.backoff_max() < w.backoff_initial())
    throw ConfigError("plugin_config wandb.backoff_max must be >= wandb.backoff_initial");
  w.offline_after(seconds_setting(s, "offline_after", w.offline_after()));
  w.finish_timeout(seconds_setting(s, "finish_timeout", w.finish_timeout()));
  w.request_timeout(seconds_setting(s, "request_timeout", w.request_timeout()));
  if (w.request_timeout().count() == 0) throw ConfigError("plugin_config wandb.request_timeout must be > 0");
  const int64_t bytes = s.integer("max_request_bytes", nullptr, static_cast<int64_t>(w.max_request_bytes()));
  if (bytes < 1) throw ConfigError("plugin_config wandb.max_request_bytes must be >= 1");
  w.max_request_bytes(static_cast<size_t>(bytes));
  const int64_t cap = s.integer("queue_capacity", nullptr, static_cast<int64_t>(w.queue_capacity()));
  if (cap < 1) throw ConfigError("plugin_config wandb.queue_capacity must be >= 1");
  w.queue_capacity(static_cast<size_t>(cap));
  const int64_t mem = s.integer("memory_records", nullptr, static_cast<int64_t>(w.memory_records()));
  if (mem < 2) throw ConfigError("plugin_config wandb.memory_records must be >= 2");
  w.memory_records(static_cast<size_t>(mem));

  if (w.mode() == Mode::online && w.api_key().empty())
    throw ConfigError(
        "wandb: WANDB_API_KEY is not set (needed for WANDB_MODE=online); set it, or use WANDB_MODE=offline "
        "to "
        "write the run to disk and upload it later with `trainhook wandb-sync`, or WANDB_MODE=disabled");
  return w;
}

const char* to_string(Mode m) {
  switch (m) {
    case Mode::online:
      return "online";
    case Mode::offline:
      return "offline";
    case Mode::disabled:
      return "disabled";
  }
  return "?";
}

const char* to_string(Resume r) {
  switch (r) {
    case Resume::none:
      return "none";
    case Resume::allow:
      return "allow";
    case Resume::must:
      return "must";
    case Resume::never:
      return "never";
    case Resume::automatic:
      return "auto";
  }
  return "?";
}

}  // namespace trainhook::wandb
