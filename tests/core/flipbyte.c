/* flipbyte FILE OFFSET [MASK]: XORs one byte of FILE in place (default mask 0x01). For corruption tests. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: flipbyte FILE OFFSET [MASK]\n");
    return 2;
  }
  long long offset = strtoll(argv[2], NULL, 0);
  unsigned mask = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 0) : 1u;
  int fd = open(argv[1], O_RDWR);
  unsigned char b;
  if (fd < 0 || pread(fd, &b, 1, offset) != 1) {
    perror(argv[1]);
    return 1;
  }
  b ^= (unsigned char)mask;
  if (pwrite(fd, &b, 1, offset) != 1) {
    perror(argv[1]);
    return 1;
  }
  close(fd);
  return 0;
}
