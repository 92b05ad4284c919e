// The trainhook package's version ("0.8.0"): what `trainhook version` prints,
// the host version plugins see (th_host_info) and part of the registry cache's
// key. Compiled into one file alone (common/package_version.cpp), so a version
// bump recompiles that file and nothing else.
#pragma once

namespace trainhook {

const char* package_version() noexcept;

}  // namespace trainhook
