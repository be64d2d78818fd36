// How a lockbench process asks glibc's allocator to keep the memory it frees,
// and to back its heap with huge pages.
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
//
// The first run still faults its heap in, 4 KB at a time: 5,700 faults for
// sim_bench's six runs, at about 11 us each on this host (a virtual machine's
// page fault also costs its host one), a tenth of their wall time again.
// use_huge_pages() grows the calling thread's heap once, without touching it,
// and marks it for transparent huge pages (madvise MADV_HUGEPAGE), so a first
// touch faults in 2 MB at once.
//
// With jemalloc serving malloc (LOCKBENCH_JEMALLOC, the default for lockbench
// and sim_bench: a sweep runs about 10 % faster), both are glibc's business and
// do nothing: core/jemalloc_conf.cpp has jemalloc keep freed memory and mark
// its memory for huge pages by its own settings.
#pragma once

#include <cstddef>
#include <string>

namespace lockbench {

// True when jemalloc serves this process's malloc (linked, or LD_PRELOADed).
bool jemalloc_active();

// The allocator serving malloc, for a result's provenance: "jemalloc 5.3.0-…"
// or "glibc 2.36" (or "unknown").
std::string allocator_name();

// Call once, first thing in main (before any thread starts). Sets the
// thresholds, then use_huge_pages() for the main thread. Returns false if the
// C library refused a setting (not glibc, or a value out of its range): the
// process then runs with the defaults, only slower. Under jemalloc it does
// nothing and returns true.
bool keep_freed_memory();

// Grows the calling thread's heap (its glibc arena) by kHugeHeapBytes and
// marks the whole 2 MB pages inside for transparent huge pages. Call it first
// thing in a thread that runs simulations (a sweep's, --jobs's); after
// keep_freed_memory(). Returns false when nothing was marked: not Linux with
// glibc, jemalloc serving malloc, a kernel without THP, or the block was
// mmap'd (keep_freed_memory() not called). With THP set to "never" the mark
// has no effect. Memory counts only once touched, 2 MB at a time.
bool use_huge_pages();

// The thresholds keep_freed_memory sets: blocks below kMmapThreshold come from
// the heap (32 MB is glibc's largest accepted value), and the heap's free top
// is kept up to kTrimThreshold.
inline constexpr std::size_t kMmapThreshold = std::size_t{32} << 20;
inline constexpr std::size_t kTrimThreshold = std::size_t{1} << 30;
// How much heap use_huge_pages() grows and marks: below kMmapThreshold, and
// more than a simulator run of the articles' incident uses (about 20 MB).
inline constexpr std::size_t kHugeHeapBytes = std::size_t{30} << 20;

}  // namespace lockbench
