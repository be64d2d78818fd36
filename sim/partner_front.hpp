// The simulated partner: the fake partner's own model library
// (fake_partner/model) driven in virtual time instead of over HTTP.
//
// One attempt arriving at t:
//   arrive(t) -> execute at t + apply_after -> the answer leaves at t + delay
//   (+ the fault's extra time) -> complete.
// The client's read timeout bounds what the caller waits for (its keep-alive
// connection is open, as the real client's is): a hang
// or a late answer is failure "timeout", a reset "reset", garbage or a
// truncated body "bad_response". The partner still executes and completes such
// a call, with Delivery::lost when the client was gone.
#pragma once

#include <optional>
#include <coroutine>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/settings.hpp"
#include "core/world.hpp"
#include "fake_partner/model/partner.hpp"
#include "sim/event_loop.hpp"

namespace lockbench::sim {

class PartnerFront {
 public:
  // `reset`: the partner's reset document (Scenario::partner_reset).
  PartnerFront(EventLoop& loop, const Settings& s, const nlohmann::json& reset);

  struct Attempt {
    PartnerFront& front;
    const PartnerCall* call;  // the caller's: a copy here would be a coroutine temporary (GCC 12 mishandles those)
    int owner;  // the calling pod: its resumption is frozen or dropped with it
    std::size_t flight = 0;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h);
    PartnerReply await_resume();
  };
  // co_await: one attempt, answered in virtual time.
  Attempt attempt(const PartnerCall& call, int owner) { return Attempt{*this, &call, owner}; }

  std::int64_t calls() const { return calls_; }
  // The result's partner block: {calls, violations{kind: n}, max_inflight_per_person, details[...]},
  // judged against what the service's database holds (Scenario::service_view).
  nlohmann::json report(const nlohmann::json& service);
  // --partner-faults' window (faults with from_ms / until_ms), if any.
  std::optional<partner::Config::Window> fault_window() const { return model_.config().fault_window(); }

 private:
  struct Flight {  // a new field is also reset in new_flight()
    std::uint64_t call_id = 0;
    int owner = kGlobal;
    int status = 0;          // what execute() answered
    partner::Error error = partner::Error::none;
    std::string object_id;  // a charge's id
    bool replayed = false;
    bool client_gave_up = false;
    partner::FaultPlan::Kind fault = partner::FaultPlan::Kind::none;
    std::coroutine_handle<> client;  // resumed by on_answer, when the answer arrives as it leaves
    int refs = 0;            // the client's resumption and the partner's completion
  };
  static void on_execute(void* self, std::uint64_t flight);
  static void on_complete(void* self, std::uint64_t flight);
  static void on_answer(void* self, std::uint64_t flight);
  std::size_t new_flight();
  void drop_ref(std::size_t i);

  EventLoop& loop_;
  partner::Partner model_;
  Duration client_timeout_;
  std::vector<Flight> flights_;  // slots reused through free_
  std::vector<std::size_t> free_;
  partner::Reply reply_;  // execute()'s answer (reused: no Reply built and destroyed per call)
  partner::Tags tags_;  // the attempt's tags handed to the model (reused: no allocation per call); tenant stays "default"
  std::int64_t calls_ = 0;
};

}  // namespace lockbench::sim
