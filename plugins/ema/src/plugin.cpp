// The library's entry point: one callback, "ema".
#include <trainhook/ema/ema_callback.hpp>

TRAINHOOK_PLUGIN("ema", "1.0.0",
                 trainhook::callback<trainhook::ema::EmaCallback>(
                     "ema", "1.0.0", trainhook::Kind::callback,
                     "exponential moving average of the weights, swapped in for evaluation"))
