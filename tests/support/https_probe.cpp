// https_probe URL [--ca_bundle FILE] [--client_cert FILE]: one GET through
// support::HttpClient; prints "status N" (exit 0 on 2xx) or the client's error
// (exit 1). Lets https_ca_test.sh check the TLS options against a real server.
#include <trainhook/support/http_client.hpp>

#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: https_probe URL [--ca_bundle FILE] [--client_cert FILE]\n");
    return 2;
  }
  trainhook::support::HttpClientOptions options;
  options.timeout(std::chrono::seconds(20));
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--ca_bundle") == 0) {
      options.ca_bundle(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--client_cert") == 0) {
      options.client_cert(argv[i + 1]);
    } else {
      std::fprintf(stderr, "https_probe: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  trainhook::support::HttpClient http(options);
  const auto r = http.perform(trainhook::support::HttpRequest::get(argv[1]));
  if (r.ok()) {
    std::printf("status %ld %s\n", r.status, r.body.c_str());
    return 0;
  }
  std::printf("%s\n", r.describe().c_str());
  return 1;
}
