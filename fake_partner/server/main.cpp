// fake_partner: the partner model behind HTTP, for the real world and for
// humans with curl. Prints "listening on ADDR:PORT" as its first stdout line
// (so a parent started with --port 0 learns the port), serves until SIGINT or
// SIGTERM, and refuses a bad flag or config with one line and exit code 2.
#include <CLI/CLI.hpp>
#include <boost/system/system_error.hpp>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "fake_partner/model/partner.hpp"
#include "fake_partner/server/http_api.hpp"
#include "fake_partner/server/server.hpp"

namespace {

using lockbench::SettingError;
namespace partner = lockbench::partner;
namespace ps = lockbench::partner_server;

partner::Config load_config(const std::string& path) {
  if (path.empty()) return {};
  std::ifstream in(path);
  if (!in) throw SettingError("--config: cannot read '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  const auto doc = nlohmann::json::parse(text.str(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    throw SettingError("--config: '" + path + "' is not a JSON object (see docs/reference/partner-api.md section E)");
  }
  try {
    return partner::Config::from_json(doc);
  } catch (const SettingError& e) {
    throw SettingError("--config " + path + ": " + e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  // A closed stdout/stderr pipe must not kill the server (sockets already use MSG_NOSIGNAL).
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"fake_partner: a slow third-party HTTP API (Auth0 v2 + Stripe v1 style) and its oracle"};
  ps::ServerOptions options;
  std::string config_path;
  std::string seed;  // parsed by hand: CLI11 would turn "-1" into 2^64 - 1
  std::string idle_timeout = "60s";
  app.add_option("--port", options.port, "TCP port; 0 picks a free one")->capture_default_str();
  app.add_option("--bind", options.bind_address, "address to listen on")->capture_default_str();
  app.add_option("--config", config_path, "JSON configuration document (docs/reference/partner-api.md section E)");
  app.add_option("--seed", seed, "seed for latencies and faults (overrides the config's)");
  app.add_option("--max-connections", options.max_connections,
                 "client connections; at the limit the oldest idle one is closed to make room")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--admin-connections", options.admin_connections,
                 "beyond --max-connections with none idle: this many more, for /admin/* only")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--max-header-bytes", options.max_header_bytes, "request line + headers; more gets 431")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--max-body-bytes", options.max_body_bytes, "request body; more gets 413")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--admin-host", options.admin_hosts,
                 "a Host name besides addresses and localhost that /admin/* answers (e.g. the Kubernetes "
                 "service name); repeatable")
      ->type_name("NAME");
  app.add_option("--idle-timeout", idle_timeout, "close a connection idle (or mid-request) this long, e.g. 60s")
      ->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    std::cerr << "fake_partner: " << e.what() << "\n";
    return 2;
  }

  try {
    options.idle_timeout = lockbench::parse_duration(idle_timeout, "--idle-timeout");
    if (options.idle_timeout <= lockbench::Duration{0}) throw SettingError("--idle-timeout: must be more than 0");
    partner::Config config = load_config(config_path);
    if (!seed.empty()) {
      std::uint64_t value = 0;
      const auto [end, ec] = std::from_chars(seed.data(), seed.data() + seed.size(), value);
      if (ec != std::errc() || end != seed.data() + seed.size()) {
        throw SettingError("--seed: '" + seed + "' is not a seed (use an integer from 0 to 2^64-1)");
      }
      config = config.merged({{"seed", value}});
    }
    partner::Partner model(std::move(config));
    ps::HttpApi api(model);
    std::unique_ptr<ps::Server> server;
    try {
      server = std::make_unique<ps::Server>(options, api);
    } catch (const boost::system::system_error& e) {
      std::cerr << "fake_partner: --bind/--port: cannot listen on " << options.bind_address << ":" << options.port
                << ": " << e.code().message() << "\n";
      return 2;
    }
    server->handle_signals();
    std::cout << "listening on " << options.bind_address << ":" << server->port() << std::endl;
    server->run();
    std::cerr << "fake_partner: stopped\n";
    return 0;
  } catch (const SettingError& e) {
    std::cerr << "fake_partner: " << e.what() << "\n";
    return 2;
  }
}
