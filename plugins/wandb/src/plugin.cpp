// The library's one exported symbol, through the SDK's macros like every
// first-party plugin: the "wandb" callback and the "wandb-sync" CLI command.
#include <trainhook/wandb/offline_upload_command.hpp>
#include <trainhook/wandb/wandb_callback.hpp>

#include <trainhook/plugin.hpp>

TRAINHOOK_COMMANDS(trainhook::command<&trainhook::wandb::run_offline_upload>(
    "wandb-sync", "upload offline wandb runs (wandb/offline-run-*) with their original offsets"))

TRAINHOOK_PLUGIN(
    "wandb", "1.0.0",
    trainhook::callback<trainhook::wandb::WandbCallback>(
        "wandb", "1.0.0", trainhook::Kind::integration,
        "W&B-style HTTP run logging: streamed, idempotent offsets, offline spool (WANDB_* variables)"))
