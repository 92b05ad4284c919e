// The library's entry point: one callback, "grad_stats".
#include <trainhook/grad_stats/grad_stats_callback.hpp>

TRAINHOOK_PLUGIN("grad_stats", "1.0.0",
                 trainhook::callback<trainhook::grad_stats::GradStatsCallback>(
                     "grad_stats", "1.0.0", trainhook::Kind::callback,
                     "per-module (or per-parameter) gradient and weight L2 norms in the logs"))
