/* Files in the page cache, for the benchmarks: `xpack bench` (tools/cmd_bench*.c) and xpack-bench-open
 * (bench/open_scaling.c), and for the tests of cold starts (tests/core/page_cache_tool.c, provider_quirks.c).
 * libc only. */
#ifndef XPACK_BENCH_PAGE_CACHE_H
#define XPACK_BENCH_PAGE_CACHE_H

#include <stdint.h>

/* Bytes of path resident in the page cache (mincore), or -1 with errno set. */
int64_t bench_resident_bytes(const char* path);
/* The same for the bytes [offset, offset + size) of path (cut at its end). */
int64_t bench_resident_range(const char* path, uint64_t offset, uint64_t size);
/* Writes the file's dirty pages back, then posix_fadvise(POSIX_FADV_DONTNEED) over the whole file. Returns 0
 * or -1. */
int bench_drop_from_page_cache(const char* path);
/* Reads the file through so that it is in the page cache. Returns 0 or -1. */
int bench_warm_page_cache(const char* path);
/* Waits up to 5 s for the whole file to be in the page cache (a read in the background). 1 when it is. */
int bench_wait_resident(const char* path);
/* Size of a file, or -1. */
int64_t bench_file_size(const char* path);

#endif
