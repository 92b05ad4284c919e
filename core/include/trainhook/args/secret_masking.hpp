// Masking of credentials in arguments before they are written or sent: the
// core owns it, so training_args.json (run and checkpoints), the host's
// training_args_json that every plugin reads (TensorBoard args/hparams, MLflow
// params, W&B config, ...) and log lines all carry "<API_KEY>"-style
// placeholders, while each plugin still receives its own configuration
// section (config_json) unmasked.
#pragma once

#include <nlohmann/json.hpp>

namespace trainhook {

// A copy of `value` where every object member whose key is a secret key
// (trainhook::is_secret_key) has its value, whatever it is, replaced by
// trainhook::secret_placeholder(key), at any depth (objects inside objects and
// arrays), as HF's TrainingArguments.to_dict does for "*_token" fields; and
// in every other string, the password of a URL's user-info replaced by
// <PASSWORD> (trainhook::mask_url_passwords).
nlohmann::json mask_secrets(const nlohmann::json& value);

}  // namespace trainhook
