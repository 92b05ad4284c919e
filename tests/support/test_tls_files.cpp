// support::find_tls_file: the plugin_config key first, then the variables in
// order; an unreadable file is an error naming where the path came from.
#include <trainhook/plugin.hpp>
#include <trainhook/support/tls_files.hpp>

#include <doctest/doctest.h>
#include <temp_dir.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;
using trainhook::support::find_tls_file;
using trainhook::testkit::TempDir;

namespace {
struct EnvVar {
  const char* name;
  EnvVar(const char* n, const std::string& value) : name(n) { ::setenv(n, value.c_str(), 1); }
  ~EnvVar() { ::unsetenv(name); }
};
std::string pem_file(const TempDir& dir, const std::string& name) {
  const fs::path p = dir.path / name;
  std::ofstream(p) << "-----BEGIN CERTIFICATE-----\n";
  return p.string();
}
}  // namespace

TEST_CASE("the plugin_config key wins over the variables") {
  const TempDir tmp("trainhook_tls");
  const std::string key_file = pem_file(tmp, "key.pem"), env_file = pem_file(tmp, "env.pem");
  EnvVar env("TRAINHOOK_TEST_CA_A", env_file);
  auto f = find_tls_file(key_file, "plugin_config x.ca_bundle", {"TRAINHOOK_TEST_CA_A"}, "a PEM bundle");
  REQUIRE(f);
  CHECK(f->path == key_file);
  CHECK(f->source == "plugin_config x.ca_bundle");
  f = find_tls_file(std::nullopt, "plugin_config x.ca_bundle", {"TRAINHOOK_TEST_CA_A"}, "a PEM bundle");
  REQUIRE(f);
  CHECK(f->path == env_file);
  CHECK(f->source == "environment variable TRAINHOOK_TEST_CA_A");
}

TEST_CASE("the variables are read in order and unset ones are skipped") {
  const TempDir tmp("trainhook_tls");
  const std::string second = pem_file(tmp, "second.pem");
  ::unsetenv("TRAINHOOK_TEST_CA_FIRST");
  EnvVar env("TRAINHOOK_TEST_CA_SECOND", second);
  auto f = find_tls_file(std::nullopt, "k", {"TRAINHOOK_TEST_CA_FIRST", "TRAINHOOK_TEST_CA_SECOND"}, "x");
  REQUIRE(f);
  CHECK(f->source == "environment variable TRAINHOOK_TEST_CA_SECOND");
  CHECK_FALSE(find_tls_file(std::nullopt, "k", {"TRAINHOOK_TEST_CA_FIRST"}, "x"));
  CHECK_FALSE(find_tls_file(std::string(), "k", {}, "x"));  // an empty key is unset
}

TEST_CASE("an unreadable file names where the path came from and what was expected") {
  EnvVar env("TRAINHOOK_TEST_CA_MISSING", "/nonexistent/ca.pem");
  try {
    find_tls_file(std::nullopt, "k", {"TRAINHOOK_TEST_CA_MISSING"}, "a PEM bundle of certificate authorities");
    FAIL("no error");
  } catch (const trainhook::ConfigError& e) {
    const std::string m = e.what();
    CHECK_MESSAGE(m.find("environment variable TRAINHOOK_TEST_CA_MISSING") != std::string::npos, m);
    CHECK_MESSAGE(m.find("'/nonexistent/ca.pem'") != std::string::npos, m);
    CHECK_MESSAGE(m.find("expected a PEM bundle of certificate authorities") != std::string::npos, m);
  }
}
