// The gradient-reduction choice under its distributed/ name. The enum is a
// training argument (--ddp_gradient_reduction) and lives with the other
// choices in args/strategies.hpp; this name stays for code that includes it.
#pragma once

#include <trainhook/args/strategies.hpp>

namespace trainhook::distributed {

using GradientReduction = trainhook::GradientReduction;

}  // namespace trainhook::distributed
