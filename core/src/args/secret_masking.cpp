#include <trainhook/args/secret_masking.hpp>

#include <trainhook/secret_keys.hpp>

namespace trainhook {

nlohmann::json mask_secrets(const nlohmann::json& value) {
  if (value.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : value) out.push_back(mask_secrets(item));
    return out;
  }
  // A password inside a URL-shaped value (mlflow.tracking_uri=http://u:pw@host):
  // the key rule cannot see it.
  if (value.is_string()) return mask_url_passwords(value.get_ref<const std::string&>());
  if (!value.is_object()) return value;
  nlohmann::json out = nlohmann::json::object();
  for (auto it = value.begin(); it != value.end(); ++it) {
    out[it.key()] =
        is_secret_key(it.key()) ? nlohmann::json(secret_placeholder(it.key())) : mask_secrets(*it);
  }
  return out;
}

}  // namespace trainhook
