// The library's entry point: one callback, "nan_guard".
#include <trainhook/nan_guard/nan_guard_callback.hpp>

TRAINHOOK_PLUGIN("nan_guard", "1.0.0",
                 trainhook::callback<trainhook::nan_guard::NanGuardCallback>(
                     "nan_guard", "1.0.0", trainhook::Kind::callback,
                     "stops (or skips) steps whose loss or gradients are not finite"))
