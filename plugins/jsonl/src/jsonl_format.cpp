#include <trainhook/jsonl/jsonl_format.hpp>

namespace trainhook::jsonl {

std::string jsonl_line(const nlohmann::json& entry) {
  // Invalid UTF-8 in a string value is replaced, never a reason to lose the line.
  return entry.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void JsonlFormat::reset(const std::filesystem::path& file, const nlohmann::json& entries) {
  std::string text;
  for (const nlohmann::json& e : entries) text += jsonl_line(e) + "\n";
  out_.close();  // the rename below replaces the file the old descriptor points at
  support::write_file_atomically(file, text);
}

void JsonlFormat::append(const std::filesystem::path& file, const nlohmann::json& entry) {
  if (!out_.is_open()) out_ = support::AppendFile(file);
  out_.write_line(jsonl_line(entry));
}

}  // namespace trainhook::jsonl
