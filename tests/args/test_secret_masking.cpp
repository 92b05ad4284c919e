// The core's masking of credentials in arguments (what training_args.json and
// every plugin's training_args_json carry), after HF's TrainingArguments.to_dict.
#include <doctest/doctest.h>
#include <trainhook/args/secret_masking.hpp>
#include <trainhook/args/arguments_json.hpp>
#include <trainhook/secret_keys.hpp>

using nlohmann::json;

TEST_CASE("mask_secrets replaces every credential value at any depth with <KEY>") {
  const json in = json::parse(R"({
    "learning_rate": 0.001, "hub_token": "hf_x", "report_to": ["wandb"],
    "plugin_config": {"wandb": {"api_key": "SECRET1", "project": "p"},
                      "s3": {"aws_access_key_id": "AKIA", "aws_secret_access_key": "SECRET2",
                             "aws_session_token": "SECRET3", "endpoint": "http://x"},
                      "db": {"password": "SECRET4", "credentials": {"user": "u"}, "client_secret": 5}},
    "list": [{"token": "SECRET5"}, "plain"],
    "num_input_tokens_seen": 3, "tokenizer_name": "t", "hub_token_unset": null})");
  const json out = trainhook::mask_secrets(in);
  CHECK(out["learning_rate"] == 0.001);
  CHECK(out["hub_token"] == "<HUB_TOKEN>");
  CHECK(out["report_to"] == json::array({"wandb"}));
  CHECK(out["plugin_config"]["wandb"]["api_key"] == "<API_KEY>");
  CHECK(out["plugin_config"]["wandb"]["project"] == "p");
  CHECK(out["plugin_config"]["s3"]["aws_access_key_id"] == "<AWS_ACCESS_KEY_ID>");
  CHECK(out["plugin_config"]["s3"]["aws_secret_access_key"] == "<AWS_SECRET_ACCESS_KEY>");
  CHECK(out["plugin_config"]["s3"]["aws_session_token"] == "<AWS_SESSION_TOKEN>");
  CHECK(out["plugin_config"]["s3"]["endpoint"] == "http://x");
  CHECK(out["plugin_config"]["db"]["password"] == "<PASSWORD>");
  CHECK(out["plugin_config"]["db"]["credentials"] == "<CREDENTIALS>");  // a whole object hidden
  CHECK(out["plugin_config"]["db"]["client_secret"] == "<CLIENT_SECRET>");
  CHECK(out["list"][0]["token"] == "<TOKEN>");
  CHECK(out["list"][1] == "plain");
  CHECK(out["num_input_tokens_seen"] == 3);
  CHECK(out["tokenizer_name"] == "t");
  CHECK(out["hub_token_unset"] == "<HUB_TOKEN_UNSET>");  // HF masks whatever the value, None included
  for (const char* secret : {"hf_x", "SECRET1", "SECRET2", "SECRET3", "SECRET4", "SECRET5", "AKIA"})
    CHECK_MESSAGE(out.dump().find(secret) == std::string::npos, secret);
  CHECK(in["plugin_config"]["wandb"]["api_key"] == "SECRET1");  // the input is untouched
}

TEST_CASE("the training arguments as the trainer writes them: plugin_config secrets masked") {
  trainhook::TrainingArguments a;
  a.plugin_config = json::parse(R"({"wandb": {"api_key": "SECRET", "mode": "offline"}})");
  const std::string text = trainhook::mask_secrets(trainhook::to_json(a)).dump();
  CHECK(text.find("SECRET") == std::string::npos);
  CHECK(text.find(R"("api_key":"<API_KEY>")") != std::string::npos);
  CHECK(text.find(R"("mode":"offline")") != std::string::npos);
}

TEST_CASE("the one key rule (sdk) and its placeholder") {
  CHECK(trainhook::is_secret_key("WANDB_API_KEY"));
  CHECK(trainhook::is_secret_key("aws_access_key_id"));
  CHECK(trainhook::is_secret_key("aws_session_token"));
  CHECK(trainhook::is_secret_key("mlflowTrackingPassword"));
  CHECK_FALSE(trainhook::is_secret_key("max_tokens"));
  CHECK_FALSE(trainhook::is_secret_key("output_dir"));
  CHECK(trainhook::secret_placeholder("api_key") == "<API_KEY>");
}

// A password inside a URL-shaped value (user-info) is masked
// wherever arguments are written, whatever the key is called.
TEST_CASE("the password of a URL's user-info is masked in every string value") {
  const json in = json::parse(R"({
    "run_name": "http://alice:SECRET1@host",
    "plugin_config": {"mlflow": {"tracking_uri": "https://bob:SECRET2@mlflow.example:5000/path?q=1"},
                      "x": {"list": ["s3://k:SECRET3@bucket/key", "ftp://carol@host/no-password"]}},
    "note": "see http://dave:SECRET4@a.example and http://eve:SECRET5@b.example/x"})");
  const json out = trainhook::mask_secrets(in);
  CHECK(out["run_name"] == "http://alice:<PASSWORD>@host");
  CHECK(out["plugin_config"]["mlflow"]["tracking_uri"] ==
        "https://bob:<PASSWORD>@mlflow.example:5000/path?q=1");
  CHECK(out["plugin_config"]["x"]["list"][0] == "s3://k:<PASSWORD>@bucket/key");
  CHECK(out["plugin_config"]["x"]["list"][1] == "ftp://carol@host/no-password");
  CHECK(out["note"] == "see http://dave:<PASSWORD>@a.example and http://eve:<PASSWORD>@b.example/x");
  for (const char* secret : {"SECRET1", "SECRET2", "SECRET3", "SECRET4", "SECRET5"})
    CHECK_MESSAGE(out.dump().find(secret) == std::string::npos, secret);
  CHECK(in["run_name"] == "http://alice:SECRET1@host");  // what the plugin gets stays real
}

TEST_CASE("mask_url_passwords (sdk) leaves text without user-info passwords alone") {
  using trainhook::mask_url_passwords;
  CHECK(mask_url_passwords("http://host:5000/a@b") == "http://host:5000/a@b");  // '@' in the path
  CHECK(mask_url_passwords("plain text, no url") == "plain text, no url");
  CHECK(mask_url_passwords("http://a:<PASSWORD>@h") == "http://a:<PASSWORD>@h");
  CHECK(mask_url_passwords("'http://u:p@w:rd@h/x'") == "'http://u:<PASSWORD>@h/x'");
  CHECK(mask_url_passwords("MLFLOW_TRACKING_URI=http://alice:SECRET@127.0.0.1:5000 unreachable") ==
        "MLFLOW_TRACKING_URI=http://alice:<PASSWORD>@127.0.0.1:5000 unreachable");
  CHECK(mask_url_passwords("://:x@") == "://:<PASSWORD>@");
}
