// What an architect brings to a design review: the service's own Spring Boot
// configuration (application.properties or application.yml), read into
// lockbench settings so that `lockbench lint --from FILE` checks the service as
// configured. Spring's relaxed binding is followed: maximum-pool-size,
// maximumPoolSize and maximum_pool_size are one key.
//
//   spring.datasource.hikari.maximum-pool-size        --maximum-pool-size
//   spring.datasource.hikari.connection-timeout       --connection-timeout (ms, or 30s, or PT30S)
//   spring.datasource.hikari.leak-detection-threshold --leak-detection-threshold
//   spring.datasource.hikari.max-lifetime             --max-lifetime
//   server.tomcat.threads.max (server.tomcat.max-threads) --max-threads
//   server.tomcat.accept-count                        --accept-count
//   spring.cloud.openfeign.client.config.default.connect-timeout / read-timeout
//   feign.client.config.default.connect-timeout / read-timeout   --partner-connect-timeout / --partner-read-timeout
//   resilience4j.retry.instances.<name>.max-attempts  --partner-max-attempts
//   resilience4j.retry.instances.<name>.wait-duration --retry-backoff-base
//   resilience4j.retry.instances.<name>.exponential-max-wait-duration --retry-backoff-cap
//   spring.jpa.properties.hibernate.connection.provider_disables_autocommit=true
//   with spring.datasource.hikari.auto-commit=false   --delay-connection-acquisition on
//   spring.jpa.properties.hibernate.connection.provider_disables_autocommit=true
//   with spring.datasource.hikari.auto-commit=false   --delay-connection-acquisition on
//   spring.threads.virtual.enabled                    --virtual-threads
//   management.endpoint.health.probes.enabled (management.health.probes.enabled),
//   management.health.db.enabled, management.endpoint.health.group.<name>.include
//   / .exclude, management.endpoints.web.base-path    what each health path checks
//                                                     (SpringConfig::health, lint's check 6)
//   lockbench.<setting>                               any lockbench setting (strategy, lease-ttl, rate,
//                                                     partner-latency, scenario, pods, ...)
// Keys the file has and lockbench does not read are listed (ignored), never guessed.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/settings.hpp"
#include "report/lint.hpp"

namespace lockbench::cli {

struct SpringConfig {
  std::vector<std::pair<std::string, std::string>> applied;  // (lockbench setting, value) in file order
  std::vector<std::string> ignored;                         // the file's keys lockbench does not read
  std::map<std::string, std::string> key_of;                // lockbench setting -> the file's key that set it
  std::vector<std::string> notes;                           // configuration mistakes worth a line (lint prints them)
  report::SpringHealth health;                              // the actuator's management.* keys
};

// Reads FILE (.properties, .yml or .yaml) into `s`. Throws SettingError naming
// --from (unreadable file, bad YAML) or the Spring key and the lockbench
// setting it feeds (a bad value).
SpringConfig apply_spring_config(Settings& s, const std::string& path);

// A Spring duration in lockbench's words: "30000" (milliseconds, as Hikari and
// Feign take them), "30s", "500ms", "PT30S", "PT1M30S".
std::string spring_duration(const std::string& value);

}  // namespace lockbench::cli
