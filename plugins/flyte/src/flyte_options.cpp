#include <trainhook/flyte/flyte_options.hpp>
#include <trainhook/flyte/s3_config.hpp>

#include <trainhook/plugin.hpp>
#include <trainhook/support/tls_files.hpp>

#include <algorithm>
#include <map>
#include <stdexcept>

namespace trainhook::flyte {
namespace {

std::optional<Location> location(const std::string& text, const std::string& source) {
  if (text.empty()) return std::nullopt;
  try {
    return parse_location(text, source);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(e.what());
  }
}

}  // namespace

const OptionTable<FlyteKeys>& FlyteKeys::table() {
  using K = FlyteKeys;
  static const auto t =
      OptionTable<K>("flyte")
          .key(TRAINHOOK_KEY(checkpoint_path), "where this attempt uploads (a folder, `file://` or `s3://`)")
          .env("TRAINHOOK_CHECKPOINT_DEST")
          .shown_default("none: no uploads")
          .key(TRAINHOOK_KEY(prev_checkpoint), "the previous attempt's location, restored at train begin")
          .env("TRAINHOOK_PREV_CHECKPOINT")
          .shown_default("none")
          .choice(
              "restore", [](K& k) -> bool& { return k.restore_all(); }, {{"latest", false}, {"all", true}},
              "`latest`: the newest complete checkpoint; `all`: every complete one")
          .key(TRAINHOOK_KEY(wait_timeout), "seconds train end waits for the uploads")
          .key(TRAINHOOK_KEY(retry_seconds), "seconds each store operation is retried for (0: once)")
          .min(0)
          .key(TRAINHOOK_KEY(multipart_threshold), "files of this many bytes or more go as multipart uploads")
          .min(static_cast<double>(kMinPartSize))
          .key(TRAINHOOK_KEY(part_size), "bytes per multipart part (S3's minimum: 5 MiB)")
          .min(static_cast<double>(kMinPartSize))
          .key(TRAINHOOK_KEY(deck), "write and upload `log_history.html`")
          .key(TRAINHOOK_KEY(ca_bundle),
               "S3 over HTTPS: a PEM bundle of the certificate authorities to trust")
          .env("AWS_CA_BUNDLE")
          .env("REQUESTS_CA_BUNDLE")
          .env("SSL_CERT_FILE")
          .shown_default("the system's");
  return t;
}

FlyteOptions FlyteOptions::from_json(const std::string& config_json) {
  std::map<std::string, std::string> from;
  const FlyteKeys k = FlyteKeys::table().parse(config_json, &from);
  FlyteOptions o;
  o.destination(location(k.checkpoint_path(), from["checkpoint_path"]));
  o.previous(location(k.prev_checkpoint(), from["prev_checkpoint"]));
  o.restore_all(k.restore_all());
  o.wait_timeout(k.wait_timeout());
  if (k.retry_seconds() == 0) {
    o.retry().max_attempts(1);  // max_elapsed 0 would mean "no limit"
  } else {
    o.retry().max_elapsed(
        std::chrono::milliseconds(std::max<int64_t>(1, static_cast<int64_t>(k.retry_seconds() * 1000))));
  }
  o.multipart_threshold(k.multipart_threshold());
  o.part_size(k.part_size());
  o.deck(k.deck());
  // As boto3 (AWS_CA_BUNDLE) and Python's requests (REQUESTS_CA_BUNDLE), else
  // OpenSSL's SSL_CERT_FILE; the file must be readable.
  if (!k.ca_bundle().empty())
    if (auto f = support::find_tls_file(k.ca_bundle(), from["ca_bundle"], {},
                                        "a PEM bundle of certificate authorities"))
      o.ca_bundle(f->path);
  return o;
}

}  // namespace trainhook::flyte
