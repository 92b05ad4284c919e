#include <trainhook/trainer/run_failure.hpp>

#include <trainhook/abi.h>
#include <trainhook/common/errors.hpp>
#include <trainhook/trainer/signal_guard.hpp>

#include "debug_underflow_overflow.hpp"

#include <c10/util/Exception.h>

#include <new>

namespace trainhook {
namespace {

// LibTorch's CPU allocator throws a plain c10::Error ("DefaultCPUAllocator:
// not enough memory"); its CUDA one an OutOfMemoryError ("CUDA out of memory").
bool says_out_of_memory(const std::string& what) {
  return what.find("out of memory") != std::string::npos ||
         what.find("not enough memory") != std::string::npos;
}

}  // namespace

RunFailure classify_failure(const std::exception_ptr& error) noexcept {
  RunFailure f;
  f.kind = TH_FAILURE_ERROR;
  try {
    try {
      std::rethrow_exception(error);
    } catch (const StoppedBySignal& e) {
      f.kind = TH_FAILURE_SIGNAL;
      f.signal = e.signal();
      f.message = e.what();
    } catch (const CallbackError& e) {
      f.kind = TH_FAILURE_PLUGIN;
      f.message = e.what();
    } catch (const UnderflowOverflowError& e) {
      f.kind = TH_FAILURE_NON_FINITE;
      f.message = e.what();
    } catch (const std::bad_alloc& e) {
      f.kind = TH_FAILURE_OUT_OF_MEMORY;
      f.message = std::string("out of memory: ") + e.what();
    } catch (const c10::OutOfMemoryError& e) {
      f.kind = TH_FAILURE_OUT_OF_MEMORY;
      f.message = e.what_without_backtrace();
    } catch (const c10::Error& e) {
      f.message = e.what_without_backtrace();
      if (says_out_of_memory(f.message)) f.kind = TH_FAILURE_OUT_OF_MEMORY;
    } catch (const std::exception& e) {
      f.message = e.what();
    } catch (...) {
      f.message = "unknown exception";
    }
  } catch (...) {
    // Copying a message failed (no memory left): say what is known.
    f.kind = TH_FAILURE_OUT_OF_MEMORY;
    f.message.clear();
  }
  if (f.message.empty())
    f.message = f.kind == TH_FAILURE_OUT_OF_MEMORY ? "out of memory" : "unknown exception";
  return f;
}

}  // namespace trainhook
