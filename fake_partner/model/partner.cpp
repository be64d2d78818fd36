// Placeholder so the header can be coded against; the model lands next.
#include "fake_partner/model/partner.hpp"

#include <stdexcept>

namespace lockbench::partner {
struct Partner::Impl {
  Config cfg;
};
Partner::Partner(Config cfg) : impl_(std::make_unique<Impl>()) { impl_->cfg = std::move(cfg); }
Partner::~Partner() = default;
Partner::Partner(Partner&&) noexcept = default;
Partner& Partner::operator=(Partner&&) noexcept = default;
void Partner::reset(const ResetSpec&, Duration) {}
Plan Partner::arrive(const Call&, const Tags&, Duration) { throw std::logic_error("not yet"); }
Reply Partner::execute(std::uint64_t, Duration) { throw std::logic_error("not yet"); }
void Partner::complete(std::uint64_t, Duration, Delivery) {}
CheckReport Partner::check(Duration, const CheckInput&) { return {}; }
std::size_t Partner::inflight() const { return 0; }
nlohmann::json Partner::state_json() const { return {}; }
nlohmann::json Partner::metrics_json() const { return {}; }
std::string Partner::metrics_prometheus() const { return {}; }
void Partner::reset_metrics() {}
const Config& Partner::config() const { return impl_->cfg; }
void Partner::update_config(const nlohmann::json&) {}
void Partner::set_config(Config cfg) { impl_->cfg = std::move(cfg); }
}  // namespace lockbench::partner
