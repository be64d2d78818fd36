// `lockbench explain`: how each strategy works, how it fails, when to choose
// it and when not, in plain words and accurate for PostgreSQL.
#pragma once

#include <string>
#include <string_view>

namespace lockbench::report {

// The text for one strategy (any name strategies/registry.hpp's
// strategy_specs() gives) or one scenario. A variant ("advisory-xact:try") gives its
// strategy's text with that variant marked. Throws lockbench::SettingError
// naming the accepted strategies for an unknown name.
std::string explain(std::string_view strategy);

// One line per strategy: name and what it teaches, then how to ask for more.
std::string explain_list();

}  // namespace lockbench::report
