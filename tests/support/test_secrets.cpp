#include <doctest/doctest.h>
#include <trainhook/support/secrets.hpp>

using trainhook::support::looks_secret;

TEST_CASE("looks_secret flags credentials") {
  for (const char* k : {"hub_token", "push_to_hub_token", "api_key", "WANDB_API_KEY", "password", "db.passwd",
                        "aws_secret_access_key", "apiKey", "Authorization", "mlflow_tracking_token",
                        "client-secret", "key", "credentials"})
    CHECK_MESSAGE(looks_secret(k), k);
}

TEST_CASE("looks_secret leaves ordinary training arguments alone") {
  for (const char* k : {"learning_rate", "num_input_tokens_seen", "tokenizer_name", "metric_for_best_model",
                        "output_dir", "keys_to_ignore", "monkey", "author", "max_tokens", "save_safetensors"})
    CHECK_MESSAGE(!looks_secret(k), k);
}
