// Section A state: identities, users and the persons behind them (private).
//
// Identities are interned as small integers; a user is identified by its
// primary identity (user_id == key(identities[0])), so users live in a vector
// indexed by that identity. Persons are the seeded ground truth, invisible to
// clients. Persons of a person_range come into being when one of their
// identities is first looked up, so memory grows with touched persons only;
// an untouched range person is whole, with its seeded primary, by construction.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "fake_partner/model/call.hpp"
#include "fake_partner/model/config.hpp"

namespace lockbench::partner {

using IdentityId = std::uint32_t;
inline constexpr IdentityId kNoIdentity = std::numeric_limits<IdentityId>::max();

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

class IdentityStore {
 public:
  void reset(const std::vector<PersonSeed>& persons, const std::optional<PersonRange>& range = std::nullopt);

  // The identity, materialising its range person on first sight; kNoIdentity when unknown.
  IdentityId find(std::string_view key);
  IdentityId find(std::string_view provider, std::string_view user_id);  // builds "provider|user_id"
  // The identity if it already exists, never materialising.
  IdentityId find_existing(std::string_view key) const;
  // k when `key` is an identity of range person k (touched or not), else 0.
  std::int64_t range_person(std::string_view key) const;
  int person_of(IdentityId id) const { return id == kNoIdentity ? -1 : person_of_[id]; }
  const std::string& key(IdentityId id) const { return keys_[id]; }
  std::size_t person_count() const { return persons_.size(); }
  const std::vector<IdentityId>& person_identities(int person) const { return persons_[person]; }

  // Off: the three calls leave reply.user_id / identities empty (the simulator reads
  // only status, error and applied; the lists are for the HTTP body). On by default.
  void set_fill_lists(bool on) { fill_lists_ = on; }
  // The three calls. They fill reply.status / error / applied / user_id / identities.
  // `user` is the path user, `other` the identity in the body (link) or path (unlink).
  void get(IdentityId user, Reply& reply) const;
  void link(IdentityId user, IdentityId other, Reply& reply);
  void unlink(IdentityId user, IdentityId other, Reply& reply);

  // The user currently holding the identity (its primary identity).
  IdentityId owner(IdentityId id) const { return owner_[id]; }
  // A person is split when its identities are held by more than one user.
  bool split(int person) const;
  // The primary of the one user holding the person (meaningful when not split).
  IdentityId primary_of(int person) const { return owner_[persons_[person].front()]; }

  // Well-formedness of the users holding `ids` (user_malformed: user_id ==
  // key(identities[0]), no identity listed twice). Appends details; cheap, run after each mutation.
  // A user holding ids[i] and ids[i - 1] both is checked once.
  void check_users(const IdentityId* ids, std::size_t n, std::vector<std::string>& out) const;
  // The store's own invariant over every touched user and identity: well-formed users and
  // every identity in exactly one user, its owner. Link and unlink keep it by construction,
  // so it is a self-check for tests, not an oracle verdict. Empty = holds.
  std::vector<std::string> invariant_problems() const;

  nlohmann::json users_json() const;

 private:
  friend struct IdentityStoreTestAccess;  // tests break the invariant on purpose
  void fill(IdentityId user, Reply& reply) const;
  // check_users' findings for user u, which it found malformed.
  [[gnu::noinline]] void describe_malformed(IdentityId u, std::vector<std::string>& out) const;
  IdentityId intern(const std::string& key, int person);
  IdentityId materialise(std::int64_t k);  // range person k; returns the identity `scratch_` names
  // find()'s rare path, kept out of its hot code: a range person seen for the first time.
  [[gnu::noinline, gnu::cold]] IdentityId find_new(std::string_view key);

  std::vector<std::string> keys_;                  // id -> "provider|user_id"
  std::vector<int> person_of_;                     // id -> person index
  std::vector<IdentityId> owner_;                  // id -> primary identity of the user holding it
  std::vector<std::vector<IdentityId>> users_;     // primary id -> identities, primary first; empty = no user
  std::vector<std::vector<IdentityId>> persons_;   // person -> identities, seeded primary first
  // key -> identity: open addressing over keys_ (linear probing, at most half full).
  // The simulator looks up two keys per partner call; a node-based map cost about
  // a tenth of a run in cache misses (issue 14).
  struct Slot {
    std::size_t hash = 0;
    IdentityId id = kNoIdentity;  // kNoIdentity = empty
  };
  std::vector<Slot> by_key_;
  std::size_t by_key_size_ = 0;
  void index_key(IdentityId id);  // keeps the first identity of a key seen twice
  std::optional<PersonRange> range_;
  bool fill_lists_ = true;
  std::string scratch_;  // reused to build "provider|user_id" without allocating per call
};

}  // namespace lockbench::partner
