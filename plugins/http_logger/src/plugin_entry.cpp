// The library's one exported symbol (trainhook_plugin_v1). Written by hand
// rather than with TRAINHOOK_PLUGIN(...) because this library also exports a
// CLI command (th_command_info "wandb-sync"), which that macro does not list.
#include <http_logger/sync_command.hpp>
#include <http_logger/wandb_callback.hpp>

#include <trainhook/plugin.hpp>

extern "C" TRAINHOOK_EXPORT th_status trainhook_plugin_v1(const th_host_info* host,
                                                          const th_plugin_info** out, char* err,
                                                          size_t err_size) {
  static const th_callback_info callbacks[] = {trainhook::callback<trainhook::wandb::WandbCallback>(
      "wandb", "1.0.0", trainhook::Kind::integration,
      "W&B-style HTTP run logging: streamed, idempotent offsets, offline spool (WANDB_* variables)")};
  static const th_command_info commands[] = {
      {sizeof(th_command_info), "wandb-sync",
       "upload offline wandb runs (wandb/offline-run-*) with their original offsets",
       &trainhook::wandb::sync_command_entry}};
  static const th_plugin_info info = {sizeof(th_plugin_info),
                                      TRAINHOOK_ABI_VERSION_MAJOR,
                                      TRAINHOOK_ABI_VERSION_MINOR,
                                      "wandb",
                                      "1.0.0",
                                      1,
                                      callbacks,
                                      1,
                                      commands};
  return trainhook::detail::negotiate(host, &info, out, err, err_size);
}
