// Every file the trainer writes goes to a temporary name beside it, is synced,
// and only then renamed over the old one: a full disk, a crash or a kill
// leaves the previous file whole (the final model.pt was once destroyed
// by a full disk). No LibTorch here.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

namespace trainhook {

// Calls write(tmp) for a temporary path in file's folder, fsyncs it and
// renames it to `file`. When write throws or any step fails, the temporary is
// removed, `file` is untouched, and std::runtime_error says
// "cannot write <file>: <reason> (<N> MB free on <folder>)".
void write_file_atomically(const std::filesystem::path& file,
                           const std::function<void(const std::filesystem::path& tmp)>& write);

// write_file_atomically with the text as the content.
void write_text_atomically(const std::filesystem::path& file, const std::string& text);

// " (12.5 MB free on /out)", or "" when the free space cannot be read.
std::string free_space_note(const std::filesystem::path& folder);

}  // namespace trainhook
