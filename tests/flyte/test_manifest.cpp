#include "test_files.hpp"

#include <trainhook/flyte/manifest.hpp>
#include <trainhook/support/sha256.hpp>

#include <doctest/doctest.h>

using namespace trainhook::flyte;
using trainhook::support::sha256_hex;

TEST_CASE("manifest: checkpoint names") {
  CHECK(checkpoint_step("checkpoint-120") == 120);
  CHECK(checkpoint_step("checkpoint-0") == 0);
  CHECK_FALSE(checkpoint_step("checkpoint-"));
  CHECK_FALSE(checkpoint_step("checkpoint-12a"));
  CHECK_FALSE(checkpoint_step("log_history.html"));
}

TEST_CASE("manifest: build, round trip and verify") {
  flyte_test::TempDir tmp("th_flyte_manifest");
  const auto dir = flyte_test::make_checkpoint(tmp.path, 7);
  flyte_test::write_file(dir / kManifestName, "ignored");  // the manifest never lists itself
  const Manifest m = Manifest::build(dir, "checkpoint-7");
  CHECK(m.step == 7);
  REQUIRE(m.files.size() == 3);
  CHECK(m.files[0].path == "model.pt");
  CHECK(m.files[1].path == "optimizer/state.bin");
  CHECK(m.files[0].size == 1007);
  CHECK(m.files[1].sha256 == sha256_hex("opt-7"));
  CHECK(m.total_bytes() == 1007 + 5 + flyte_test::read_file(dir / "trainer_state.json").size());

  const Manifest back = Manifest::parse(m.to_json(), "x");
  CHECK(back.to_json() == m.to_json());
  CHECK_FALSE(back.verify(dir).has_value());

  flyte_test::write_file(dir / "optimizer" / "state.bin", "opt-8");  // same size, other bytes
  auto problem = back.verify(dir);
  REQUIRE(problem);
  CHECK(problem->find("optimizer/state.bin") != std::string::npos);
  CHECK(problem->find("SHA-256") != std::string::npos);
  std::filesystem::remove(dir / "model.pt");
  CHECK(back.verify(dir)->find("'model.pt' is missing") != std::string::npos);
}

TEST_CASE("manifest: malformed manifests are refused with the field named") {
  CHECK_THROWS_WITH(Manifest::parse("{", "s3://b/checkpoint-1/m"),
                    doctest::Contains("s3://b/checkpoint-1/m"));
  CHECK_THROWS_WITH(Manifest::parse("{\"format\":\"other\"}", "m"), doctest::Contains("\"format\""));
  const std::string head =
      "{\"format\":\"trainhook-checkpoint-manifest\",\"version\":1,\"checkpoint\":\"c\",\"step\":1,";
  CHECK_THROWS_WITH(Manifest::parse(head + "\"files\":[{\"path\":\"../x\",\"size\":1,\"sha256\":\"" +
                                        std::string(64, 'a') + "\"}]}",
                                    "m"),
                    doctest::Contains("not a relative path"));
  CHECK_THROWS_WITH(Manifest::parse(head + "\"files\":[{\"path\":\"x\",\"size\":-1,\"sha256\":\"a\"}]}", "m"),
                    doctest::Contains("\"size\" (unsigned)"));
}
