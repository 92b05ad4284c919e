// Where a push goes: the Pushgateway's group path, and the URL as messages
// may show it.
#pragma once

#include <string>
#include <string_view>

namespace trainhook::prometheus {

// "<base>/metrics/job@base64/<job>/run_name@base64/<run_name>": the group
// job=<job>,run_name=<run_name> in the Pushgateway's `@base64` form, so any
// value fits a path segment ('/', newlines, quotes, ...).
std::string push_url(std::string_view base_url, std::string_view job, std::string_view run_name);
// RFC 4648 section 5 (the URL-safe alphabet) without padding; "=" for an
// empty value (the Pushgateway's spelling of an empty label value).
std::string base64url(std::string_view data);
// The URL without its user:password@ part, for messages (a Pushgateway behind
// basic auth is given as http://user:pass@host:9091).
std::string redact_url(std::string_view url);

}  // namespace trainhook::prometheus
