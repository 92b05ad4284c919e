// The library's entry point: one callback, "reduce_lr_on_plateau".
#include <trainhook/reduce_lr_on_plateau/reduce_lr_on_plateau_callback.hpp>

TRAINHOOK_PLUGIN("reduce_lr_on_plateau", "1.0.0",
                 trainhook::callback<trainhook::reduce_lr_on_plateau::ReduceLrOnPlateauCallback>(
                     "reduce_lr_on_plateau", "1.0.0", trainhook::Kind::callback,
                     "multiplies the learning rate by `factor` when the evaluation metric plateaus"))
