// What the sanitizer build of the tests changes about a crashing process:
// AddressSanitizer installs its own SIGSEGV and SIGBUS handlers, which print
// its report and end the process with status 1, so a case that expects death
// by the signal sees that status instead (or cannot run at all).
#pragma once

namespace trainhook::testkit {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kUnderAddressSanitizer = true;
// How a helper process that crashed with SIGSEGV is described by the host.
inline constexpr const char* kSegvCause = "exited with status 1";
#else
inline constexpr bool kUnderAddressSanitizer = false;
inline constexpr const char* kSegvCause = "killed by SIGSEGV";
#endif

}  // namespace trainhook::testkit
