// checkpoint.sha256: written with every checkpoint, checked on load; a
// damaged or missing file is an error naming it (256 flipped bytes
// in model.pt loaded silently).
#include <trainhook/checkpoint/checkpoint_manifest.hpp>

#include <doctest/doctest.h>
#include <temp_dir.hpp>

#include <unistd.h>
#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace trainhook;
namespace fs = std::filesystem;
using trainhook::testkit::TempDir;
using trainhook::testkit::read_file;
using trainhook::testkit::write_file;

TEST_CASE("sha256_of_file is the standard SHA-256") {
  TempDir d("th_manifest");
  write_file(d.path / "abc", "abc");
  CHECK(sha256_of_file(d.path / "abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("the manifest lists every file, sha256sum-compatible, and a clean checkpoint verifies") {
  TempDir d("th_manifest");
  write_file(d.path / "model.pt", std::string(5000, 'w'));
  write_file(d.path / "trainer_state.json", "{}\n");
  fs::create_directories(d.path / "plugin");
  write_file(d.path / "plugin" / "extra.bin", "x");
  write_checkpoint_manifest(d.path);
  const std::string text = read_file(d.path / kCheckpointManifestFile);
  CHECK(text.find("  model.pt\n") != std::string::npos);
  CHECK(text.find("  plugin/extra.bin\n") != std::string::npos);
  CHECK(text.find("  trainer_state.json\n") != std::string::npos);
  CHECK(text.find(kCheckpointManifestFile) == std::string::npos);
  CHECK(verify_checkpoint_manifest(d.path));
  CHECK(verify_file_in_manifest(d.path / "model.pt"));
  if (std::system("command -v sha256sum >/dev/null 2>&1") == 0) {
    const std::string cmd = "cd '" + d.path.string() + "' && sha256sum --quiet -c " + kCheckpointManifestFile;
    CHECK(std::system(cmd.c_str()) == 0);
  }
}

TEST_CASE("flipped bytes or a missing file are an error naming the file") {
  TempDir d("th_manifest");
  std::string weights(4096, '\0');
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<char>(i * 7);
  write_file(d.path / "model.pt", weights);
  write_file(d.path / "optimizer.pt", "opt");
  write_checkpoint_manifest(d.path);
  for (size_t i = 1000; i < 1256; ++i) weights[i] = static_cast<char>(~weights[i]);  // 256 bytes flipped
  write_file(d.path / "model.pt", weights);
  const std::string model = (d.path / "model.pt").string();
  CHECK_THROWS_WITH_AS(verify_checkpoint_manifest(d.path),
                       doctest::Contains((model + ": damaged: its SHA-256 differs").c_str()),
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(verify_file_in_manifest(d.path / "model.pt"),
                       doctest::Contains((model + ": damaged").c_str()), std::runtime_error);
  CHECK_NOTHROW(verify_file_in_manifest(d.path / "optimizer.pt"));
  fs::remove(d.path / "optimizer.pt");
  write_checkpoint_manifest(d.path);
  CHECK(verify_checkpoint_manifest(d.path));
  fs::remove(d.path / "model.pt");
  CHECK_THROWS_WITH_AS(
      verify_checkpoint_manifest(d.path),
      doctest::Contains((model + ": missing from the checkpoint (listed in checkpoint.sha256)").c_str()),
      std::runtime_error);
}

TEST_CASE("a checkpoint without a manifest (older or Hugging Face) passes, a mangled manifest does not") {
  TempDir d("th_manifest");
  write_file(d.path / "model.pt", "w");
  CHECK_FALSE(verify_checkpoint_manifest(d.path));
  CHECK_FALSE(verify_file_in_manifest(d.path / "model.pt"));
  write_file(d.path / kCheckpointManifestFile, "nonsense\n");
  CHECK_THROWS_WITH_AS(verify_checkpoint_manifest(d.path),
                       doctest::Contains("checkpoint.sha256:1: not a line of '<sha256 hex>  <file name>'"),
                       std::runtime_error);
  write_file(d.path / kCheckpointManifestFile, std::string(64, 'a') + "  ../../etc/passwd\n");
  CHECK_THROWS_WITH_AS(verify_checkpoint_manifest(d.path), doctest::Contains("leaves the checkpoint folder"),
                       std::runtime_error);
}
