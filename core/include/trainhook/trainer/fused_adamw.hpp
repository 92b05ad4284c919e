// Compatibility: this header moved to <trainhook/optim/fused_adamw.hpp> in package
// 0.4.0 (optimizers have their own area). The old path stays for code built
// against 0.3 and goes at 1.0.
#pragma once

#include <trainhook/optim/fused_adamw.hpp>
