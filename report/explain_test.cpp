// explain: every strategy has the four parts, variants resolve, unknown names
// get one line listing what is accepted.
#include <gtest/gtest.h>

#include "base/units.hpp"
#include "strategies/registry.hpp"
#include "report/explain.hpp"

namespace lockbench::report {
namespace {

// The text with its line wrapping undone.
std::string flat(std::string text) {
  for (std::size_t at; (at = text.find("\n  ")) != std::string::npos;) text.replace(at, 3, " ");
  return text;
}

// Each name --strategy accepts (a bare family name too) is explained as the
// registry row it runs: the family's heading and that row's properties.
TEST(Explain, EveryStrategyTheRunnerAcceptsCanBeExplained) {
  for (const auto& spec : lockbench::strategy_specs()) {
    const lockbench::StrategyInfo& row = lockbench::strategy_info(spec);
    const std::string text = explain(spec);
    EXPECT_EQ(text.rfind(std::string(row.family) + " — ", 0), 0u) << spec;
    EXPECT_NE(text.find("Properties of " + std::string(row.spec) + " "), std::string::npos) << spec;
  }
}

TEST(Explain, EveryAcceptedNameSaysHowItWorksFailsAndWhenToChooseIt) {
  for (const auto& name : lockbench::strategy_specs()) {
    const std::string text = explain(name);
    for (const char* part : {"How it works\n", "How it fails\n", "Choose it\n", "Do not choose it\n"})
      EXPECT_NE(text.find(part), std::string::npos) << name << " lacks " << part;
  }
}

TEST(Explain, AVariantIsMarkedInItsStrategyText) {
  const std::string text = explain("advisory-xact:try");
  EXPECT_EQ(text.rfind("advisory-xact", 0), 0u);
  EXPECT_NE(text.find("advisory-xact:try (this one)"), std::string::npos);
  EXPECT_NE(flat(text).find("pg_try_advisory_xact_lock"), std::string::npos);
}

TEST(Explain, NamesThePostgresqlMechanismsEachStrategyReliesOn) {
  EXPECT_NE(flat(explain("held-tx")).find("55P03"), std::string::npos);
  EXPECT_NE(flat(explain("advisory-session:pooled")).find("you don't own a lock of type ExclusiveLock"),
            std::string::npos);
  EXPECT_NE(flat(explain("row-lease")).find("locked_at < now() - $ttl"), std::string::npos);
  EXPECT_NE(flat(explain("optimistic")).find("version = $v"), std::string::npos);
}

TEST(Explain, EveryStrategyFamilyShowsItsSpringJavaShapeBesideItsSql) {
  for (const auto& row : lockbench::strategy_registry()) {
    const std::string text = explain(std::string(row.spec));
    const auto at = text.find("\nIn Spring/Java\n  ```java\n");
    ASSERT_NE(at, std::string::npos) << row.spec << " has no Spring/Java shape";
    EXPECT_NE(text.find("\n  ```\n", at + 30), std::string::npos) << row.spec << ": the code block is not closed";
    EXPECT_LT(text.find("How it works"), at) << row.spec << ": the shape follows the SQL";
  }
  // The names a reviewer searches for.
  EXPECT_NE(explain("held-tx").find("@Transactional"), std::string::npos);
  EXPECT_NE(explain("optimistic").find("@Version"), std::string::npos);
  EXPECT_NE(explain("split-tx").find("setIdempotencyKey"), std::string::npos);
  EXPECT_NE(explain("after-commit").find("@TransactionalEventListener(phase = TransactionPhase.AFTER_COMMIT)"),
            std::string::npos);
  EXPECT_NE(explain("outbox").find("FOR UPDATE SKIP LOCKED"), std::string::npos);
  EXPECT_NE(explain("synchronized").find("ReentrantLock"), std::string::npos);
  EXPECT_NE(explain("advisory-session:pooled").find("pg_advisory_unlock"), std::string::npos);
  const std::string lease = explain("row-lease");
  for (const char* name : {"ShedLock", "JdbcTemplateLockProvider", "usingDbTime()", "lockAtMostFor"})
    EXPECT_NE(lease.find(name), std::string::npos) << name;
}

TEST(Explain, WrapsItsParagraphsToTerminalWidth) {
  for (const auto& name : lockbench::strategy_specs()) {
    const std::string text = explain(name);
    std::size_t start = 0;
    for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
      EXPECT_LE(end - start, 120u) << name << ": " << text.substr(start, end - start);
  }
}

TEST(Explain, RefusesAnUnknownStrategyOrVariantListingTheAcceptedOnes) {
  try {
    explain("redis");
    FAIL();
  } catch (const SettingError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos);
    EXPECT_NE(what.find("'redis' is unknown"), std::string::npos);
    EXPECT_NE(what.find("held-tx:nowait"), std::string::npos);
  }
  EXPECT_THROW(explain("held-tx:try"), SettingError);
}

TEST(Explain, TheListNamesEveryStrategyFamilyAndScenarioOfTheRegistries) {
  const std::string list = explain_list();
  for (const auto& row : lockbench::strategy_registry())
    EXPECT_NE(list.find(std::string("  ") + std::string(row.family)), std::string::npos) << row.family;
  for (const auto& sc : lockbench::scenario_registry())
    EXPECT_NE(list.find(std::string("  ") + std::string(sc.name)), std::string::npos) << sc.name;
}

TEST(Explain, EveryRegisteredScenarioTellsWhatItReproduces) {
  for (const auto& sc : lockbench::scenario_registry()) {
    EXPECT_GT(sc.story.size(), 200u) << sc.name << " has no story for explain";
    const std::string text = explain(std::string(sc.name));
    EXPECT_EQ(text.rfind("scenario " + std::string(sc.name), 0), 0u) << text;
    EXPECT_GT(text.size(), sc.summary.size() + 200) << sc.name;
  }
}

TEST(Explain, StatesTheRegistryPropertiesOfEachStrategy) {
  EXPECT_NE(explain("held-tx").find("holds a pooled connection during the partner call: yes"), std::string::npos);
  EXPECT_NE(explain("row-lease").find("holds a pooled connection during the partner call: no"), std::string::npos);
  EXPECT_NE(explain("advisory-session:pooled").find("excludes two requests for one key: no"), std::string::npos);
  EXPECT_NE(explain("row-lease").find("needs the record's row to exist before the first request: yes"),
            std::string::npos);
}

TEST(Explain, RowLeaseNamesShedlockAndTheArticlesExactVariant) {
  const std::string text = flat(explain("row-lease:article"));
  EXPECT_NE(text.find("ShedLock"), std::string::npos);
  EXPECT_NE(text.find("row-lease:article (this one)"), std::string::npos);
  EXPECT_NE(text.find("no owner check"), std::string::npos);
}

TEST(Explain, RedisLeaseNamesItsCommandsItsJavaShapeAndTheFailover) {
  const std::string text = flat(explain("redis-lease"));
  for (const char* words : {"SET lock:$k $me NX PX $ttl", "INCR", "redis.call('GET', KEYS[1]) == ARGV[1]",
                            "RedisLockRegistry", "Redisson", "watchdog", "failover", "same fencing token"})
    EXPECT_NE(text.find(words), std::string::npos) << words;
}

TEST(Explain, EtcdLeaseNamesItsRequestsItsJavaShapeTheLeaderChangeAndWhenToChooseEachLease) {
  const std::string text = flat(explain("etcd-lease"));
  for (const char* words : {"/v3/lease/grant", "create_revision(lock/$k) == 0", "mod_revision", "/v3/lease/keepalive",
                            "jetcd", "leader change", "no fencing token is handed out twice", "Choose row-lease",
                            "redis-lease when", "etcd-lease when", "etcd-lease:fenced", "etcd-lease:renew"})
    EXPECT_NE(text.find(words), std::string::npos) << words;
}

TEST(Explain, RowLeaseExplainsRenewalWithShedlockAndTheRenewableLockRegistry) {
  const std::string text = flat(explain("row-lease:renew"));
  for (const char* words : {"row-lease:renew (this one)", "KeepAliveLockProvider", "RenewableLockRegistry",
                            "lock_owner = $me AND locked_at >= now() - $ttl", "fencing still matters"})
    EXPECT_NE(text.find(words), std::string::npos) << words;
}

}  // namespace
}  // namespace lockbench::report

namespace lockbench::report {
namespace {

TEST(Explain, ProbesIsATopicThatTellsTheCascadeAndTheListNamesIt) {
  const std::string text = explain("probes");
  EXPECT_EQ(text.rfind("probes — ", 0), 0u) << text;
  for (const char* must : {"readiness", "liveness", "restart cascade", "--liveness db=off", "recovery block",
                           "--circuit-breaker", "--retry-budget", "split"})
    EXPECT_NE(text.find(must), std::string::npos) << must;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    EXPECT_LE(end - start, 120u) << text.substr(start, end - start);
  EXPECT_NE(explain_list().find("  probes"), std::string::npos);
}

TEST(Explain, VirtualThreadsIsATopicThatTellsWhereTheQueueFormsAndThePinning) {
  const std::string text = explain("virtual-threads");
  EXPECT_EQ(text.rfind("virtual-threads — ", 0), 0u) << text;
  for (const char* must : {"no Tomcat worker cap", "queue forms at the pool", "carrier", "JEP 491", "--carriers",
                           "--jdk 24", "ReentrantLock", "real world runs the same"})
    EXPECT_NE(text.find(must), std::string::npos) << must;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    EXPECT_LE(end - start, 120u) << text.substr(start, end - start);
  EXPECT_NE(explain_list().find("  virtual-threads"), std::string::npos);
  // The monitor strategy points at it; a strategy without a monitor does not.
  EXPECT_NE(explain("synchronized:wait").find("On virtual threads"), std::string::npos);
  EXPECT_EQ(explain("synchronized:try").find("On virtual threads"), std::string::npos);
  EXPECT_EQ(explain("held-tx").find("On virtual threads"), std::string::npos);
}

TEST(Explain, EachStrategySaysWhatKubernetesProbesDoToItByWhetherItHoldsAConnection) {
  EXPECT_NE(explain("held-tx").find("restart cascade"), std::string::npos);
  EXPECT_NE(explain("row-lease").find("no pod is restarted"), std::string::npos);
  for (const auto& name : lockbench::strategy_specs())
    EXPECT_NE(explain(name).find("Under Kubernetes probes"), std::string::npos) << name;
}

}  // namespace
}  // namespace lockbench::report
