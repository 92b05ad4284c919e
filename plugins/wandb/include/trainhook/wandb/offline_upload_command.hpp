// `trainhook wandb-sync [options] <dir>...` (the offline upload): uploads offline runs written by the
// wandb callback (WANDB_MODE=offline, or an unreachable server) with the same
// offsets they would have had online, so the server ends up with exactly the
// history an online run would have produced. Re-running it is safe: it
// continues from sync.json, and resending a line is idempotent anyway.
//
// <dir> is an offline-run-* folder, or a folder holding them (e.g. the
// wandb/ folder, or WANDB_DIR itself); each is synced in name order.
#pragma once

#include <trainhook/abi.h>
#include <trainhook/plugin.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace trainhook::wandb {

// Returns the process exit code: 0 all delivered, 1 something was not, 2 usage.
// Throws ConfigError for bad arguments or settings.
int run_offline_upload(const trainhook::Host& host, const std::vector<std::string>& args);

}  // namespace trainhook::wandb
