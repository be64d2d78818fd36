// The fixture of the socket-level tests: a fake_partner child process with a
// config file, seeded state and an HTTP client.
#pragma once

#include <httplib.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fake_partner/server/test_support.hpp"

namespace lockbench::partner_server::testing {

using nlohmann::json;
using namespace std::chrono_literals;

inline const json kReset = {
    {"seed", 1},
    {"persons", {{{"identities", {"auth0|u1", "google-oauth2|u1"}}, {"primary", "auth0|u1"}},
                 {{"identities", {"auth0|u2", "google-oauth2|u2"}}, {"primary", "auth0|u2"}}}},
    {"orders", {{{"order_id", "o1"}, {"amount", 2500}, {"currency", "eur"}}}}};

// A config document in a temporary file, removed with the object.
class ConfigFile {
 public:
  explicit ConfigFile(const json& doc) {
    char name[] = "/tmp/fake_partner_test_XXXXXX";
    const int fd = mkstemp(name);
    path_ = name;
    close(fd);
    std::ofstream(path_) << doc.dump();
  }
  ~ConfigFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A started server with latency 0 (tests that need a delay set one) and seeded state.
class FakePartner : public ::testing::Test {
 protected:
  void start(json config = json::object(), std::vector<std::string> extra = {}) {
    json doc = {{"latency", {{"*", {{"dist", "fixed"}, {"ms", 0}}}}}};
    if (config.is_object()) doc.merge_patch(config);  // start({}, ...) passes null
    config_ = std::make_unique<ConfigFile>(doc);
    extra.insert(extra.begin(), {"--config", config_->path()});
    server_ = std::make_unique<PartnerProcess>(extra);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    client_->set_read_timeout(5, 0);
    client_->set_connection_timeout(2, 0);
    auto res = client_->Post("/admin/reset", kReset.dump(), "application/json");
    ASSERT_TRUE(res) << httplib::to_string(res.error());
    ASSERT_EQ(res->status, 200) << res->body;
  }
  void SetUp() override { start(); }

  httplib::Client& http() { return *client_; }
  std::uint16_t port() const { return server_->port(); }
  json get_json(const std::string& path) {
    auto res = client_->Get(path.c_str());
    if (!res) return json();
    return json::parse(res->body, nullptr, false);
  }
  json check() {
    auto res = client_->Post("/admin/check", "", "application/json");
    return res ? json::parse(res->body, nullptr, false) : json();
  }

  std::unique_ptr<ConfigFile> config_;
  std::unique_ptr<PartnerProcess> server_;
  std::unique_ptr<httplib::Client> client_;
};

inline json body_of(const httplib::Result& res) { return res ? json::parse(res->body, nullptr, false) : json(); }

}  // namespace lockbench::partner_server::testing
