/* Prints "sha256hex  path" per file like sha256sum, feeding the generator's SHA-256 in irregular
 * chunk sizes so every buffering path (partial blocks, exact blocks, multi-block) is exercised. */
#include <stdio.h>

#include "sha256.h"

int main(int argc, char** argv) {
  static const size_t chunks[] = {1, 7, 64, 65, 63, 4096, 1 << 16};
  static unsigned char buf[1 << 16];
  int status = 0;
  for (int i = 1; i < argc; i++) {
    FILE* f = fopen(argv[i], "rb");
    if (!f) {
      perror(argv[i]);
      status = 1;
      continue;
    }
    sha256_ctx c;
    sha256_init(&c);
    size_t n, k = 0;
    while ((n = fread(buf, 1, chunks[k++ % (sizeof chunks / sizeof chunks[0])], f)) > 0) sha256_update(&c, buf, n);
    fclose(f);
    unsigned char d[32];
    char hex[65];
    sha256_final(&c, d);
    sha256_hex(d, hex);
    printf("%s  %s\n", hex, argv[i]);
  }
  return status;
}
