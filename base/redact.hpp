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

// `text` with every password replaced by "***" (idempotent). A URL's query is
// read as libpq reads it: keys percent-decoded (?%70assword=...), and a dbname
// that is itself a connection string redacted in turn.
std::string redact_secrets(std::string_view text);

// A driver's message about connecting to `url`: redacted as above, every piece
// of the URL's password removed wherever it appears (libpq splits an unencoded
// '@' differently and echoes the rest as a host name), and libpq's quoted host
// text ("could not translate host name \"...\"") never echoed.
std::string redact_driver_message(std::string_view message, std::string_view url);

}  // namespace lockbench
