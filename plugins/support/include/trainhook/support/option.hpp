// TRAINHOOK_OPTION lives in the SDK (trainhook/options.hpp) with the option
// table that parses plugin_config sections; this path forwards to it.
#pragma once

#include <trainhook/options.hpp>
