// The one definition of the plugin file-name pattern (see plugin_file_name.hpp).
#include <trainhook/plugin_host/registry/plugin_file_name.hpp>

#include <boost/dll/shared_library.hpp>

namespace trainhook {

std::string plugin_file_suffix() { return boost::dll::shared_library::suffix().string(); }

std::string plugin_file_name(const std::string& name) {
  return kPluginFilePrefix + name + plugin_file_suffix();
}

std::string plugin_name_of_file(const std::string& file_name) {
  const std::string prefix = kPluginFilePrefix;
  const std::string suffix = plugin_file_suffix();
  if (file_name.size() <= prefix.size() + suffix.size() || file_name.compare(0, prefix.size(), prefix) != 0 ||
      file_name.compare(file_name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return {};
  return file_name.substr(prefix.size(), file_name.size() - prefix.size() - suffix.size());
}

std::string plugin_file_glob() { return kPluginFilePrefix + std::string("*") + plugin_file_suffix(); }

}  // namespace trainhook
