// support::Sha256 / hmac_sha256 (OpenSSL underneath) against published
// vectors: FIPS 180-4 examples and RFC 4231; streaming file hashing.
#include <trainhook/support/sha256.hpp>

#include <doctest/doctest.h>
#include <temp_dir.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

using namespace trainhook::support;

TEST_CASE("sha256: FIPS 180-4 examples") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  Sha256 h;  // one million 'a', fed in odd-sized chunks
  const std::string chunk(997, 'a');
  size_t left = 1000000;
  while (left > 0) {
    const size_t n = std::min(left, chunk.size());
    h.update(chunk.data(), n);
    left -= n;
  }
  CHECK(to_hex(h.finish()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  Sha256 empty;  // nothing fed
  CHECK(to_hex(empty.finish()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST_CASE("sha256: file hash equals the in-memory hash") {
  const trainhook::testkit::TempDir tmp("th_flyte_sha_file");
  const auto p = tmp.path / "data.bin";
  std::string data;  // several 64 KiB reads and a partial last one
  for (int i = 0; i < 200000; ++i) data += static_cast<char>(i * 31);
  std::ofstream(p, std::ios::binary) << data;
  CHECK(sha256_file_hex(p) == sha256_hex(data));
  std::filesystem::remove(p);
  CHECK_THROWS_WITH(sha256_file_hex(p), doctest::Contains(p.filename().c_str()));
}

TEST_CASE("hmac_sha256: RFC 4231 test cases 1, 2, 6 and 7") {
  CHECK(to_hex(hmac_sha256(std::string(20, '\x0b'), "Hi There")) ==
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  CHECK(to_hex(hmac_sha256("Jefe", "what do ya want for nothing?")) ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  CHECK(to_hex(hmac_sha256(std::string(131, '\xaa'),
                           "Test Using Larger Than Block-Size Key - Hash Key First")) ==
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  CHECK(to_hex(hmac_sha256(std::string(131, '\xaa'),
                           "This is a test using a larger than block-size key and a larger than block-size "
                           "data. The key needs to be hashed before being used by the HMAC algorithm.")) ==
        "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}
