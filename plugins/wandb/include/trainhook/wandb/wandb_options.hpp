// The wandb integration's settings: W&B's environment variables overlaid by the
// callback's plugin_config section (`--plugin_config wandb.project=x`), plus a
// few tuning knobs of our own (intervals, backoff, bounds) that tests shrink.
//
// read_mode() is separate and cheap so that WANDB_MODE=disabled makes the
// callback do nothing at all: no key is read, nothing else is validated.
#pragma once

#include <trainhook/options.hpp>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace trainhook::wandb {

enum class Mode { online, offline, disabled };
enum class Resume { none, allow, must, never, automatic };
enum class LogModel { off, end, checkpoint };

// Built with chained setters (WandbOptions().project(p).mode(Mode::offline)) or
// read from the environment and the plugin_config section by from_json().
class WandbOptions {
 public:
  TRAINHOOK_OPTION(Mode, mode, Mode::online);
  TRAINHOOK_OPTION(std::string, api_key, {});  // never printed or logged
  TRAINHOOK_OPTION(std::string, base_url, "https://api.wandb.ai");
  TRAINHOOK_OPTION(std::string, ca_bundle, {});  // REQUESTS_CA_BUNDLE / SSL_CERT_FILE; empty: the system's
  TRAINHOOK_OPTION(std::string, project, "trainhook");
  TRAINHOOK_OPTION(std::string, entity, {});  // empty: the server's default entity for the key
  TRAINHOOK_OPTION(std::string, run_id, {});  // empty: a new random id
  TRAINHOOK_OPTION(Resume, resume, Resume::none);
  TRAINHOOK_OPTION(std::string, dir, {});  // WANDB_DIR; the spool goes to <dir>/wandb/offline-run-*
  TRAINHOOK_OPTION(LogModel, log_model, LogModel::off);
  TRAINHOOK_OPTION(std::vector<std::string>, tags, {});  // WANDB_TAGS, comma-separated
  TRAINHOOK_OPTION(std::string, job_type, {});           // WANDB_JOB_TYPE
  TRAINHOOK_OPTION(std::string, run_group, {});          // WANDB_RUN_GROUP

  // Tuning (plugin_config only; seconds as numbers).
  TRAINHOOK_OPTION(std::chrono::milliseconds, transmit_interval,
                   std::chrono::milliseconds(15000));  // coalescing
  TRAINHOOK_OPTION(std::chrono::milliseconds, backoff_initial, std::chrono::milliseconds(2000));
  TRAINHOOK_OPTION(std::chrono::milliseconds, backoff_max, std::chrono::milliseconds(60000));
  TRAINHOOK_OPTION(std::chrono::milliseconds, offline_after,
                   std::chrono::milliseconds(600000));  // then spool
  TRAINHOOK_OPTION(std::chrono::milliseconds, finish_timeout,
                   std::chrono::milliseconds(120000));  // run end waits
  TRAINHOOK_OPTION(std::chrono::milliseconds, request_timeout, std::chrono::milliseconds(30000));
  TRAINHOOK_OPTION(size_t, max_request_bytes,
                   10u << 20);                       // history content per file_stream request (approx.)
  TRAINHOOK_OPTION(size_t, queue_capacity, 100000);  // records queued on the training side at most
  // Undelivered history lines kept in memory at most; older ones spill to
  // <dir>/wandb/spill-<run>-<pid>.jsonl (as mlflow's memory_records).
  TRAINHOOK_OPTION(size_t, memory_records, 500);

 public:
  // Everything. default_dir is used when WANDB_DIR is unset (the run's
  // output_dir). Throws ConfigError for unknown keys and malformed values; an
  // online run without an API key is an error that says how to fix it.
  static WandbOptions from_json(const std::string& config_json, const std::string& default_dir);
};

// The plugin_config keys, their variables, defaults and ranges, declared once.
const OptionTable<WandbOptions>& options_table();

// WANDB_MODE / wandb.mode only. Accepts online, offline, disabled (and W&B's
// older spellings run, dryrun). Throws ConfigError naming the source otherwise.
Mode read_mode(const std::string& config_json);

const char* to_string(Mode m);
const char* to_string(Resume r);

}  // namespace trainhook::wandb
