// The library's entry point: one callback, "throughput".
#include <trainhook/throughput/throughput_callback.hpp>

TRAINHOOK_PLUGIN(
    "throughput", "1.0.0",
    trainhook::callback<trainhook::throughput::ThroughputCallback>(
        "throughput", "1.0.0", trainhook::Kind::callback,
        "batches, samples, tokens and FLOPs per second over a window of steps (Composer's names)"))
