// jemalloc's configuration in the executables that run simulations (lockbench,
// sim_bench; lockbench_malloc in core/CMakeLists.txt): the global that
// jemalloc documents for a program's own settings, read when it starts.
// MALLOC_CONF in the environment still overrides it.
//
// dirty_decay_ms:-1, muzzy_decay_ms:-1: pages a run frees are never given back
// to the kernel, so the next run (the next strategy, the next point of a
// sweep) reuses them instead of faulting them in again, which costs about
// 11 us a page on this project's virtual machines. It is what
// keep_freed_memory() asks of glibc's malloc (base/allocator.hpp): peak memory
// is unchanged, and it is returned at exit.
//
// thp:always: jemalloc marks its memory for transparent huge pages (madvise
// MADV_HUGEPAGE; it takes effect when the kernel's THP mode is "always" or
// "madvise"), so a process's first run faults its memory in 2 MB at a time:
// sim_bench's six runs take about 570 page faults instead of 4,700, and are
// 10 % faster for it; what use_huge_pages() does for glibc's heap.
extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "dirty_decay_ms:-1,muzzy_decay_ms:-1,thp:always";
}
