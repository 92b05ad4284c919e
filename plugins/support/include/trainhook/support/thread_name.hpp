// Names the calling thread, so that top, perf and gdb tell the plugins'
// threads apart (th-mlflow, th-progress, ...). Linux keeps 15 bytes of a name;
// naming is for diagnostics only, so a failure is ignored.
#pragma once

#include <pthread.h>

#include <string>

namespace trainhook::support {

inline void name_this_thread(const std::string& name) {
  (void)::pthread_setname_np(::pthread_self(), name.substr(0, 15).c_str());
}

}  // namespace trainhook::support
