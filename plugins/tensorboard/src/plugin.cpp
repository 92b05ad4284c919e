// The library's one exported symbol (trainhook_plugin_v1).
#include <trainhook/tensorboard/tensorboard_callback.hpp>

TRAINHOOK_PLUGIN("tensorboard", "1.0.0",
                 trainhook::callback<trainhook::tensorboard::TensorBoardCallback>(
                     "tensorboard", "1.0.0", trainhook::Kind::integration,
                     "TensorBoard event files: scalars, texts and hparams under output_dir/runs"))
