// SHA-256 / HMAC-SHA256 against published vectors, and our SigV4 reference
// check against the AWS documentation's examples.
#include "sigv4_check.hpp"

#include <trainhook/flyte/sha256.hpp>

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

using namespace trainhook::flyte;

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
}

TEST_CASE("sha256: file hash equals the in-memory hash") {
  const auto p = std::filesystem::temp_directory_path() / "th_cs_sha_file.bin";
  std::string data;
  for (int i = 0; i < 200000; ++i) data += static_cast<char>(i * 31);
  std::ofstream(p, std::ios::binary) << data;
  CHECK(sha256_file_hex(p) == sha256_hex(data));
  std::filesystem::remove(p);
  CHECK_THROWS_WITH(sha256_file_hex(p), doctest::Contains("th_cs_sha_file.bin"));
}

TEST_CASE("hmac_sha256: RFC 4231 test cases 1, 2 and 6") {
  CHECK(to_hex(hmac_sha256(std::string(20, '\x0b'), "Hi There")) ==
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  CHECK(to_hex(hmac_sha256("Jefe", "what do ya want for nothing?")) ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  CHECK(to_hex(hmac_sha256(std::string(131, '\xaa'),
                           "Test Using Larger Than Block-Size Key - Hash Key First")) ==
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST_CASE("sigv4 reference: AWS documentation's signing-key example") {
  CHECK(sigv4_check::signing_key_hex("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "20120215", "us-east-1",
                                     "iam") ==
        "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d");
}

TEST_CASE("sigv4 reference: AWS S3 documentation's GET Object example") {
  sigv4_check::Request r;
  r.method = "GET";
  r.path = "/test.txt";
  r.headers = {{"host", "examplebucket.s3.amazonaws.com"},
               {"range", "bytes=0-9"},
               {"x-amz-content-sha256", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
               {"x-amz-date", "20130524T000000Z"}};
  CHECK(sigv4_check::signature(r, "host;range;x-amz-content-sha256;x-amz-date",
                               "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "20130524", "us-east-1",
                               "s3") == "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST_CASE("sigv4 reference: canonical query sorts and encodes") {
  CHECK(sigv4_check::canonical_query("uploads=") == "uploads=");
  CHECK(sigv4_check::canonical_query("uploadId=a%2Fb&partNumber=2") == "partNumber=2&uploadId=a%2Fb");
  CHECK(sigv4_check::canonical_query("prefix=run 1/&list-type=2") == "list-type=2&prefix=run%201%2F");
}
