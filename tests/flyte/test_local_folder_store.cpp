#include "test_files.hpp"

#include <trainhook/flyte/local_folder_store.hpp>

#include <doctest/doctest.h>

#include <algorithm>

using namespace trainhook::flyte;
namespace fs = std::filesystem;

TEST_CASE("local folder store: round trip, listing, no temporary files left") {
  flyte_test::TempDir tmp("th_flyte_local");
  flyte_test::write_file(tmp.path / "src" / "a.bin", std::string(5000, 'x'));
  LocalFolderStore store(tmp.path / "store" / "prefix");
  CHECK(store.list("").empty());  // a missing root is an empty store
  store.put_file(tmp.path / "src" / "a.bin", "checkpoint-1/sub/a.bin");
  store.put_file(tmp.path / "src" / "a.bin", "other.bin");
  auto listed = store.list("checkpoint-");
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].key == "checkpoint-1/sub/a.bin");
  CHECK(listed[0].size == 5000);
  CHECK(store.list("").size() == 2);
  store.get_file("checkpoint-1/sub/a.bin", tmp.path / "back" / "a.bin");
  CHECK(flyte_test::read_file(tmp.path / "back" / "a.bin") == std::string(5000, 'x'));
  for (auto& e : fs::recursive_directory_iterator(tmp.path))
    CHECK(e.path().string().find(kTempSuffix) == std::string::npos);
}

TEST_CASE("local folder store: errors say whether a retry can help") {
  flyte_test::TempDir tmp("th_flyte_local_err");
  LocalFolderStore store(tmp.path / "store");
  try {
    store.put_file(tmp.path / "missing.bin", "k");
    FAIL("expected StoreError");
  } catch (const StoreError& e) {
    CHECK_FALSE(e.retryable());
  }
  try {
    store.get_file("nothing", tmp.path / "out");
    FAIL("expected StoreError");
  } catch (const StoreError& e) {
    CHECK_FALSE(e.retryable());
  }
  // A folder that cannot be created (a file is in the way, as with an unmounted
  // or read-only volume; works as root too) is a retryable failure.
  flyte_test::write_file(tmp.path / "f", "data");
  flyte_test::write_file(tmp.path / "store", "not a folder");
  try {
    store.put_file(tmp.path / "f", "sub/k");
    FAIL("expected StoreError");
  } catch (const StoreError& e) {
    CHECK(e.retryable());
  }
  fs::remove(tmp.path / "store");
  store.put_file(tmp.path / "f", "sub/k");
  CHECK(flyte_test::read_file(tmp.path / "store" / "sub" / "k") == "data");
}
