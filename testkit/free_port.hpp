// The one free_port() of the C++ tests and benchmarks (the shell's is
// tests/lib/test_lib.sh's): a TCP port on 127.0.0.1 the kernel says is free
// now. The socket is closed before returning, so whoever binds the port next
// (a store, an exporter) does so a moment later; another process may take it in
// between, as with every such helper. Header-only and doctest-free: the tests
// of every area and bench/ include it through trainhook_testkit.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>

namespace trainhook::testkit {

inline uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("free_port: socket() failed");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof(a);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("free_port: cannot find a free port on 127.0.0.1");
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

}  // namespace trainhook::testkit
