#include <trainhook/common/package_version.hpp>

namespace trainhook {

const char* package_version() noexcept { return TRAINHOOK_VERSION; }

}  // namespace trainhook
