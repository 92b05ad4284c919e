#include <trainhook/strings.hpp>
#include <trainhook/support/tls_files.hpp>
#include <trainhook/wandb/wandb_options.hpp>

#include <trainhook/plugin.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>

namespace trainhook::wandb {

namespace {

bool is_http_url(const std::string& u) { return u.rfind("http://", 0) == 0 || u.rfind("https://", 0) == 0; }

bool is_run_id(const std::string& id) {
  for (char c : id)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')) return false;
  return true;
}

}  // namespace

const OptionTable<WandbOptions>& options_table() {
  using O = WandbOptions;
  static const auto t =
      OptionTable<O>("wandb")
          .choice(TRAINHOOK_KEY(mode),
                  {{"online", Mode::online},
                   {"offline", Mode::offline},
                   {"disabled", Mode::disabled},
                   {"run", Mode::online},
                   {"dryrun", Mode::offline}},
                  "online, offline or disabled (W&B's older run and dryrun too)")
          .env("WANDB_MODE")
          .key(TRAINHOOK_KEY(api_key), "never printed")
          .env("WANDB_API_KEY")
          .shown_default("(required online)")
          .key(TRAINHOOK_KEY(base_url), "the server")
          .env("WANDB_BASE_URL")
          .check("an http:// or https:// URL", is_http_url)
          .key(TRAINHOOK_KEY(ca_bundle),
               "PEM bundle of the certificate authorities to trust (a site's own CA); `trainhook wandb-sync` "
               "reads the same variables")
          .env("REQUESTS_CA_BUNDLE")
          .env("SSL_CERT_FILE")
          .shown_default("the system's")
          .key(TRAINHOOK_KEY(project), "the project")
          .env("WANDB_PROJECT")
          .key(TRAINHOOK_KEY(entity), "the team or user")
          .env("WANDB_ENTITY")
          .shown_default("the key's default entity")
          .key(TRAINHOOK_KEY(run_id), "letters, digits, `-`, `_`")
          .env("WANDB_RUN_ID")
          .check("only letters, digits, '-' and '_'", is_run_id)
          .shown_default("a new random id")
          .choice(TRAINHOOK_KEY(resume),
                  {{"false", Resume::none},
                   {"allow", Resume::allow},
                   {"must", Resume::must},
                   {"never", Resume::never},
                   {"auto", Resume::automatic},
                   {"true", Resume::automatic}},
                  "allow, must, never or auto")
          .env("WANDB_RESUME")
          .shown_default("none")
          .key(TRAINHOOK_KEY(dir), "offline runs go to `<dir>/wandb/offline-run-*`")
          .env("WANDB_DIR")
          .shown_default("`output_dir`")
          .choice(TRAINHOOK_KEY(log_model),
                  {{"false", LogModel::off},
                   {"end", LogModel::end},
                   {"checkpoint", LogModel::checkpoint},
                   {"0", LogModel::off},
                   {"no", LogModel::off},
                   {"off", LogModel::off},
                   {"true", LogModel::end},
                   {"1", LogModel::end},
                   {"yes", LogModel::end},
                   {"on", LogModel::end}},
                  "end (the final model's checkpoint) or checkpoint (every save); HF's true means end")
          .env("WANDB_LOG_MODEL")
          .key(TRAINHOOK_KEY(tags), "comma-separated")
          .env("WANDB_TAGS")
          .shown_default("none")
          .key(TRAINHOOK_KEY(job_type), "the run's job type")
          .env("WANDB_JOB_TYPE")
          .shown_default("none")
          .key(TRAINHOOK_KEY(run_group), "the run's group")
          .env("WANDB_RUN_GROUP")
          .shown_default("none")
          .key(TRAINHOOK_KEY(transmit_interval), "seconds between history requests (coalescing window)")
          .key(TRAINHOOK_KEY(backoff_initial), "seconds of backoff after the first failure")
          .key(TRAINHOOK_KEY(backoff_max), "seconds of backoff at most (>= `backoff_initial`)")
          .key(TRAINHOOK_KEY(offline_after), "seconds unreachable before switching to the offline run")
          .key(TRAINHOOK_KEY(finish_timeout), "seconds the end of the run waits for delivery")
          .key(TRAINHOOK_KEY(request_timeout), "seconds per HTTP request")
          .above(0)
          .key(TRAINHOOK_KEY(max_request_bytes), "history bytes per request (about)")
          .min(1)
          .key(TRAINHOOK_KEY(queue_capacity), "records queued on the training side at most")
          .min(1)
          .key(TRAINHOOK_KEY(memory_records), "undelivered lines kept in memory before spilling to disk")
          .min(2);
  return t;
}

Mode read_mode(const std::string& config_json) {
  WandbOptions w;
  options_table().parse_keys(w, config_json, {"mode"});
  return w.mode();
}

WandbOptions WandbOptions::from_json(const std::string& config_json, const std::string& default_dir) {
  WandbOptions w;
  w.dir(default_dir);
  std::map<std::string, std::string> from;
  options_table().parse_into(w, config_json, &from);
  while (!w.base_url().empty() && w.base_url().back() == '/') w.base_url().pop_back();
  // As the W&B client (Python requests): REQUESTS_CA_BUNDLE, else OpenSSL's
  // SSL_CERT_FILE; the file must be readable.
  if (!w.ca_bundle().empty())
    if (auto f = support::find_tls_file(w.ca_bundle(), from["ca_bundle"], {},
                                        "a PEM bundle of certificate authorities"))
      w.ca_bundle(f->path);
  if (w.backoff_max() < w.backoff_initial())
    throw ConfigError("plugin_config wandb.backoff_max: expected a number >= wandb.backoff_initial (" +
                      std::to_string(static_cast<double>(w.backoff_initial().count()) / 1000) + " s)");
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
