// The library's entry point: one callback, "system_stats".
#include <trainhook/system_stats/system_stats_callback.hpp>

TRAINHOOK_PLUGIN("system_stats", "1.0.0",
                 trainhook::callback<trainhook::system_stats::SystemStatsCallback>(
                     "system_stats", "1.0.0", trainhook::Kind::callback,
                     "process memory and CPU, cgroup memory limit and NVIDIA GPU use in the logs"))
