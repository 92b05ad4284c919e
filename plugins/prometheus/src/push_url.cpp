#include <trainhook/prometheus/push_url.hpp>

#include <algorithm>
#include <cstdint>

namespace trainhook::prometheus {

std::string base64url(std::string_view data) {
  if (data.empty()) return "=";
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < data.size(); i += 3) {
    const uint32_t n = (static_cast<uint8_t>(data[i]) << 16) | (static_cast<uint8_t>(data[i + 1]) << 8) |
                       static_cast<uint8_t>(data[i + 2]);
    out.push_back(kAlphabet[(n >> 18) & 63]);
    out.push_back(kAlphabet[(n >> 12) & 63]);
    out.push_back(kAlphabet[(n >> 6) & 63]);
    out.push_back(kAlphabet[n & 63]);
  }
  if (i < data.size()) {
    uint32_t n = static_cast<uint8_t>(data[i]) << 16;
    if (i + 1 < data.size()) n |= static_cast<uint8_t>(data[i + 1]) << 8;
    out.push_back(kAlphabet[(n >> 18) & 63]);
    out.push_back(kAlphabet[(n >> 12) & 63]);
    if (i + 1 < data.size()) out.push_back(kAlphabet[(n >> 6) & 63]);
  }
  return out;
}

std::string push_url(std::string_view base_url, std::string_view job, std::string_view run_name) {
  std::string url(base_url);
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url + "/metrics/job@base64/" + base64url(job) + "/run_name@base64/" + base64url(run_name);
}

std::string redact_url(std::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  const size_t host = scheme + 3;
  const size_t end = std::min(url.find('/', host), url.size());
  const size_t at = url.substr(0, end).rfind('@');
  if (at == std::string_view::npos || at < host) return std::string(url);
  return std::string(url.substr(0, host)) + "***@" + std::string(url.substr(at + 1));
}

}  // namespace trainhook::prometheus
