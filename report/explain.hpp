// `lockbench explain`: how each strategy works, how it fails, when to choose
// it and when not, in plain words and accurate for PostgreSQL.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lockbench::report {

// Every name `explain` accepts: base names and their variants
// ("none", "held-tx", "held-tx:wait", "held-tx:nowait", ...).
const std::vector<std::string>& strategy_names();

// The text for one strategy. A variant ("advisory-xact:try") gives its
// strategy's text with that variant marked. Throws lockbench::SettingError
// naming the accepted strategies for an unknown name.
std::string explain(std::string_view strategy);

// One line per strategy: name and what it teaches, then how to ask for more.
std::string explain_list();

}  // namespace lockbench::report
