#include <trainhook/support/env.hpp>
#include <trainhook/support/tls_files.hpp>

#include <trainhook/plugin.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace trainhook::support {

std::optional<TlsFile> find_tls_file(const std::optional<std::string>& config_value,
                                     const std::string& config_source,
                                     std::initializer_list<const char*> env_names, const char* what) {
  std::optional<TlsFile> found;
  if (config_value && !config_value->empty()) {
    found = TlsFile{*config_value, config_source};
  } else {
    for (const char* name : env_names) {
      if (auto v = get_env(name)) {
        found = TlsFile{*v, std::string("environment variable ") + name};
        break;
      }
    }
  }
  if (!found) return std::nullopt;
  std::ifstream in(found->path);
  if (!in) {
    throw ConfigError(found->source + ": cannot read '" + found->path + "' (" + std::strerror(errno) +
                      "); expected " + what);
  }
  return found;
}

}  // namespace trainhook::support
