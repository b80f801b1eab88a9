/* Whether this process maps a file (an open cache's mapping), from /proc/self/maps: the tests of the ExecuTorch
 * adapter tell by it whether a cache is still open. */
#ifndef XPACK_TESTS_PROC_MAPS_H
#define XPACK_TESTS_PROC_MAPS_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static inline bool process_maps(const char* path) {
  FILE* maps = fopen("/proc/self/maps", "r");
  if (maps == NULL) return false;
  char line[8192];
  bool found = false;
  while (!found && fgets(line, sizeof line, maps)) found = strstr(line, path) != NULL;
  fclose(maps);
  return found;
}

#endif
