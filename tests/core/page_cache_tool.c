/* page_cache drop|load|resident|wait FILE: for the shell tests of cold starts (bench/page_cache.c does the work).
 *   drop: exit 0 when no byte of FILE is left in the page cache, 77 when the kernel kept some (tmpfs);
 *   load: reads FILE through, exit 0 when all of it is resident then, 1 when the kernel evicted some already;
 *   resident: prints "RESIDENT SIZE" in bytes;  wait: exit 0 once all of FILE is resident, 1 after 5 s. */
#include <stdio.h>
#include <string.h>

#include "page_cache.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: page_cache drop|load|resident|wait FILE\n");
    return 2;
  }
  if (strcmp(argv[1], "drop") == 0) {
    if (bench_drop_from_page_cache(argv[2]) != 0) return 1;
    return bench_resident_bytes(argv[2]) == 0 ? 0 : 77;
  }
  if (strcmp(argv[1], "load") == 0) {
    return bench_warm_page_cache(argv[2]) == 0 && bench_resident_bytes(argv[2]) == bench_file_size(argv[2]) ? 0 : 1;
  }
  if (strcmp(argv[1], "wait") == 0) return bench_wait_resident(argv[2]) ? 0 : 1;
  const int64_t resident = bench_resident_bytes(argv[2]);
  printf("%lld %lld\n", (long long)resident, (long long)bench_file_size(argv[2]));
  return resident < 0;
}
