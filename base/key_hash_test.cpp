// core/key_hash: SHA-256 against FIPS 180-4's examples, hashtext against
// values PostgreSQL 15 returned (tests/real/real_key_hash_test.cpp asks the
// server for a few hundred more).
#include "base/key_hash.hpp"

#include <gtest/gtest.h>

#include <string>

namespace lockbench {
namespace {

std::string hex(const std::array<std::uint8_t, 32>& d) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (auto b : d) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

TEST(KeyHashSha256, MatchesTheStandardsExamples) {
  EXPECT_EQ(hex(sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex(sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // 56 bytes: the padding needs a second block.
  EXPECT_EQ(hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hex(sha256(std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(KeyHashSha256, TheLockKeyIsTheFirstEightBytesBigEndianAsJavaReadsThem) {
  EXPECT_EQ(static_cast<std::uint64_t>(sha256_64("abc")), 0xba7816bf8f01cfeaULL);
  EXPECT_EQ(sha256_64("abc"), -5010229573455851542LL);  // ByteBuffer.wrap(digest).getLong()
}

TEST(KeyHashHashtext, MatchesWhatPostgresqlReturned) {
  // SELECT hashtext('abc'), hashtext(''), hashtext('user:1'), ... on PostgreSQL 15, x86-64.
  EXPECT_EQ(pg_hashtext("abc"), -785388649);
  EXPECT_EQ(pg_hashtext(""), -1477818771);
  EXPECT_EQ(pg_hashtext("user:1"), 829193487);
  EXPECT_EQ(pg_hashtext("welcome-reward:customer-42-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ"), -852869115);
}

TEST(KeyHashHashtext, ByteOrderMattersOnlyWhenThereAreBytes) {
  EXPECT_EQ(pg_hash_bytes("", ByteOrder::little), pg_hash_bytes("", ByteOrder::big));
  EXPECT_NE(pg_hash_bytes("a", ByteOrder::little), pg_hash_bytes("a", ByteOrder::big));
  EXPECT_NE(pg_hash_bytes("user:70606", ByteOrder::little), pg_hash_bytes("user:70606", ByteOrder::big));
}

TEST(KeyHashHashtext, ThirtyTwoBitsCollideWhereSixtyFourDoNot) {
  EXPECT_EQ(pg_hashtext("user:70606"), pg_hashtext("user:156495"));
  EXPECT_EQ(pg_hashtext("user:70606"), -656838246);
  EXPECT_NE(sha256_64("user:70606"), sha256_64("user:156495"));
}

}  // namespace
}  // namespace lockbench
