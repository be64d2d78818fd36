#include "fake_partner/model/identity_store.hpp"

#include <algorithm>
#include <cstring>

namespace lockbench::partner {

namespace {
// Up to eight bytes of a key as one word, without a call to memcpy for the
// variable length (the compiler inlines fixed-size copies only): n >= 8 loads
// the last eight bytes (overlapping what was read before), n in 4..7 two
// overlapping halves, n in 1..3 three single bytes. The words feed the hash and
// the key comparison, which both only need the same bytes to give the same word.
std::uint64_t tail_word(const char* p, std::size_t n) {
  std::uint64_t w = 0;
  if (n >= 8) {
    std::memcpy(&w, p + n - 8, 8);
  } else if (n >= 4) {
    std::uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + n - 4, 4);
    w = lo | (std::uint64_t{hi} << 32);
  } else if (n > 0) {
    w = static_cast<unsigned char>(p[0]) | std::uint64_t{static_cast<unsigned char>(p[n / 2])} << 8 |
        std::uint64_t{static_cast<unsigned char>(p[n - 1])} << 16;
  }
  return w;
}

// The index's hash: eight bytes at a time (keys are short, "google-oauth2|u123",
// and looked up twice per partner call), each word mixed by a multiply, folded
// so the low bits (the slot) depend on all of them. Only lookups use it: ids
// are handed out in order of first sight, whatever the hash.
std::size_t key_hash(std::string_view key) {
  constexpr std::uint64_t kMul = 0x9E3779B97F4A7C15ULL;
  std::uint64_t h = key.size() * kMul;
  std::size_t i = 0;
  for (; i + 8 <= key.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, key.data() + i, 8);
    h = (h ^ w) * kMul;
    h ^= h >> 32;
  }
  if (i < key.size()) {
    // The bytes left over sit at the top of the last eight: moved to the low end, where a
    // multiply spreads them over the whole word (and so over the slot bits).
    std::uint64_t w = tail_word(key.data(), key.size());
    if (key.size() > 8) w >>= 8 * (8 - (key.size() - i));
    h = (h ^ w) * kMul;
  }
  return static_cast<std::size_t>(h ^ (h >> 29));
}

// a == b, word by word (a memcmp call costs more than these short keys).
bool same_key(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  std::size_t i = 0;
  for (; i + 8 <= a.size(); i += 8) {
    std::uint64_t x, y;
    std::memcpy(&x, a.data() + i, 8);
    std::memcpy(&y, b.data() + i, 8);
    if (x != y) return false;
  }
  return i == a.size() || tail_word(a.data(), a.size()) == tail_word(b.data(), b.size());
}
}  // namespace

IdentityId IdentityStore::intern(const std::string& key, int person) {
  const auto id = static_cast<IdentityId>(keys_.size());
  keys_.push_back(key);
  person_of_.push_back(person);
  index_key(id);
  return id;
}

void IdentityStore::index_key(IdentityId id) {
  if ((by_key_size_ + 1) * 2 > by_key_.size()) {  // grow: rehash by the stored hashes
    std::vector<Slot> old(std::max<std::size_t>(64, by_key_.size() * 2));
    old.swap(by_key_);
    const std::size_t mask = by_key_.size() - 1;
    for (const Slot& e : old) {
      if (e.id == kNoIdentity) continue;
      std::size_t i = e.hash & mask;
      while (by_key_[i].id != kNoIdentity) i = (i + 1) & mask;
      by_key_[i] = e;
    }
  }
  const std::size_t h = key_hash(keys_[id]);
  const std::size_t mask = by_key_.size() - 1;
  std::size_t i = h & mask;
  for (; by_key_[i].id != kNoIdentity; i = (i + 1) & mask)
    if (by_key_[i].hash == h && same_key(keys_[by_key_[i].id], keys_[id])) return;  // known key: the first stays
  by_key_[i] = {h, id};
  ++by_key_size_;
}

void IdentityStore::reset(const std::vector<PersonSeed>& persons, const std::optional<PersonRange>& range) {
  keys_.clear();
  person_of_.clear();
  owner_.clear();
  users_.clear();
  persons_.clear();
  by_key_.clear();
  by_key_size_ = 0;
  range_ = range;
  for (std::size_t p = 0; p < persons.size(); ++p) {
    const auto& seed = persons[p];
    std::vector<IdentityId> ids;
    // The seeded primary first: one user per person holds all its identities.
    const std::string& primary = seed.primary.empty() ? seed.identities.front() : seed.primary;
    ids.push_back(intern(primary, static_cast<int>(p)));
    for (const auto& k : seed.identities)
      if (k != primary) ids.push_back(intern(k, static_cast<int>(p)));
    owner_.insert(owner_.end(), ids.size(), ids.front());
    persons_.push_back(std::move(ids));
  }
  users_.resize(keys_.size());
  for (const auto& ids : persons_) users_[ids.front()] = ids;
}

std::int64_t IdentityStore::range_person(std::string_view key) const {
  if (!range_) return 0;
  const auto bar = key.find('|');
  if (bar == std::string_view::npos) return 0;
  const auto provider = key.substr(0, bar);
  for (int i = 0; i < range_->identities; ++i)
    if (kRangeProviders[i] == provider) return range_index(key.substr(bar + 1), "u", range_->count);
  return 0;
}

IdentityId IdentityStore::materialise(std::int64_t k) {
  const int person = static_cast<int>(persons_.size());
  const std::string suffix = "|u" + std::to_string(k);
  std::vector<IdentityId> ids;
  ids.reserve(static_cast<std::size_t>(range_->identities));
  for (int i = 0; i < range_->identities; ++i) ids.push_back(intern(std::string(kRangeProviders[i]) + suffix, person));
  owner_.insert(owner_.end(), ids.size(), ids.front());  // primary "auth0|u<k>" holds them all
  users_.resize(keys_.size());
  users_[ids.front()] = ids;
  persons_.push_back(std::move(ids));
  return find_existing(scratch_);
}

IdentityId IdentityStore::find_existing(std::string_view key) const {
  if (by_key_.empty()) return kNoIdentity;
  const std::size_t h = key_hash(key);
  const std::size_t mask = by_key_.size() - 1;
  for (std::size_t i = h & mask; by_key_[i].id != kNoIdentity; i = (i + 1) & mask)
    if (by_key_[i].hash == h && same_key(keys_[by_key_[i].id], key)) return by_key_[i].id;
  return kNoIdentity;
}

// Flattened: the lookup inlined, as the simulator calls this twice per partner call
// (the call to find_existing cost about a tenth of the lookup). Making a person
// is find_new's, out of line: inlined, it made this function 10 KB of code.
[[gnu::flatten]] IdentityId IdentityStore::find(std::string_view key) {
  if (const auto id = find_existing(key); id != kNoIdentity) [[likely]] return id;
  return find_new(key);
}

IdentityId IdentityStore::find_new(std::string_view key) {
  const std::int64_t k = range_person(key);
  if (k == 0) return kNoIdentity;
  if (key.data() != scratch_.data()) scratch_.assign(key);
  return materialise(k);
}

IdentityId IdentityStore::find(std::string_view provider, std::string_view user_id) {
  // Written in place: assign and two appends cost more than the lookup itself.
  scratch_.resize(provider.size() + 1 + user_id.size());
  char* out = scratch_.data();
  provider.copy(out, provider.size());
  out[provider.size()] = '|';
  user_id.copy(out + provider.size() + 1, user_id.size());
  return find(std::string_view(scratch_));
}

void IdentityStore::fill(IdentityId user, Reply& reply) const {
  if (!fill_lists_) return;
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

void IdentityStore::check_users(const IdentityId* ids, std::size_t n, std::vector<std::string>& out) const {
  for (std::size_t i = 0; i < n; ++i) {
    if (ids[i] == kNoIdentity) continue;
    const IdentityId u = owner_[ids[i]];
    // After a link both identities are one user's: checked (and reported) once.
    if (i > 0 && ids[i - 1] != kNoIdentity && owner_[ids[i - 1]] == u) continue;
    // The usual case first, in a loop with no text in it (the text-building code,
    // inlined here, made every call pay for saving and reloading registers).
    const IdentityId* list = users_[u].data();
    const std::size_t k = users_[u].size();
    bool well_formed = k > 0 && list[0] == u;
    for (std::size_t a = 0; a < k && well_formed; ++a)
      for (std::size_t b = a + 1; b < k; ++b) well_formed = well_formed && list[a] != list[b];
    if (!well_formed) describe_malformed(u, out);
  }
}

void IdentityStore::describe_malformed(IdentityId u, std::vector<std::string>& out) const {
  const auto& list = users_[u];
  if (list.empty() || list.front() != u) out.push_back("user " + keys_[u] + " does not start with its own identity");
  for (std::size_t a = 0; a < list.size(); ++a)
    for (std::size_t b = a + 1; b < list.size(); ++b)
      if (list[a] == list[b]) out.push_back("user " + keys_[u] + " lists " + keys_[list[a]] + " twice");
}

std::vector<std::string> IdentityStore::invariant_problems() const {
  std::vector<std::string> out;
  std::vector<int> seen(keys_.size(), 0);
  for (IdentityId u = 0; u < users_.size(); ++u) {
    const auto& list = users_[u];
    if (list.empty()) continue;
    if (list.front() != u) out.push_back("user " + keys_[u] + " does not start with its own identity");
    for (std::size_t a = 0; a < list.size(); ++a) {
      ++seen[list[a]];
      if (owner_[list[a]] != u) out.push_back(keys_[list[a]] + " is listed under " + keys_[u] + " but owned by " + keys_[owner_[list[a]]]);
      for (std::size_t b = a + 1; b < list.size(); ++b)
        if (list[a] == list[b]) out.push_back("user " + keys_[u] + " lists " + keys_[list[a]] + " twice");
    }
  }
  for (IdentityId id = 0; id < seen.size(); ++id) {
    if (seen[id] == 0) out.push_back(keys_[id] + " is in no user");
    if (seen[id] > 1) out.push_back(keys_[id] + " is in " + std::to_string(seen[id]) + " users");
  }
  return out;
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
