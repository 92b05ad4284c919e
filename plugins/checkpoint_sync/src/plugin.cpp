// The library's entry point: one integration callback, "flyte".
#include <checkpoint_sync/flyte_callback.hpp>

TRAINHOOK_PLUGIN(
    "checkpoint_sync", "1.0.0",
    trainhook::callback<trainhook::checkpoint_sync::FlyteCallback>(
        "flyte", "1.0.0", trainhook::Kind::integration,
        "Flyte-style checkpoints: restore the previous attempt, upload each save, log-history deck"))
