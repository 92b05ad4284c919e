// Compatibility: this header moved to <trainhook/checkpoint/checkpoint_manifest.hpp> in
// package 0.4.0 (checkpoint files have their own area). The old path stays
// for code built against 0.3 and goes at 1.0.
#pragma once

#include <trainhook/checkpoint/checkpoint_manifest.hpp>
