// The library's entry point: one integration callback, "flyte".
#include <trainhook/flyte/flyte_callback.hpp>

TRAINHOOK_PLUGIN(
    "flyte", "1.0.0",
    trainhook::callback<trainhook::flyte::FlyteCallback>(
        "flyte", "1.0.0", trainhook::Kind::integration,
        "Flyte-style checkpoints: restore the previous attempt, upload each save, log-history deck"))
