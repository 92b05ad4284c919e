#include <trainhook/flyte/manifest.hpp>
#include <trainhook/support/sha256.hpp>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <system_error>

namespace trainhook::flyte {
namespace fs = std::filesystem;

namespace {
constexpr const char* kFormat = "trainhook-checkpoint-manifest";
constexpr int kVersion = 1;
}  // namespace

std::optional<int64_t> checkpoint_step(const std::string& name) {
  const std::string p = "checkpoint-";
  if (name.size() <= p.size() || name.compare(0, p.size(), p) != 0 || name.size() > p.size() + 18)
    return std::nullopt;
  int64_t step = 0;
  for (size_t i = p.size(); i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    step = step * 10 + (name[i] - '0');
  }
  return step;
}

Manifest Manifest::build(const fs::path& dir, const std::string& checkpoint_name) {
  Manifest m;
  m.checkpoint = checkpoint_name;
  m.step = checkpoint_step(checkpoint_name).value_or(-1);
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, ec), end;
  if (ec) throw std::runtime_error("cannot read checkpoint folder '" + dir.string() + "': " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) throw std::runtime_error("cannot read checkpoint folder '" + dir.string() + "': " + ec.message());
    if (!it->is_regular_file()) continue;
    const std::string rel = it->path().lexically_relative(dir).generic_string();
    if (rel == kManifestName) continue;
    m.files.push_back({rel, static_cast<uint64_t>(it->file_size()), support::sha256_file_hex(it->path())});
  }
  std::sort(m.files.begin(), m.files.end(), [](auto& a, auto& b) { return a.path < b.path; });
  return m;
}

std::string Manifest::to_json() const {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : this->files)
    files.push_back({{"path", f.path}, {"size", f.size}, {"sha256", f.sha256}});
  nlohmann::json j = {{"format", kFormat},
                      {"version", kVersion},
                      {"checkpoint", checkpoint},
                      {"step", step},
                      {"files", files}};
  return j.dump(2) + "\n";
}

Manifest Manifest::parse(const std::string& json_text, const std::string& source) {
  auto fail = [&](const std::string& why) { throw std::invalid_argument("manifest " + source + ": " + why); };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text);
  } catch (const std::exception& e) {
    fail(std::string("not valid JSON (") + e.what() + ")");
  }
  if (!j.is_object() || j.value("format", "") != kFormat)
    fail(std::string("\"format\" is not \"") + kFormat + "\"");
  if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<int>() != kVersion)
    fail("\"version\" must be 1");
  Manifest m;
  if (!j.contains("checkpoint") || !j["checkpoint"].is_string()) fail("\"checkpoint\" must be a string");
  m.checkpoint = j["checkpoint"].get<std::string>();
  if (!j.contains("step") || !j["step"].is_number_integer()) fail("\"step\" must be an integer");
  m.step = j["step"].get<int64_t>();
  if (!j.contains("files") || !j["files"].is_array()) fail("\"files\" must be an array");
  for (const auto& f : j["files"]) {
    if (!f.is_object() || !f.contains("path") || !f["path"].is_string() || !f.contains("size") ||
        !f["size"].is_number_unsigned() || !f.contains("sha256") || !f["sha256"].is_string())
      fail("every entry of \"files\" needs \"path\" (string), \"size\" (unsigned) and \"sha256\" (string)");
    ManifestEntry e{f["path"].get<std::string>(), f["size"].get<uint64_t>(), f["sha256"].get<std::string>()};
    // Paths come from a store we do not control: refuse ones that escape the folder.
    if (e.path.empty() || e.path.front() == '/' || ("/" + e.path + "/").find("/../") != std::string::npos)
      fail("file path '" + e.path + "' is not a relative path inside the checkpoint");
    if (e.sha256.size() != 64) fail("sha256 of '" + e.path + "' is not 64 hex digits");
    m.files.push_back(std::move(e));
  }
  return m;
}

uint64_t Manifest::total_bytes() const {
  uint64_t n = 0;
  for (const auto& f : files) n += f.size;
  return n;
}

std::optional<std::string> Manifest::verify(const fs::path& dir) const {
  for (const auto& f : files) {
    const fs::path p = dir / f.path;
    std::error_code ec;
    const auto size = fs::file_size(p, ec);
    if (ec) return "'" + f.path + "' is missing";
    if (size != f.size)
      return "'" + f.path + "' has " + std::to_string(size) + " bytes, the manifest says " +
             std::to_string(f.size);
    std::string hash;
    try {
      hash = support::sha256_file_hex(p);
    } catch (const std::exception& e) {
      return e.what();
    }
    if (hash != f.sha256) return "'" + f.path + "' does not match its SHA-256 in the manifest";
  }
  return std::nullopt;
}

}  // namespace trainhook::flyte
