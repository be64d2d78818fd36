// Names, variants and the request edge shared by every strategy.
#include <exception>

#include "strategies/strategies.hpp"

namespace lockbench {

std::vector<std::string> all_strategies() {
  return {"none", "held-tx", "advisory-xact", "advisory-session:pooled", "row-lease", "optimistic"};
}

std::vector<std::string> strategy_specs() {
  return {"none",
          "held-tx",
          "held-tx:wait",
          "held-tx:nowait",
          "advisory-xact",
          "advisory-xact:try",
          "advisory-xact:wait",
          "advisory-session",
          "advisory-session:pinned",
          "advisory-session:pooled",
          "advisory-session:pinned-wait",
          "advisory-session:pooled-wait",
          "row-lease",
          "row-lease:app-clock",
          "row-lease:fenced",
          "optimistic"};
}

std::unique_ptr<Strategy> make_strategy(std::string_view spec) {
  if (spec == "none") return std::make_unique<None>();
  if (spec == "held-tx" || spec == "held-tx:wait") return std::make_unique<HeldTx>(false);
  if (spec == "held-tx:nowait") return std::make_unique<HeldTx>(true);
  if (spec == "advisory-xact" || spec == "advisory-xact:try") return std::make_unique<AdvisoryXact>(false);
  if (spec == "advisory-xact:wait") return std::make_unique<AdvisoryXact>(true);
  if (spec == "advisory-session" || spec == "advisory-session:pinned") return std::make_unique<AdvisorySession>(true, false);
  if (spec == "advisory-session:pooled") return std::make_unique<AdvisorySession>(false, false);
  if (spec == "advisory-session:pinned-wait") return std::make_unique<AdvisorySession>(true, true);
  if (spec == "advisory-session:pooled-wait") return std::make_unique<AdvisorySession>(false, true);
  if (spec == "row-lease") return std::make_unique<RowLease>(false, false);
  if (spec == "row-lease:app-clock") return std::make_unique<RowLease>(true, false);
  if (spec == "row-lease:fenced") return std::make_unique<RowLease>(false, true);
  if (spec == "optimistic") return std::make_unique<Optimistic>();
  std::string accepted;
  for (const auto& s : strategy_specs()) accepted += (accepted.empty() ? "" : ", ") + s;
  throw SettingError("--strategy: '" + std::string(spec) + "' is unknown (accepted: all, " + accepted + ")");
}

Task<Outcome> serve(RequestCtx& cx, Strategy& st, Scenario& sc) {
  const Duration start = cx.world().now();
  Outcome o = Outcome::error;
  std::string detail;
  try {
    o = co_await st.run(cx, sc);
  } catch (const std::exception& e) {
    // DbError and driver errors that escaped the world: the 500 a service returns.
    o = Outcome::error;
    detail = e.what();
  }
  cx.trace("outcome", start, cx.world().now(), -1,
           std::string(outcome_name(o)) + (detail.empty() ? "" : ": " + detail));
  co_return o;
}

}  // namespace lockbench
