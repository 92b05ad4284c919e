#include "helper_executable.hpp"

#include <trainhook/common/errors.hpp>
#include <trainhook/strings.hpp>

#include <boost/dll/runtime_symbol_info.hpp>

#include <unistd.h>
#include <cstdlib>
#include <vector>

#ifndef TRAINHOOK_LIBEXEC_FROM_LIBDIR
#define TRAINHOOK_LIBEXEC_FROM_LIBDIR "../libexec/trainhook"
#endif

namespace trainhook::detail {
namespace fs = std::filesystem;

fs::path helper_executable(const std::string& name) {
  std::vector<fs::path> tried;
  if (const char* env = std::getenv("TRAINHOOK_LIBEXEC_DIR"); env != nullptr && *env != '\0')
    tried.push_back(fs::path(env) / name);
  std::error_code ec;
  // This function's own library: libtrainhook_base.so in the install's libdir.
  const fs::path lib_dir = boost::dll::this_line_location(ec).parent_path();
  if (!ec) tried.push_back((lib_dir / TRAINHOOK_LIBEXEC_FROM_LIBDIR / name).lexically_normal());
#ifdef TRAINHOOK_BUILD_LIBEXEC_DIR
  tried.push_back(fs::path(TRAINHOOK_BUILD_LIBEXEC_DIR) / name);
#endif
  for (const auto& p : tried)
    if (::access(p.c_str(), X_OK) == 0) return p;
  std::vector<std::string> shown;
  for (const auto& p : tried) shown.push_back(p.string());
  throw PluginError("the helper program " + name + " was not found (tried: " + strings::join(shown) +
                    "); it is installed with the trainhook library; set TRAINHOOK_LIBEXEC_DIR to its folder");
}

}  // namespace trainhook::detail
