#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/scenario.hpp"

using namespace lockbench;

// other_identity is the promotion target switch-primary used to pick from a
// list: identities_of without the current primary, entry choice % size.
TEST(OtherIdentity, PicksWhatTheListWithoutTheCurrentIdentityWouldPick) {
  for (Key key : {Key{1}, Key{42}, Key{9999999}})
    for (int n = 1; n <= 6; ++n) {
      const auto ids = identities_of(key, n);
      std::vector<std::string> currents = ids;
      currents.push_back("auth0|u" + std::to_string(key + 1));  // not one of this person's
      currents.push_back("");
      for (const auto& current : currents) {
        std::vector<std::string> others;
        for (const auto& id : ids)
          if (id != current) others.push_back(id);
        if (others.empty()) continue;
        for (std::uint64_t choice : {0ULL, 1ULL, 2ULL, 7ULL, 123456789ULL, ~0ULL})
          EXPECT_EQ(other_identity(key, n, current, choice), others[choice % others.size()])
              << "key " << key << " n " << n << " current " << current << " choice " << choice;
      }
    }
}
