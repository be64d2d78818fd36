// Advisory-lock keys from business strings (the advisory-lock article's
// LockKeyGenerator, and the hashtext() many codebases call instead).
//   sha256_64:   the first 8 bytes of SHA-256 (FIPS 180-4) of the string, read
//                big-endian as a signed 64-bit number (Java's
//                ByteBuffer.wrap(digest).getLong()).
//   pg_hashtext: PostgreSQL's hashtext(text) for a deterministic collation:
//                hash_bytes (src/common/hashfn.c), Bob Jenkins' lookup3 hash
//                as PostgreSQL uses it, 32 bits, returned as int4. The words
//                it reads depend on the server's byte order, so the caller
//                says which one (PostgreSQL on x86-64 and arm64: little).
// Written here from the algorithms' descriptions (no library: the playground
// compiles the simulator to WebAssembly). tests/real checks pg_hashtext against
// the server's `SELECT hashtext($1)` and sha256_64 against `sha256()`.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace lockbench {

std::array<std::uint8_t, 32> sha256(std::string_view bytes);
std::int64_t sha256_64(std::string_view bytes);

enum class ByteOrder { little, big };
std::uint32_t pg_hash_bytes(std::string_view bytes, ByteOrder order = ByteOrder::little);
// hashtext() as SELECT returns it: int4, sign-extended to a 64-bit lock key.
inline std::int32_t pg_hashtext(std::string_view text, ByteOrder order = ByteOrder::little) {
  return static_cast<std::int32_t>(pg_hash_bytes(text, order));
}

}  // namespace lockbench
