// The scenario interface's defaults and the seeded identities.
#include "core/scenario.hpp"

#include <algorithm>
#include <charconv>

#include "base/key_hash.hpp"

namespace lockbench {

namespace {
constexpr std::string_view kProviders[] = {"auth0",   "google-oauth2", "github", "apple",  "facebook", "twitter",
                                           "linkedin", "windowslive",  "gitlab", "slack",  "discord",  "okta",
                                           "saml",     "oidc",         "email",  "sms"};
}  // namespace

Key Scenario::lock_key(const RequestCtx& cx) const { return cx.key(); }

std::string Scenario::lock_string(std::int64_t id) const { return "user:" + std::to_string(id); }

Key Scenario::hashed_lock_key(const RequestCtx& cx) const {
  const Settings& s = cx.settings();
  const std::int64_t id = s.key_id_base + (cx.key() - 1) * s.key_id_stride;
  switch (s.key_hash) {
    case KeyHash::scenario: return lock_key(cx);
    case KeyHash::int_id: return id;
    case KeyHash::sha256_64: return sha256_64(lock_string(id));
    case KeyHash::hashtext_32: return pg_hashtext(lock_string(id));  // int4, sign-extended
  }
  return lock_key(cx);
}

Task<void> Scenario::compensate(RequestCtx&, Conn&, const Plan&) { co_return; }

std::vector<std::string> identities_of(Key key, int n) {
  std::vector<std::string> out;
  const int count = std::clamp(n, 1, static_cast<int>(std::size(kProviders)));
  out.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) out.push_back(std::string(kProviders[i]) + "|u" + std::to_string(key));
  return out;
}

std::string other_identity(Key key, int n, std::string_view current, std::uint64_t choice) {
  const int count = std::clamp(n, 1, static_cast<int>(std::size(kProviders)));
  char buf[2 + 20] = {'|', 'u'};  // "|u" + std::to_string(key), written in place (one per request)
  const std::string_view suffix(buf, static_cast<std::size_t>(std::to_chars(buf + 2, buf + sizeof buf, key).ptr - buf));
  int skip = -1;  // the index of `current` among the identities, if it is one
  for (int i = 0; i < count && skip < 0; ++i)
    if (current.size() == kProviders[i].size() + suffix.size() && current.starts_with(kProviders[i]) &&
        current.ends_with(suffix))
      skip = i;
  const auto others = static_cast<std::size_t>(count - (skip >= 0 ? 1 : 0));
  auto i = static_cast<int>(choice % others);
  if (skip >= 0 && i >= skip) ++i;
  std::string out;
  out.reserve(kProviders[i].size() + suffix.size());
  out.append(kProviders[i]).append(suffix);
  return out;
}

}  // namespace lockbench
