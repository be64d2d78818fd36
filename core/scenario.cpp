// The scenario interface's defaults and the seeded identities.
#include "core/scenario.hpp"

#include <algorithm>

namespace lockbench {

namespace {
constexpr std::string_view kProviders[] = {"auth0",   "google-oauth2", "github", "apple",  "facebook", "twitter",
                                           "linkedin", "windowslive",  "gitlab", "slack",  "discord",  "okta",
                                           "saml",     "oidc",         "email",  "sms"};
}  // namespace

Key Scenario::lock_key(const RequestCtx& cx) const { return cx.key(); }

Task<void> Scenario::compensate(RequestCtx&, Conn&, const Plan&) { co_return; }

std::vector<std::string> identities_of(Key key, int n) {
  std::vector<std::string> out;
  const int count = std::clamp(n, 1, static_cast<int>(std::size(kProviders)));
  out.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) out.push_back(std::string(kProviders[i]) + "|u" + std::to_string(key));
  return out;
}

}  // namespace lockbench
