#include <trainhook/flyte/flyte_options.hpp>
#include <trainhook/flyte/s3_config.hpp>

#include <trainhook/plugin.hpp>
#include <trainhook/support/env.hpp>
#include <trainhook/support/tls_files.hpp>

#include <algorithm>
#include <stdexcept>

namespace trainhook::flyte {
namespace {

const std::vector<std::string> kKnownKeys = {
    "checkpoint_path", "prev_checkpoint",     "restore",   "wait_timeout",
    "retry_seconds",   "multipart_threshold", "part_size", "deck",
    "ca_bundle"};

std::optional<Location> location(const support::Settings& s, const char* key, const char* env) {
  const auto text = s.get(key, env);
  if (!text) return std::nullopt;
  try {
    return parse_location(*text, s.source_of(key, env));
  } catch (const std::invalid_argument& e) {
    throw ConfigError(e.what());
  }
}

}  // namespace

FlyteOptions FlyteOptions::parse(const std::string& config_json) {
  support::Settings s(config_json, "flyte");
  const auto unknown = s.unknown_keys(kKnownKeys);
  if (!unknown.empty()) {
    std::string known;
    for (const auto& k : kKnownKeys) known += (known.empty() ? "" : ", ") + k;
    throw ConfigError("plugin_config flyte." + unknown.front() +
                      " is not a setting of the flyte callback; known: " + known);
  }
  FlyteOptions o;
  o.destination(location(s, "checkpoint_path", "TRAINHOOK_CHECKPOINT_DEST"));
  o.previous(location(s, "prev_checkpoint", "TRAINHOOK_PREV_CHECKPOINT"));
  const std::string restore = s.get("restore", nullptr).value_or("latest");
  if (restore != "latest" && restore != "all")
    throw ConfigError("plugin_config flyte.restore is '" + restore + "'; expected latest or all");
  o.restore_all(restore == "all");
  const double wait = s.number("wait_timeout", nullptr, 300);
  if (wait < 0) throw ConfigError("plugin_config flyte.wait_timeout must be >= 0 seconds");
  o.wait_timeout(std::chrono::milliseconds(static_cast<int64_t>(wait * 1000)));
  const double retry = s.number("retry_seconds", nullptr, 120);
  if (retry < 0) throw ConfigError("plugin_config flyte.retry_seconds must be >= 0 seconds");
  if (retry == 0) {
    o.retry().max_attempts(1);  // max_elapsed 0 would mean "no limit"
  } else {
    o.retry().max_elapsed(
        std::chrono::milliseconds(std::max<int64_t>(1, static_cast<int64_t>(retry * 1000))));
  }
  const int64_t threshold =
      s.integer("multipart_threshold", nullptr, static_cast<int64_t>(o.multipart_threshold()));
  if (threshold < static_cast<int64_t>(kMinPartSize))
    throw ConfigError("plugin_config flyte.multipart_threshold must be at least 5242880 bytes (5 MiB)");
  o.multipart_threshold(static_cast<uint64_t>(threshold));
  const int64_t part = s.integer("part_size", nullptr, static_cast<int64_t>(o.part_size()));
  if (part < static_cast<int64_t>(kMinPartSize))
    throw ConfigError(
        "plugin_config flyte.part_size must be at least 5242880 bytes (5 MiB, S3's minimum part)");
  o.part_size(static_cast<uint64_t>(part));
  o.deck(s.flag("deck", nullptr, true));
  // As boto3 (AWS_CA_BUNDLE) and Python's requests (REQUESTS_CA_BUNDLE), else OpenSSL's SSL_CERT_FILE.
  if (auto f = support::find_tls_file(s.get("ca_bundle", nullptr), s.source_of("ca_bundle", nullptr),
                                      {"AWS_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE"},
                                      "a PEM bundle of certificate authorities"))
    o.ca_bundle(f->path);
  return o;
}

}  // namespace trainhook::flyte
