// Secrets out of everything lockbench writes or prints. One function, used
// wherever a URL or a driver message can reach a result, a report, stderr or a
// calibration file: the password of any `scheme://user:password@host` URL and
// the value of a libpq `password=...` keyword (conninfo or URL query) become
// "***". Nothing else changes, so a redacted URL still says which server and
// which user a run used.
//
// A URL without a password is left alone: libpq then reads PGPASSWORD or
// ~/.pgpass, which is how a password should reach lockbench.
#pragma once

#include <string>
#include <string_view>

namespace lockbench {

inline constexpr std::string_view kRedacted = "***";

// `text` with every password replaced by "***" (idempotent).
std::string redact_secrets(std::string_view text);

}  // namespace lockbench
