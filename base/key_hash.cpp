#include "base/key_hash.hpp"

#include <cstring>

namespace lockbench {

namespace {

constexpr std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
constexpr std::uint32_t rotl(std::uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

// FIPS 180-4, 4.2.2: the first 32 bits of the fractional parts of the cube
// roots of the first 64 primes.
constexpr std::uint32_t kSha256K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

void sha256_block(std::uint32_t h[8], const std::uint8_t* p) {
  std::uint32_t w[64];
  for (int t = 0; t < 16; ++t)
    w[t] = std::uint32_t{p[4 * t]} << 24 | std::uint32_t{p[4 * t + 1]} << 16 | std::uint32_t{p[4 * t + 2]} << 8 |
           std::uint32_t{p[4 * t + 3]};
  for (int t = 16; t < 64; ++t) {
    const std::uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    const std::uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
  for (int t = 0; t < 64; ++t) {
    const std::uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kSha256K[t] + w[t];
    const std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    hh = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
  h[5] += f;
  h[6] += g;
  h[7] += hh;
}

}  // namespace

std::array<std::uint8_t, 32> sha256(std::string_view bytes) {
  std::uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.data());
  std::size_t n = bytes.size();
  for (; n >= 64; n -= 64, p += 64) sha256_block(h, p);
  // Padding (5.1.1): a 1 bit, zeros, the message length in bits as 64 bits big-endian.
  std::uint8_t tail[128] = {};
  if (n > 0) std::memcpy(tail, p, n);
  tail[n] = 0x80;
  const std::size_t tail_len = n + 9 <= 64 ? 64 : 128;
  const std::uint64_t bits = static_cast<std::uint64_t>(bytes.size()) * 8;
  for (int i = 0; i < 8; ++i) tail[tail_len - 1 - i] = static_cast<std::uint8_t>(bits >> (8 * i));
  for (std::size_t off = 0; off < tail_len; off += 64) sha256_block(h, tail + off);
  std::array<std::uint8_t, 32> out{};
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 4; ++j) out[4 * i + j] = static_cast<std::uint8_t>(h[i] >> (24 - 8 * j));
  return out;
}

std::int64_t sha256_64(std::string_view bytes) {
  const auto d = sha256(bytes);
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = v << 8 | d[i];
  return static_cast<std::int64_t>(v);
}

// lookup3's mix() and final() with PostgreSQL's rotations (hashfn.c).
namespace {
inline void mix(std::uint32_t& a, std::uint32_t& b, std::uint32_t& c) {
  a -= c; a ^= rotl(c, 4);  c += b;
  b -= a; b ^= rotl(a, 6);  a += c;
  c -= b; c ^= rotl(b, 8);  b += a;
  a -= c; a ^= rotl(c, 16); c += b;
  b -= a; b ^= rotl(a, 19); a += c;
  c -= b; c ^= rotl(b, 4);  b += a;
}
inline void final_mix(std::uint32_t& a, std::uint32_t& b, std::uint32_t& c) {
  c ^= b; c -= rotl(b, 14);
  a ^= c; a -= rotl(c, 11);
  b ^= a; b -= rotl(a, 25);
  c ^= b; c -= rotl(b, 16);
  a ^= c; a -= rotl(c, 4);
  b ^= a; b -= rotl(a, 14);
  c ^= b; c -= rotl(b, 24);
}
// Byte i (0..3) of a word, at the shift the server's byte order gives it.
inline std::uint32_t at(std::uint8_t byte, int i, ByteOrder order) {
  return std::uint32_t{byte} << (order == ByteOrder::little ? 8 * i : 24 - 8 * i);
}
}  // namespace

std::uint32_t pg_hash_bytes(std::string_view bytes, ByteOrder order) {
  const auto* k = reinterpret_cast<const std::uint8_t*>(bytes.data());
  auto len = static_cast<std::uint32_t>(bytes.size());
  std::uint32_t a = 0x9e3779b9 + len + 3923095;
  std::uint32_t b = a, c = a;
  // A word is its four bytes in the server's order, whether or not PostgreSQL
  // read it aligned (its two code paths agree).
  const auto word = [&](const std::uint8_t* p) {
    return at(p[0], 0, order) + at(p[1], 1, order) + at(p[2], 2, order) + at(p[3], 3, order);
  };
  while (len >= 12) {
    a += word(k);
    b += word(k + 4);
    c += word(k + 8);
    mix(a, b, c);
    k += 12;
    len -= 12;
  }
  // The last 0..11 bytes, as a partial word each. c's lowest byte is left to
  // the length (added at the start), so bytes 8..10 fill c's upper three:
  // from the bottom up (<< 8, 16, 24) little-endian, from the top down
  // (<< 24, 16, 8) big-endian.
  const bool le = order == ByteOrder::little;
  switch (len) {
    case 11: c += std::uint32_t{k[10]} << (le ? 24 : 8); [[fallthrough]];
    case 10: c += std::uint32_t{k[9]} << 16; [[fallthrough]];
    case 9: c += std::uint32_t{k[8]} << (le ? 8 : 24); [[fallthrough]];
    case 8: b += at(k[7], 3, order); [[fallthrough]];
    case 7: b += at(k[6], 2, order); [[fallthrough]];
    case 6: b += at(k[5], 1, order); [[fallthrough]];
    case 5: b += at(k[4], 0, order); [[fallthrough]];
    case 4: a += at(k[3], 3, order); [[fallthrough]];
    case 3: a += at(k[2], 2, order); [[fallthrough]];
    case 2: a += at(k[1], 1, order); [[fallthrough]];
    case 1: a += at(k[0], 0, order); break;
    default: break;
  }
  final_mix(a, b, c);
  return c;
}

}  // namespace lockbench
