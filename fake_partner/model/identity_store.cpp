#include "fake_partner/model/identity_store.hpp"

#include <algorithm>

namespace lockbench::partner {

void IdentityStore::reset(const std::vector<PersonSeed>& persons) {
  keys_.clear();
  person_of_.clear();
  owner_.clear();
  users_.clear();
  persons_.clear();
  by_key_.clear();
  for (std::size_t p = 0; p < persons.size(); ++p) {
    const auto& seed = persons[p];
    std::vector<IdentityId> ids;
    // The seeded primary first: one user per person holds all its identities.
    const std::string& primary = seed.primary.empty() ? seed.identities.front() : seed.primary;
    std::vector<const std::string*> order{&primary};
    for (const auto& k : seed.identities)
      if (k != primary) order.push_back(&k);
    for (const auto* k : order) {
      const auto id = static_cast<IdentityId>(keys_.size());
      keys_.push_back(*k);
      person_of_.push_back(static_cast<int>(p));
      by_key_.emplace(*k, id);
      ids.push_back(id);
    }
    owner_.insert(owner_.end(), ids.size(), ids.front());
    persons_.push_back(ids);
  }
  users_.resize(keys_.size());
  for (const auto& ids : persons_) users_[ids.front()] = ids;
}

IdentityId IdentityStore::find(std::string_view key) const {
  const auto it = by_key_.find(key);
  return it == by_key_.end() ? kNoIdentity : it->second;
}

IdentityId IdentityStore::find(std::string_view provider, std::string_view user_id) {
  scratch_.assign(provider);
  scratch_ += '|';
  scratch_ += user_id;
  return find(std::string_view(scratch_));
}

void IdentityStore::fill(IdentityId user, Reply& reply) const {
  reply.user_id = keys_[user];
  reply.identities.clear();
  reply.identities.reserve(users_[user].size());
  for (auto id : users_[user]) reply.identities.push_back(keys_[id]);
}

void IdentityStore::get(IdentityId user, Reply& reply) const {
  if (user == kNoIdentity || users_[user].empty()) {
    reply.status = 404;
    reply.error = Error::user_not_found;
    return;
  }
  reply.status = 200;
  fill(user, reply);
}

void IdentityStore::link(IdentityId user, IdentityId other, Reply& reply) {
  if (user == kNoIdentity || users_[user].empty()) {
    reply.status = 404;
    reply.error = Error::user_not_found;
    return;
  }
  if (other == user) {
    reply.status = 400;
    reply.error = Error::same_identity;
    return;
  }
  auto& ids = users_[user];
  if (other != kNoIdentity && std::find(ids.begin(), ids.end(), other) != ids.end()) {
    reply.status = 409;
    reply.error = Error::identity_exists;
    return;
  }
  // The secondary must be a user in its own right (not an identity inside
  // another user); all its identities move under the primary.
  if (other == kNoIdentity || users_[other].empty()) {
    reply.status = 400;
    reply.error = Error::secondary_not_found;
    return;
  }
  for (auto id : users_[other]) {
    ids.push_back(id);
    owner_[id] = user;
  }
  users_[other].clear();
  reply.status = 201;
  reply.applied = true;
  fill(user, reply);
}

void IdentityStore::unlink(IdentityId user, IdentityId other, Reply& reply) {
  if (user == kNoIdentity || users_[user].empty()) {
    reply.status = 404;
    reply.error = Error::user_not_found;
    return;
  }
  if (other == user) {
    reply.status = 400;
    reply.error = Error::main_identity;
    return;
  }
  auto& ids = users_[user];
  const auto it = other == kNoIdentity ? ids.end() : std::find(ids.begin(), ids.end(), other);
  reply.status = 200;
  if (it != ids.end()) {  // not linked: 200 with the identities unchanged
    ids.erase(it);
    users_[other] = {other};
    owner_[other] = other;
    reply.applied = true;
  }
  fill(user, reply);
}

bool IdentityStore::split(int person) const {
  const auto& ids = persons_[person];
  for (auto id : ids)
    if (owner_[id] != owner_[ids.front()]) return true;
  return false;
}

void IdentityStore::check_users(const IdentityId* ids, std::size_t n,
                                std::vector<std::pair<std::string, std::string>>& out) const {
  for (std::size_t i = 0; i < n; ++i) {
    if (ids[i] == kNoIdentity) continue;
    const IdentityId u = owner_[ids[i]];
    const auto& list = users_[u];
    if (list.empty() || list.front() != u) out.emplace_back("user_malformed", "user " + keys_[u] + " does not start with its own identity");
    for (std::size_t a = 0; a < list.size(); ++a) {
      if (owner_[list[a]] != u)
        out.emplace_back("identity_duplicated", keys_[list[a]] + " is listed under " + keys_[u] + " and " + keys_[owner_[list[a]]]);
      for (std::size_t b = a + 1; b < list.size(); ++b)
        if (list[a] == list[b]) out.emplace_back("user_malformed", "user " + keys_[u] + " lists " + keys_[list[a]] + " twice");
    }
    if (std::find(list.begin(), list.end(), ids[i]) == list.end())
      out.emplace_back("identity_lost", keys_[ids[i]] + " is in no user");
  }
}

void IdentityStore::check_all(std::vector<std::pair<std::string, std::string>>& out) const {
  std::vector<int> seen(keys_.size(), 0);
  for (IdentityId u = 0; u < users_.size(); ++u) {
    const auto& list = users_[u];
    if (list.empty()) continue;
    if (list.front() != u) out.emplace_back("user_malformed", "user " + keys_[u] + " does not start with its own identity");
    for (std::size_t a = 0; a < list.size(); ++a) {
      ++seen[list[a]];
      for (std::size_t b = a + 1; b < list.size(); ++b)
        if (list[a] == list[b]) out.emplace_back("user_malformed", "user " + keys_[u] + " lists " + keys_[list[a]] + " twice");
    }
  }
  for (IdentityId id = 0; id < seen.size(); ++id) {
    if (seen[id] == 0) out.emplace_back("identity_lost", keys_[id] + " is in no user");
    if (seen[id] > 1) out.emplace_back("identity_duplicated", keys_[id] + " is in " + std::to_string(seen[id]) + " users");
  }
}

nlohmann::json IdentityStore::users_json() const {
  nlohmann::json users = nlohmann::json::array();
  for (IdentityId u = 0; u < users_.size(); ++u) {
    if (users_[u].empty()) continue;
    nlohmann::json ids = nlohmann::json::array();
    for (auto id : users_[u]) ids.push_back(keys_[id]);
    users.push_back({{"user_id", keys_[u]}, {"identities", std::move(ids)}});
  }
  return users;
}

}  // namespace lockbench::partner
