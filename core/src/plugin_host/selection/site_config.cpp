// The site file (trainhook/plugin_host/selection/site_config.hpp).
#include <trainhook/plugin_host/selection/site_config.hpp>

#include "../registry/plugin_file_checks.hpp"

#include <trainhook/common/errors.hpp>

#include <boost/dll/runtime_symbol_info.hpp>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace trainhook {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void bad(const fs::path& file, const std::string& what) {
  throw ArgumentError("site file " + file.string() + ": " + what);
}

// A folder or file named by the site file: relative to the file's own folder.
fs::path resolve(const fs::path& file, const std::string& value) {
  const fs::path p(value);
  return (p.is_absolute() ? p : fs::absolute(file).parent_path() / p).lexically_normal();
}

std::string path_value(const fs::path& file, const std::string& key, const nlohmann::json& v) {
  if (!v.is_string() || v.get<std::string>().empty())
    bad(file, "key '" + key + "': expected a non-empty path string, got " + v.dump());
  return v.get<std::string>();
}

}  // namespace

fs::path default_site_config_path() {
  std::error_code ec;
  const fs::path bin = boost::dll::program_location(ec).parent_path();
  const fs::path prefix = ec ? fs::path("..") : bin / "..";
  return (prefix / "etc" / "trainhook" / "site.json").lexically_normal();
}

SiteConfig read_site_config(const fs::path& file) {
  std::ifstream in(file);
  std::error_code ec;
  if (!in || fs::is_directory(file, ec)) bad(file, "cannot be read (expected a JSON file)");
  // It decides which plugins run in the trainer's process: used only when
  // nobody but you and root can change it (the rule plugin paths follow).
  if (const std::string why = detail::unsafe_path_reason(file); !why.empty())
    bad(file,
        "refused: " + why + "; whoever can change it decides which plugins run in the trainer's process");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range (a number too large)
    bad(file, std::string("not valid JSON (") + e.what() + ")");
  }
  if (!j.is_object()) bad(file, "expected a JSON object of settings, got " + j.dump());

  SiteConfig site;
  site.file = file;
  for (const auto& [key, v] : j.items()) {
    if (key == "plugin_isolation") {
      if (!v.is_string() || (v != "auto" && v != "none"))
        bad(file, "key 'plugin_isolation': expected \"auto\" or \"none\", got " + v.dump());
      site.plugin_isolation = v.get<std::string>();
    } else if (key == "trusted_plugin_dirs") {
      if (!v.is_array())
        bad(file, "key 'trusted_plugin_dirs': expected an array of folder paths, got " + v.dump());
      for (const auto& d : v) site.trusted_plugin_dirs.push_back(resolve(file, path_value(file, key, d)));
    } else if (key == "plugin_lock") {
      site.plugin_lock = resolve(file, path_value(file, key, v));
    } else {
      bad(file, "unknown key '" + key + "' (expected plugin_isolation, trusted_plugin_dirs, plugin_lock)");
    }
  }
  return site;
}

SiteConfig load_site_config() {
  if (const char* env = std::getenv(kSiteConfigEnv); env != nullptr && *env != '\0') {
    std::error_code ec;
    if (!fs::exists(env, ec))
      throw ArgumentError(std::string(kSiteConfigEnv) + "=" + env +
                          ": no such file (expected a site JSON file)");
    return read_site_config(env);
  }
  const fs::path file = default_site_config_path();
  std::error_code ec;
  return fs::exists(file, ec) ? read_site_config(file) : SiteConfig{};
}

}  // namespace trainhook
