// Files lockbench reads and writes, with what they must never do
// (docs/safety.md): a reader takes at most its cap, checked before parsing;
// a writer replaces only a regular file; a path read from a file stays inside
// the directory it belongs to. Each refusal is one SettingError line naming
// the flag or file and what is accepted.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace lockbench {

// Caps on what a reader takes, in bytes: what a reader is given beyond them
// is refused before it is parsed.
inline constexpr std::uintmax_t kResultFileBytesMax = std::uintmax_t{256} << 20;  // a result file (traces included)
inline constexpr std::uintmax_t kConfigFileBytesMax = std::uintmax_t{4} << 20;    // TOML, .properties, YAML, manifests
inline constexpr std::uintmax_t kIndexFileBytesMax = std::uintmax_t{16} << 20;  // lockbench.manifest, plan.json, knees.json

// "4 MiB", "256 MiB", "1000 bytes".
std::string byte_size_text(std::uintmax_t bytes);

// The whole of `path`, at most `cap` bytes; reads regular files, FIFOs and
// devices alike (/dev/zero is refused at the cap, not read forever). Throws
// SettingError: "ORIGIN: 'PATH' is larger than CAP, the cap for KIND".
// `origin` names the flag or the file that named it ("--from", "report").
std::string read_file_capped(const std::filesystem::path& path, std::uintmax_t cap, std::string_view origin,
                             std::string_view kind);

// A target a writer may replace: absent, or a regular file (a symlink to one
// counts as one: the rename replaces the link). A device, FIFO, socket or
// directory is refused in one line naming `flag`. "-" is not checked here:
// callers treat it as standard output.
void check_writable_target(const std::filesystem::path& path, std::string_view flag);

// `name` as read from a file (a manifest's plan, a result's path) resolved
// under `dir`: refused when it is empty, absolute, has a ".." or "." segment,
// or resolves (through symlinks) outside `dir`. `origin` names the file that
// gave `name`.
std::filesystem::path path_inside(const std::filesystem::path& dir, const std::string& name,
                                  std::string_view origin);
// True when `path` (resolved through symlinks) is `dir` or lies under it.
bool resolves_inside(const std::filesystem::path& dir, const std::filesystem::path& path);
// The same directory once both are resolved (symlinks, "..", trailing "/").
bool same_directory(const std::filesystem::path& a, const std::filesystem::path& b);

// Temporary files and directories in `dir` whose name ends in MARKER + PID
// (".report-tmp-4711", "x.json.tmp-4711") and whose process is gone (a writer
// killed by kill -9): removed. Returns how many.
std::size_t remove_stale_temporaries(const std::filesystem::path& dir, std::string_view marker);

}  // namespace lockbench
