// Section A state: identities, users and the persons behind them (private).
//
// Identities are interned as small integers; a user is identified by its
// primary identity (user_id == key(identities[0])), so users live in a vector
// indexed by that identity. Persons are the seeded ground truth, invisible to
// clients.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
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
  void reset(const std::vector<PersonSeed>& persons);

  IdentityId find(std::string_view key) const;
  IdentityId find(std::string_view provider, std::string_view user_id);  // builds "provider|user_id"
  int person_of(IdentityId id) const { return id == kNoIdentity ? -1 : person_of_[id]; }
  const std::string& key(IdentityId id) const { return keys_[id]; }
  std::size_t person_count() const { return persons_.size(); }
  const std::vector<IdentityId>& person_identities(int person) const { return persons_[person]; }

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

  // Integrity of the users holding `ids`: well-formed users, every identity
  // in exactly one user. Appends "kind: detail" problems; cheap, run after each mutation.
  void check_users(const IdentityId* ids, std::size_t n, std::vector<std::pair<std::string, std::string>>& out) const;
  // The same over every user and identity (check()).
  void check_all(std::vector<std::pair<std::string, std::string>>& out) const;

  nlohmann::json users_json() const;

 private:
  void fill(IdentityId user, Reply& reply) const;

  std::vector<std::string> keys_;                  // id -> "provider|user_id"
  std::vector<int> person_of_;                     // id -> person index
  std::vector<IdentityId> owner_;                  // id -> primary identity of the user holding it
  std::vector<std::vector<IdentityId>> users_;     // primary id -> identities, primary first; empty = no user
  std::vector<std::vector<IdentityId>> persons_;   // person -> identities, seeded primary first
  std::unordered_map<std::string, IdentityId, StringHash, std::equal_to<>> by_key_;
  std::string scratch_;  // reused to build "provider|user_id" without allocating per call
};

}  // namespace lockbench::partner
