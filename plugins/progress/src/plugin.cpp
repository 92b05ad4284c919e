// The library's entry point: "progress" (enabled by default by the trainer) and
// "printer" (enabled instead when disable_tqdm is set).
#include <trainhook/progress/printer_callback.hpp>
#include <trainhook/progress/progress_callback.hpp>

TRAINHOOK_PLUGIN("progress", "1.0.0",
                 trainhook::callback<trainhook::progress::ProgressCallback>(
                     "progress", "1.0.0", trainhook::Kind::callback,
                     "tqdm-like training and evaluation progress bars; prints logs above them"),
                 trainhook::callback<trainhook::progress::PrinterCallback>(
                     "printer", "1.0.0", trainhook::Kind::callback,
                     "prints each logs dict on its own line (used when disable_tqdm is set)"))
