// Certificate files for the HTTPS clients of sites with their own certificate
// authority, found where each vendor's Python client looks for them (MLflow:
// MLFLOW_TRACKING_SERVER_CERT_PATH / MLFLOW_TRACKING_CLIENT_CERT_PATH; requests,
// which the W&B client uses: REQUESTS_CA_BUNDLE; boto3: AWS_CA_BUNDLE; OpenSSL:
// SSL_CERT_FILE), after the plugin's own plugin_config key.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>

namespace trainhook::support {

struct TlsFile {
  std::string path;
  std::string source;  // "plugin_config mlflow.ca_bundle" or "environment variable REQUESTS_CA_BUNDLE"
};

// The first that is set of `config_value` (given as `config_source`) and the
// variables `env_names`, in that order; nullopt when none is. The file must be
// readable: otherwise trainhook::ConfigError naming the source, the path and
// what was expected (`what`, e.g. "a PEM bundle of certificate authorities").
std::optional<TlsFile> find_tls_file(const std::optional<std::string>& config_value,
                                     const std::string& config_source,
                                     std::initializer_list<const char*> env_names, const char* what);

}  // namespace trainhook::support
