#include <trainhook/flyte/location.hpp>
#include <trainhook/strings.hpp>

#include <stdexcept>

namespace trainhook::flyte {
namespace {

constexpr auto trim = strings::trim_view;
using strings::starts_with;

}  // namespace

bool is_unset_location(std::string_view text) {
  const auto t = trim(text);
  if (t.empty() || t == "\"\"" || t == "''") return true;
  // An unreplaced Go template anywhere means Flyte did not fill the value in.
  const auto open = t.find("{{");
  return open != std::string_view::npos && t.find("}}", open) != std::string_view::npos;
}

std::string Location::display() const {
  if (kind == Kind::s3) return "s3://" + bucket + (prefix.empty() ? "" : "/" + prefix);
  return path;
}

std::optional<Location> parse_location(std::string_view text, const std::string& what) {
  if (is_unset_location(text)) return std::nullopt;
  auto t = trim(text);
  Location loc;
  if (starts_with(t, "s3://")) {
    auto rest = t.substr(5);
    const auto slash = rest.find('/');
    loc.kind = Location::Kind::s3;
    loc.bucket = std::string(rest.substr(0, slash));
    if (loc.bucket.empty())
      throw std::invalid_argument(what + ": '" + std::string(t) +
                                  "' has no bucket; expected s3://bucket/prefix");
    std::string prefix = slash == std::string_view::npos ? "" : std::string(rest.substr(slash + 1));
    while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
    while (!prefix.empty() && prefix.front() == '/') prefix.erase(0, 1);
    loc.prefix = prefix;
    return loc;
  }
  if (starts_with(t, "file://")) {
    t = t.substr(7);
    if (t.empty() || t.front() != '/')
      throw std::invalid_argument(what + ": a file:// location needs an absolute path (file:///dir), got '" +
                                  std::string(text) + "'");
  } else if (const auto colon = t.find("://"); colon != std::string_view::npos) {
    throw std::invalid_argument(what + ": unsupported scheme '" + std::string(t.substr(0, colon)) +
                                "://'; expected s3://bucket/prefix, file:///path or a plain folder path");
  }
  loc.kind = Location::Kind::local;
  loc.path = std::string(t);
  return loc;
}

}  // namespace trainhook::flyte
