#include <trainhook/flyte/s3_config.hpp>

#include <trainhook/plugin.hpp>
#include <trainhook/support/env.hpp>

namespace trainhook::flyte {

S3Config S3Config::from_environment() {
  using support::get_env;
  S3Config c;
  c.region = get_env("AWS_REGION").value_or(get_env("AWS_DEFAULT_REGION").value_or("us-east-1"));
  c.endpoint =
      get_env("AWS_ENDPOINT_URL_S3")
          .value_or(get_env("AWS_ENDPOINT_URL").value_or("https://s3." + c.region + ".amazonaws.com"));
  while (!c.endpoint.empty() && c.endpoint.back() == '/') c.endpoint.pop_back();
  if (c.endpoint.rfind("http://", 0) != 0 && c.endpoint.rfind("https://", 0) != 0)
    throw ConfigError("AWS_ENDPOINT_URL '" + c.endpoint + "' must start with http:// or https://");
  c.access_key_id = get_env("AWS_ACCESS_KEY_ID").value_or("");
  c.secret_access_key = get_env("AWS_SECRET_ACCESS_KEY").value_or("");
  c.session_token = get_env("AWS_SESSION_TOKEN").value_or("");
  if (c.access_key_id.empty() || c.secret_access_key.empty())
    throw ConfigError(
        "an s3:// checkpoint location needs credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
        "(and AWS_SESSION_TOKEN for temporary credentials)");
  return c;
}

std::string S3Config::describe() const {
  // The key id is not secret but is shortened anyway; the secret and token never appear.
  const std::string key = access_key_id.size() > 4 ? access_key_id.substr(0, 4) + "..." : "...";
  return "endpoint " + endpoint + ", region " + region + ", key id " + key +
         (session_token.empty() ? "" : ", with session token");
}

}  // namespace trainhook::flyte
