// Why a training run is ending by an error, as the callbacks hear it at
// on_exception (ABI 1.3 th_failure): the kind is read from the exception's type,
// the message is the error text the user sees.
#pragma once

#include <cstdint>
#include <exception>
#include <string>

namespace trainhook {

struct RunFailure {
  int32_t kind = 0;     // TH_FAILURE_*
  std::string message;  // what() of the exception ("unknown exception" when it has none)
  int signal = 0;       // TH_FAILURE_SIGNAL: the second signal; the process ends with 128 + it
};

// TH_FAILURE_SIGNAL for StoppedBySignal (a second SIGINT/SIGTERM);
// TH_FAILURE_PLUGIN for CallbackError (plugin_error_policy=fail, a critical
// callback); TH_FAILURE_OUT_OF_MEMORY for std::bad_alloc and LibTorch's
// OutOfMemoryError (or a LibTorch error saying it ran out of memory);
// TH_FAILURE_NON_FINITE for --debug underflow_overflow's inf/nan detection;
// TH_FAILURE_ERROR for anything else. Never throws.
RunFailure classify_failure(const std::exception_ptr& error) noexcept;

}  // namespace trainhook
