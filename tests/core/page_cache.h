/* Test helpers: what of a file the page cache holds, and dropping it from there (what makes a file "cold"). */
#ifndef XPACK_TESTS_PAGE_CACHE_H
#define XPACK_TESTS_PAGE_CACHE_H

/* Pages of path in the page cache (mincore on a mapping, which reads nothing), with its page count in *pages;
 * -1 when the file cannot be mapped or is empty. */
long page_cache_resident(const char* path, long* pages);

/* Drops path from the page cache (fdatasync, POSIX_FADV_DONTNEED). 1 when no page of it is left there, 0 when
 * the kernel kept some (tmpfs keeps them all). */
int page_cache_drop(const char* path);

/* Waits up to 5 s for every page of path to be in the page cache. 1 when they are. */
int page_cache_wait_resident(const char* path);

#endif
