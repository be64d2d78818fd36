#include "report/progress.hpp"

#include <unistd.h>

#include <iostream>

#include <fmt/format.h>

namespace lockbench::report {

namespace {

std::string seconds(double s) {
  if (s >= 3600) return fmt::format("{}h{:02}m", static_cast<int>(s / 3600), static_cast<int>(s / 60) % 60);
  if (s >= 60) return fmt::format("{}m{:02}s", static_cast<int>(s / 60), static_cast<int>(s) % 60);
  return fmt::format("{:.0f}s", s);
}

}  // namespace

Progress::Progress(std::chrono::nanoseconds planned, std::string label)
    : Progress(planned, std::move(label), std::cerr, isatty(STDERR_FILENO) == 1) {}

Progress::Progress(std::chrono::nanoseconds planned, std::string label, std::ostream& out, bool enabled)
    : planned_(planned), label_(std::move(label)), out_(out), enabled_(enabled), start_(Clock::now()) {}

Progress::~Progress() { finish(); }

std::string Progress::format_line(const std::string& label, std::chrono::nanoseconds elapsed,
                                  std::chrono::nanoseconds planned, std::uint64_t done, std::uint64_t ok) {
  const double elapsed_s = std::chrono::duration<double>(elapsed).count();
  const double rate = elapsed_s > 0 ? static_cast<double>(ok) / elapsed_s : 0;
  std::string eta = "ETA –";
  if (planned.count() > 0) {
    const double left = std::chrono::duration<double>(planned).count() - elapsed_s;
    eta = left > 0 ? "ETA " + seconds(left) : "finishing";
  }
  return fmt::format("{}{}[{:>6.1f}s] {} requests  {:.1f} ok/s  {}", label, label.empty() ? "" : " ", elapsed_s,
                     done, rate, eta);
}

void Progress::update(std::uint64_t requests_done, std::uint64_t ok, bool force) {
  if (!enabled_) return;
  std::lock_guard lock(mu_);
  if (finished_) return;
  last_done_ = requests_done;
  last_ok_ = ok;
  const auto now = Clock::now();
  if (!force && drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  draw_locked(requests_done, ok);
}

void Progress::draw_locked(std::uint64_t done, std::uint64_t ok) {
  std::string line = format_line(label_, Clock::now() - start_, planned_, done, ok);
  const std::size_t width = line.size();
  if (width < last_width_) line += std::string(last_width_ - width, ' ');
  last_width_ = width;
  out_ << '\r' << line << std::flush;
  drawn_ = true;
}

void Progress::finish() {
  if (!enabled_) return;
  std::lock_guard lock(mu_);
  if (finished_) return;
  finished_ = true;
  draw_locked(last_done_, last_ok_);
  out_ << '\n' << std::flush;
}

}  // namespace lockbench::report
