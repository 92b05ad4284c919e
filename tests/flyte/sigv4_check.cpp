#include "sigv4_check.hpp"

#include <trainhook/support/sha256.hpp>

#include <algorithm>
#include <sstream>
#include <utility>
#include <vector>

namespace sigv4_check {
using trainhook::support::hmac_sha256;
using trainhook::support::sha256_hex;
using trainhook::support::to_hex;

namespace {

std::string decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string encode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string key_bytes(const std::string& secret, const std::string& date, const std::string& region,
                      const std::string& service) {
  auto k = hmac_sha256("AWS4" + secret, date);
  k = hmac_sha256(std::string(k.begin(), k.end()), region);
  k = hmac_sha256(std::string(k.begin(), k.end()), service);
  k = hmac_sha256(std::string(k.begin(), k.end()), "aws4_request");
  return std::string(k.begin(), k.end());
}

std::string trim_all(const std::string& v) {
  // SigV4: trim, and collapse runs of spaces.
  std::string out;
  bool space = false;
  for (char c : v) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

}  // namespace

std::string canonical_query(const std::string& query) {
  std::vector<std::pair<std::string, std::string>> params;
  std::stringstream ss(query);
  std::string item;
  while (std::getline(ss, item, '&')) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    params.emplace_back(encode(decode(item.substr(0, eq))),
                        eq == std::string::npos ? "" : encode(decode(item.substr(eq + 1))));
  }
  std::sort(params.begin(), params.end());
  std::string out;
  for (const auto& [k, v] : params) out += (out.empty() ? "" : "&") + k + "=" + v;
  return out;
}

std::string signature(const Request& r, const std::string& signed_headers, const std::string& secret,
                      const std::string& date, const std::string& region, const std::string& service) {
  std::string canonical = r.method + "\n" + r.path + "\n" + canonical_query(r.query) + "\n";
  std::stringstream names(signed_headers);
  std::string name;
  while (std::getline(names, name, ';')) {
    auto it = r.headers.find(name);
    canonical += name + ":" + (it == r.headers.end() ? "" : trim_all(it->second)) + "\n";
  }
  auto payload = r.headers.find("x-amz-content-sha256");
  canonical += "\n" + signed_headers + "\n" + (payload == r.headers.end() ? sha256_hex("") : payload->second);
  const std::string scope = date + "/" + region + "/" + service + "/aws4_request";
  const std::string to_sign =
      "AWS4-HMAC-SHA256\n" + r.headers.at("x-amz-date") + "\n" + scope + "\n" + sha256_hex(canonical);
  const auto sig = hmac_sha256(key_bytes(secret, date, region, service), to_sign);
  return to_hex(sig);
}

std::string signing_key_hex(const std::string& secret, const std::string& date, const std::string& region,
                            const std::string& service) {
  const std::string k = key_bytes(secret, date, region, service);
  return to_hex(reinterpret_cast<const uint8_t*>(k.data()), k.size());
}

}  // namespace sigv4_check
