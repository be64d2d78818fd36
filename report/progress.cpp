#include "report/progress.hpp"

#include <unistd.h>

#include <iostream>

#include <fmt/format.h>

namespace lockbench::report {

namespace {

std::string clock_text(double s) {
  if (s >= 3600) return fmt::format("{}h{:02}m", static_cast<int>(s / 3600), static_cast<int>(s / 60) % 60);
  if (s >= 60) return fmt::format("{}m{:02}s", static_cast<int>(s / 60), static_cast<int>(s) % 60);
  if (s >= 10) return fmt::format("{:.0f}s", s);
  return fmt::format("{:.1f}s", s);
}

}  // namespace

Progress::Progress(Plan plan) : Progress(std::move(plan), std::cerr, isatty(STDERR_FILENO) == 1) {}

Progress::Progress(Plan plan, std::ostream& out, bool enabled)
    : plan_(std::move(plan)), out_(out), enabled_(enabled), start_(Clock::now()) {}

Progress::~Progress() { finish(); }

std::string Progress::format_line(const Plan& plan, std::chrono::nanoseconds wall, std::chrono::nanoseconds at,
                                  std::uint64_t done, std::uint64_t ok) {
  const double wall_s = std::chrono::duration<double>(wall).count();
  const double at_s = std::chrono::duration<double>(at).count();
  const double planned_s = std::chrono::duration<double>(plan.planned).count();
  std::string eta = "ETA –";
  if (planned_s > 0 && at_s >= planned_s) eta = "draining";
  else if (planned_s > 0 && at_s > 0 && wall_s > 0) eta = "ETA " + clock_text(wall_s * (planned_s - at_s) / at_s);
  std::string out;
  if (!plan.position.empty()) out += plan.position + " ";
  if (!plan.label.empty()) out += plan.label + "  ";
  out += clock_text(at_s);
  if (planned_s > 0) out += " / " + clock_text(planned_s);
  if (!plan.clock.empty()) out += " " + plan.clock;
  out += fmt::format("  {} requests, {} ok  {}", done, ok, eta);
  return out;
}

void Progress::update(std::uint64_t requests_done, std::uint64_t ok, std::chrono::nanoseconds world_at, bool force) {
  if (!enabled_) return;
  std::lock_guard lock(mu_);
  if (finished_) return;
  last_done_ = requests_done;
  last_ok_ = ok;
  last_at_ = plan_.time_scale > 0 ? std::chrono::duration_cast<std::chrono::nanoseconds>(world_at / plan_.time_scale)
                                  : world_at;
  const auto now = Clock::now();
  if (!force && drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  draw_locked();
}

void Progress::draw_locked() {
  std::string line = format_line(plan_, Clock::now() - start_, last_at_, last_done_, last_ok_);
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
  draw_locked();
  out_ << '\n' << std::flush;
}

}  // namespace lockbench::report
