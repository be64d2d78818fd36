#include "real/carriers.hpp"

namespace lockbench::real {

namespace {
thread_local VirtualThread* current = nullptr;
}  // namespace

Carriers::Carriers(int carriers) : carriers_(carriers), free_(carriers) {}

void Carriers::mount(bool start) {
  std::unique_lock lock(mu_);
  if (free_ > 0 && queue_.empty()) {
    --free_;
    return;
  }
  if (start) ++stats_.starts_waited;
  const std::uint64_t ticket = next_ticket_++;
  queue_.push_back(ticket);
  cv_.wait(lock, [&] { return free_ > 0 && queue_.front() == ticket; });
  queue_.pop_front();
  --free_;
  if (free_ > 0 && !queue_.empty()) cv_.notify_all();  // the next in line may mount too
}

void Carriers::unmount() {
  {
    std::lock_guard lock(mu_);
    ++free_;
  }
  cv_.notify_all();
}

void Carriers::pin() {
  std::lock_guard lock(mu_);
  ++pinned_;
  stats_.pinned_peak = std::max(stats_.pinned_peak, pinned_);
  if (pinned_ == carriers_) {
    ++stats_.stalls;
    stalled_since_ = Clock::now();
  }
}

void Carriers::unpin() {
  std::lock_guard lock(mu_);
  if (pinned_ == carriers_) stats_.stall_ended(Clock::now() - stalled_since_);
  --pinned_;
}

CarrierStats Carriers::stats() {
  std::lock_guard lock(mu_);
  CarrierStats s = stats_;
  if (pinned_ == carriers_) s.stall_ended(Clock::now() - stalled_since_);
  return s;
}

VirtualThread::VirtualThread(Carriers* carriers, bool start) : carriers_(carriers), outer_(current) {
  if (!carriers_) return;
  carriers_->mount(start);
  current = this;
}

VirtualThread::~VirtualThread() {
  if (!carriers_) return;
  if (pinned_) carriers_->unpin();
  if (!unmounted_) carriers_->unmount();
  current = outer_;
}

VirtualThread::Blocking::Blocking() {
  VirtualThread* t = current;
  if (!t || t->pinned_ || t->unmounted_) return;
  t->carriers_->unmount();
  t->unmounted_ = unmounted_ = true;
}

VirtualThread::Blocking::~Blocking() {
  if (!unmounted_) return;
  VirtualThread* t = current;
  t->carriers_->mount(false);
  t->unmounted_ = false;
}

void VirtualThread::pin() {
  VirtualThread* t = current;
  if (!t || t->pinned_) return;
  t->carriers_->pin();
  t->pinned_ = true;
}

void VirtualThread::unpin() {
  VirtualThread* t = current;
  if (!t || !t->pinned_) return;
  t->carriers_->unpin();
  t->pinned_ = false;
}

}  // namespace lockbench::real
