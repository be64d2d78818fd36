// The step a request is in, readable from another thread: leak detection names
// the step that held a connection too long (HikariCP logs the borrower's stack).
#pragma once

#include <atomic>

namespace lockbench::real {

struct StepNote {
  // Always a string literal (static storage), so a reader may keep the pointer.
  std::atomic<const char*> step{"pool.acquire"};
};

// The note of the request running on this thread (null outside requests).
inline StepNote*& current_step_note() {
  thread_local StepNote* note = nullptr;
  return note;
}

inline void note_step(const char* step) {
  if (StepNote* n = current_step_note()) n->step.store(step, std::memory_order_relaxed);
}

}  // namespace lockbench::real
