// How a lockbench process asks glibc's allocator to keep the memory it frees.
//
// A simulator run allocates its samples, events and partner state, frees them
// at its end, and the next run (the next strategy, the next point of a sweep)
// allocates them again. With glibc's defaults, blocks from 128 KB up are
// mmap'd and unmapped one by one, and a heap whose free top exceeds the trim
// threshold is given back to the kernel: each run then faults its pages in
// again (9,200 page faults for sim_bench's six runs, a tenth of their wall time
// on this host's virtual machine). keep_freed_memory() raises both thresholds,
// so freed memory stays in the process for the next run; peak memory is what
// it was, and it is returned at exit.
#pragma once

#include <cstddef>

namespace lockbench {

// Call once, first thing in main (before any thread starts). Returns false if
// the C library refused a setting (not glibc, or a value out of its range):
// the process then runs with the defaults, only slower.
bool keep_freed_memory();

// The thresholds it sets: blocks below kMmapThreshold come from the heap (32 MB
// is glibc's largest accepted value), and the heap's free top is kept up to
// kTrimThreshold.
inline constexpr std::size_t kMmapThreshold = std::size_t{32} << 20;
inline constexpr std::size_t kTrimThreshold = std::size_t{1} << 30;

}  // namespace lockbench
