// The path arguments made absolute at start (a plugin's chdir() cannot move
// the run's files): what is resolved, against what, and what is left alone.
#include <doctest/doctest.h>
#include <trainhook/args/path_arguments.hpp>

#include <unistd.h>
#include <climits>
#include <string>

using trainhook::absolute_path_against;

TEST_CASE("absolute_path_against joins a relative path to the folder, dropping '.' and trailing slashes") {
  CHECK(absolute_path_against("out", "/base") == "/base/out");
  CHECK(absolute_path_against("./out/", "/base") == "/base/out");
  CHECK(absolute_path_against("a//b/./c", "/base/") == "/base/a/b/c");
  CHECK(absolute_path_against(".", "/base") == "/base");
  CHECK(absolute_path_against("../data/*.bin", "/base/run") ==
        "/base/run/../data/*.bin");  // '..' is the FS's
  CHECK(absolute_path_against("x", "/") == "/x");
}

TEST_CASE("absolute_path_against leaves absolute and empty paths as they are") {
  CHECK(absolute_path_against("/data/train.csv", "/base") == "/data/train.csv");
  CHECK(absolute_path_against("", "/base") == "");
}

TEST_CASE("make_path_arguments_absolute resolves every path argument against the working directory") {
  char buf[PATH_MAX];
  REQUIRE(::getcwd(buf, sizeof buf) != nullptr);
  const std::string cwd(buf);
  trainhook::ParsedArguments p;
  p.training.output_dir = "out";
  p.training.run_name = "out";
  p.training.resume_from_checkpoint = "out/checkpoint-4";
  p.training.plugin_dir = {"plugins", "/opt/plugins"};
  p.model.model_name_or_path = "model.pt";
  p.data.train_file = "data/train.csv";
  p.data.validation_file = "/data/val.csv";
  p.data.test_file = "shards/*.bin";
  REQUIRE(trainhook::make_path_arguments_absolute(p));
  CHECK(p.training.output_dir == cwd + "/out");
  CHECK(p.training.run_name == "out");  // what loggers show, as the user spelt it
  CHECK(p.training.resume_from_checkpoint == cwd + "/out/checkpoint-4");
  CHECK(p.training.plugin_dir == std::vector<std::string>{cwd + "/plugins", "/opt/plugins"});
  CHECK(p.model.model_name_or_path == cwd + "/model.pt");
  CHECK(p.data.train_file == cwd + "/data/train.csv");
  CHECK(p.data.validation_file == "/data/val.csv");
  CHECK(p.data.test_file == cwd + "/shards/*.bin");
}

TEST_CASE("make_path_arguments_absolute keeps resume_from_checkpoint true and unset paths unset") {
  trainhook::ParsedArguments p;
  p.training.resume_from_checkpoint = "true";
  REQUIRE(trainhook::make_path_arguments_absolute(p));
  CHECK(p.training.resume_from_checkpoint == "true");
  CHECK_FALSE(p.model.model_name_or_path);
  CHECK_FALSE(p.data.train_file);
  CHECK(p.training.output_dir.front() == '/');  // the default trainer_output too
}
