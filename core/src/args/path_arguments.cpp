#include <trainhook/args/path_arguments.hpp>

#include <unistd.h>
#include <cerrno>
#include <climits>
#include <optional>
#include <vector>

namespace trainhook {
namespace {

void make_absolute(std::string& path, const std::string& cwd) { path = absolute_path_against(path, cwd); }

void make_absolute(std::optional<std::string>& path, const std::string& cwd) {
  if (path) make_absolute(*path, cwd);
}

}  // namespace

std::string absolute_path_against(const std::string& path, const std::string& cwd) {
  if (path.empty() || path.front() == '/') return path;
  std::string out = cwd;
  size_t at = 0;
  while (at <= path.size()) {
    size_t end = path.find('/', at);
    if (end == std::string::npos) end = path.size();
    const std::string part = path.substr(at, end - at);
    if (!part.empty() && part != ".") {
      if (out.empty() || out.back() != '/') out += '/';
      out += part;
    }
    at = end + 1;
  }
  return out;
}

bool make_path_arguments_absolute(ParsedArguments& parsed) {
  std::vector<char> buf(PATH_MAX);
  while (::getcwd(buf.data(), buf.size()) == nullptr) {
    if (errno != ERANGE) return false;
    buf.resize(buf.size() * 2);
  }
  const std::string cwd(buf.data());
  if (cwd.empty() || cwd.front() != '/') return false;  // "(unreachable)/..." outside the root
  TrainingArguments& t = parsed.training;
  make_absolute(t.output_dir, cwd);
  if (t.resume_from_checkpoint && *t.resume_from_checkpoint != "true")
    make_absolute(t.resume_from_checkpoint, cwd);
  for (auto& dir : t.plugin_dir) make_absolute(dir, cwd);
  make_absolute(parsed.model.model_name_or_path, cwd);
  make_absolute(parsed.data.train_file, cwd);
  make_absolute(parsed.data.validation_file, cwd);
  make_absolute(parsed.data.test_file, cwd);
  return true;
}

}  // namespace trainhook
