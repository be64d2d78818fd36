// The six strategies. Each run() lives in its own file: read them side by side.
#pragma once

#include "core/strategy.hpp"

namespace lockbench {

class None final : public Strategy {
 public:
  std::string spec() const override { return "none"; }
  bool holds_connection_during_call() const override { return false; }
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;
};

class HeldTx final : public Strategy {
 public:
  explicit HeldTx(bool nowait) : nowait_(nowait) {}
  std::string spec() const override { return nowait_ ? "held-tx:nowait" : "held-tx:wait"; }
  bool holds_connection_during_call() const override { return true; }
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;

 private:
  bool nowait_;
};

class AdvisoryXact final : public Strategy {
 public:
  explicit AdvisoryXact(bool wait) : wait_(wait) {}
  std::string spec() const override { return wait_ ? "advisory-xact:wait" : "advisory-xact:try"; }
  bool holds_connection_during_call() const override { return true; }
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;

 private:
  bool wait_;
};

class AdvisorySession final : public Strategy {
 public:
  AdvisorySession(bool pinned, bool wait) : pinned_(pinned), wait_(wait) {}
  std::string spec() const override {
    return std::string("advisory-session:") + (pinned_ ? "pinned" : "pooled") + (wait_ ? "-wait" : "");
  }
  bool holds_connection_during_call() const override { return pinned_; }
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;

 private:
  bool pinned_;
  bool wait_;
};

class RowLease final : public Strategy {
 public:
  RowLease(bool app_clock, bool fenced) : app_clock_(app_clock), fenced_(fenced) {}
  std::string spec() const override {
    return fenced_ ? "row-lease:fenced" : app_clock_ ? "row-lease:app-clock" : "row-lease";
  }
  bool holds_connection_during_call() const override { return false; }
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;

 private:
  bool app_clock_;
  bool fenced_;
};

class Optimistic final : public Strategy {
 public:
  std::string spec() const override { return "optimistic"; }
  bool holds_connection_during_call() const override { return false; }
  Task<Outcome> run(RequestCtx& cx, Scenario& sc) override;
};

}  // namespace lockbench
