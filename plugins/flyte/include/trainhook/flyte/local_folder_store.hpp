// Store on a local or mounted folder (file:///path or a plain path). Objects are
// written to a temporary sibling and renamed, so a reader never sees half a file.
#pragma once

#include <trainhook/flyte/store.hpp>

namespace trainhook::flyte {

class LocalFolderStore final : public Store {
 public:
  explicit LocalFolderStore(std::filesystem::path root);
  std::string describe() const override { return root_.string(); }
  std::vector<ObjectInfo> list(const std::string& key_prefix) override;
  void put_file(const std::filesystem::path& file, const std::string& key) override;
  void get_file(const std::string& key, const std::filesystem::path& file) override;

 private:
  std::filesystem::path root_;
};

// Temporary files this store (and the restore) write end with this suffix;
// list() never reports them.
inline constexpr const char* kTempSuffix = ".trainhook-partial";

}  // namespace trainhook::flyte
