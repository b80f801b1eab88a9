/* page_cache drop|resident|wait FILE: for the shell tests of cold starts.
 *   drop: exit 0 when no page of FILE is left in the page cache, 77 when the kernel kept some (tmpfs);
 *   resident: prints "RESIDENT PAGES";  wait: exit 0 once every page is resident, 1 after 5 s. */
#include <stdio.h>
#include <string.h>

#include "page_cache.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: page_cache drop|resident|wait FILE\n");
    return 2;
  }
  if (strcmp(argv[1], "drop") == 0) return page_cache_drop(argv[2]) ? 0 : 77;
  if (strcmp(argv[1], "wait") == 0) return page_cache_wait_resident(argv[2]) ? 0 : 1;
  long pages = 0, n = page_cache_resident(argv[2], &pages);
  printf("%ld %ld\n", n, pages);
  return n < 0;
}
