#include <trainhook/flyte/location.hpp>

#include <doctest/doctest.h>

#include <stdexcept>

using namespace trainhook::flyte;

TEST_CASE("location: Flyte's unset values") {
  CHECK(is_unset_location(""));
  CHECK(is_unset_location("   "));
  CHECK(is_unset_location("\"\""));
  CHECK(is_unset_location("''"));
  CHECK(is_unset_location("{{ .checkpointOutputPrefix }}"));
  CHECK(is_unset_location("s3://bucket/{{.prevCheckpointPrefix}}"));
  CHECK_FALSE(is_unset_location("s3://bucket/run"));
  CHECK_FALSE(is_unset_location("/tmp/{not-a-template}"));
  CHECK_FALSE(parse_location("{{ .prevCheckpointPrefix }}", "k").has_value());
}

TEST_CASE("location: s3, file:// and plain paths") {
  auto s3 = parse_location("  s3://my-bucket/a/b/  ", "k");
  REQUIRE(s3);
  CHECK(s3->kind == Location::Kind::s3);
  CHECK(s3->bucket == "my-bucket");
  CHECK(s3->prefix == "a/b");
  CHECK(s3->display() == "s3://my-bucket/a/b");
  auto root = parse_location("s3://b", "k");
  CHECK(root->prefix.empty());
  auto file = parse_location("file:///data/ckpt", "k");
  CHECK(file->kind == Location::Kind::local);
  CHECK(file->path == "/data/ckpt");
  CHECK(parse_location("relative/dir", "k")->path == "relative/dir");
}

TEST_CASE("location: malformed values name their source") {
  CHECK_THROWS_WITH_AS(parse_location("s3:///x", "TRAINHOOK_CHECKPOINT_DEST"),
                       doctest::Contains("TRAINHOOK_CHECKPOINT_DEST"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_location("gs://b/x", "plugin_config flyte.checkpoint_path"),
                       doctest::Contains("unsupported scheme 'gs://'"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_location("file://relative", "k"), doctest::Contains("absolute path"),
                       std::invalid_argument);
}
