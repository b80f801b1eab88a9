/* flipbyte FILE OFFSET [MASK [OFFSET MASK]...]: XORs bytes of FILE in place (default mask 0x01), one per
 * OFFSET MASK pair. For corruption tests; a pair that undoes the previous flip and one that makes the next
 * cost one process. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: flipbyte FILE OFFSET [MASK [OFFSET MASK]...]\n");
    return 2;
  }
  int fd = open(argv[1], O_RDWR);
  if (fd < 0) {
    perror(argv[1]);
    return 1;
  }
  for (int i = 2; i < argc; i += 2) {
    long long offset = strtoll(argv[i], NULL, 0);
    unsigned mask = i + 1 < argc ? (unsigned)strtoul(argv[i + 1], NULL, 0) : 1u;
    unsigned char b;
    if (pread(fd, &b, 1, offset) != 1) {
      fprintf(stderr, "%s: no byte at offset %lld\n", argv[1], offset);
      return 1;
    }
    b ^= (unsigned char)mask;
    if (pwrite(fd, &b, 1, offset) != 1) {
      perror(argv[1]);
      return 1;
    }
  }
  close(fd);
  return 0;
}
