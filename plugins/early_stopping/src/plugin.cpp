// The library's entry point: one callback, "early_stopping".
#include <trainhook/early_stopping/early_stopping_callback.hpp>

TRAINHOOK_PLUGIN("early_stopping", "1.0.0",
                 trainhook::callback<trainhook::early_stopping::EarlyStoppingCallback>(
                     "early_stopping", "1.0.0", trainhook::Kind::callback,
                     "stops training when metric_for_best_model stops improving (HF EarlyStoppingCallback)"))
