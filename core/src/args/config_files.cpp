// Reading --config files (JSON / YAML) and args files of flags.
#include "config_files.hpp"

#include "yaml_config.hpp"

#include <trainhook/common/errors.hpp>
#include <trainhook/common/checked_json.hpp>
#include <trainhook/strings.hpp>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace trainhook::detail {
namespace {

std::string read_text(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ArgumentError(std::string(what) + ": cannot read '" + path + "': " + std::strerror(errno));
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

std::string extension(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return {};
  return strings::lower(path.substr(dot));
}

}  // namespace

std::string ConfigFile::where(const std::string& key) const {
  const auto it = key_lines.find(key);
  return it == key_lines.end() ? path : path + ":" + std::to_string(it->second);
}

ConfigFile read_config_file(const std::string& path) {
  ConfigFile file;
  file.path = path;
  const std::string ext = extension(path);
  if (ext != ".json" && ext != ".yaml" && ext != ".yml")
    throw ArgumentError("--config '" + path + "': expected a .json, .yaml or .yml file");
  const std::string text = read_text(path, "--config");
  if (ext == ".json") {
    try {
      // Duplicate keys and runaway nesting are errors (checked_json.hpp).
      file.values = parse_checked_json(text, path);
    } catch (const JsonInputError& e) {
      throw ArgumentError(e.what());
    }
    if (!file.values.is_object())
      throw ArgumentError(path + ": expected a JSON object of {\"name\": value}, got a " +
                          std::string(file.values.type_name()));
  } else {
    YamlDocument doc = parse_yaml_config(text, path);
    file.values = std::move(doc.root);
    file.key_lines = std::move(doc.key_lines);
  }
  return file;
}

std::vector<ArgsFileToken> read_args_file(const std::string& path) {
  const std::string text = read_text(path, "args file");
  std::vector<ArgsFileToken> tokens;
  int line = 1;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      ++i;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    ArgsFileToken token{{}, line};
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) {
      const char d = text[i];
      if (d == '"' || d == '\'') {
        const size_t close = text.find(d, i + 1);
        if (close == std::string::npos)
          throw ArgumentError(path + ":" + std::to_string(token.line) + ": unterminated " +
                              (d == '"' ? "double" : "single") + " quote");
        for (size_t k = i + 1; k < close; ++k)
          if (text[k] == '\n') ++line;
        token.text += text.substr(i + 1, close - i - 1);
        i = close + 1;
      } else {
        token.text += d;
        ++i;
      }
    }
    tokens.push_back(std::move(token));
  }
  return tokens;
}

}  // namespace trainhook::detail
