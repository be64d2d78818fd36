// What lint --code finds in a service's Java source: the seeds' anti-patterns,
// each at file:line with the call path that leads to it and the strategy
// family it is (`lockbench explain FAMILY`).
//
//   remote-in-tx      a @Transactional method (Spring's or Jakarta's, on the
//                     method or its class; REQUIRES_NEW, NOT_SUPPORTED and
//                     readOnly followed), or a TransactionTemplate block,
//                     reaches a remote call (RestTemplate, RestClient,
//                     WebClient...block(), a @FeignClient interface,
//                     java.net.http.HttpClient.send, OkHttp, Apache HttpClient,
//                     Retrofit, a gRPC blocking stub) through methods of its
//                     class and of injected beans, up to `depth` calls deep.
//                     Self-invocation, which bypasses the proxy, is said.
//   synchronized      `synchronized` (method or block) or a ReentrantLock in a
//                     Spring bean around a database or remote call: it
//                     excludes within one pod; on virtual threads below JDK 24
//                     a monitor also pins the carrier.
//   advisory-lock     pg_advisory_lock / unlock through JdbcTemplate or a
//                     repository @Query: unlock outside finally, lock and
//                     unlock that can run on different pooled connections,
//                     pg_advisory_xact_lock outside a transaction, a key from
//                     hashCode().
//   orm-lease         an @Entity with mapped lease columns (lockedUntil,
//                     lockOwner, ...) loaded and save()d: the stale write
//                     that releases someone else's lease.
//   optimistic-no-version  an entity without @Version read, modified and
//                     written in a method that also calls a partner.
//   unresolved        a note: a call the path needs could not be resolved
//                     (several implementations), so nothing is guessed.
//
// Recognised and not flagged: @TransactionalEventListener (AFTER_COMMIT, its
// default phase) and @Async methods, an outbox insert in the transaction (no
// remote call), a TransactionTemplate block that ends before the remote call,
// ShedLock's @SchedulerLock, synchronized around memory only.
#pragma once

#include <string>
#include <vector>

#include "lint_code/java_source.hpp"

namespace lockbench::lint_code {

struct PathStep {
  std::string file;
  int line = 0;
  std::string text;  // "PaymentService.pay (@Transactional on the class)", "restTemplate.postForEntity (RestTemplate)"
};

struct Finding {
  enum class Level { note, warn, flag };
  Level level = Level::flag;
  std::string kind;  // remote-in-tx, synchronized, advisory-lock, orm-lease, optimistic-no-version, unresolved
  std::string file;
  int line = 0;
  std::string message;
  std::vector<PathStep> path;  // from the entry (the transactional method, the lock) to the finding's call
  std::string family;          // lockbench explain FAMILY
  std::string strategy;        // the simulator's strategy of this shape ("" = none to simulate)
  std::string fix;             // in words, with explain names
  int remote_calls = 0;        // remote-in-tx: remote calls in the transaction (the simulated shape)
  bool pins = false;           // synchronized on virtual threads below JDK 24 (or an unknown JDK)
  // Filled by the command from the simulator (cli/lint_code_command.cpp).
  std::string consequence;
  std::string reproduce;
};

struct AnalyzeOptions {
  int depth = 4;  // calls followed from the entry (the transactional method, the lock)
  bool virtual_threads = false;
  int jdk = 0;  // 0 = not known
};

// Every finding of the tree, sorted by file, line and kind.
std::vector<Finding> analyze(const std::vector<JavaFile>& files, const AnalyzeOptions& options);

const char* level_name(Finding::Level l);
// The kinds in the order the text prints them (unresolved last).
const std::vector<std::string>& finding_kinds();

}  // namespace lockbench::lint_code
