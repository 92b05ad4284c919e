// checkpoint.sha256: the SHA-256 of every file of a checkpoint, written when
// it is saved and checked when it is loaded, so damaged weights are an error
// naming the file rather than a silent NaN run. The format is
// sha256sum's ("<64 hex>  <name>"), so `sha256sum -c checkpoint.sha256` in the
// folder checks it too. No LibTorch here; OpenSSL's libcrypto hashes.
#pragma once

#include <trainhook/common/sha256sum.hpp>  // sha256_of_file

#include <filesystem>
#include <string>

namespace trainhook {

inline constexpr const char* kCheckpointManifestFile = "checkpoint.sha256";

// Lists every regular file under `dir` (sub-folders included, the manifest
// excluded) with its hash, written atomically as dir/checkpoint.sha256.
void write_checkpoint_manifest(const std::filesystem::path& dir);

// Checks every file the manifest lists; throws std::runtime_error naming the
// first file that is missing or whose bytes changed. A folder without a
// manifest (an older or Hugging Face checkpoint) passes: false is returned.
bool verify_checkpoint_manifest(const std::filesystem::path& dir);

// The same for one file, against the manifest of its folder (if any lists it).
bool verify_file_in_manifest(const std::filesystem::path& file);

}  // namespace trainhook
