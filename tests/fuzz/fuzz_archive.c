/* libFuzzer harness: arbitrary bytes as a zip archive (an APK holding a cache), read through a descriptor as
 * `xpack verify app.apk!/assets/model.xpc` reads it: every member visited (xpack_archive_each), each found again
 * by its name (xpack_archive_find), which must give the same placement, and the name a cache usually has
 * looked for. Every member the reader accepts must lie inside the archive, before its central directory. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "xpack_archive.h"

static int g_fd = -1;

typedef struct visit {
  uint64_t archive_size;
  int count;
} visit;

static int check_member(void* context, const char* name, size_t length, const xpack_archive_member* m) {
  visit* v = context;
  if (m->data_offset > v->archive_size || m->stored_size > v->archive_size - m->data_offset) abort();
  if (m->method == XPACK_ARCHIVE_STORED && m->stored_size != m->size) abort();
  /* Found again by name: the same member (names are unique in an accepted archive). Names with a NUL byte
   * cannot be asked for by a C string. */
  if (v->count++ < 64 && length > 0 && memchr(name, 0, length) == NULL) {
    char* copy = strndup(name, length);
    xpack_archive_member again;
    xpack_error err;
    if (copy == NULL) return 1;
    if (xpack_archive_find(g_fd, "fuzz.apk", copy, &again, &err) != XPACK_OK) abort();
    if (again.data_offset != m->data_offset || again.stored_size != m->stored_size || again.method != m->method) abort();
    free(copy);
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (g_fd < 0 && (g_fd = memfd_create("fuzz_archive", MFD_CLOEXEC)) < 0) abort();
  if (ftruncate(g_fd, 0) != 0 || (size > 0 && pwrite(g_fd, data, size, 0) != (ssize_t)size)) abort();
  xpack_error err;
  visit v = {size, 0};
  (void)xpack_archive_each(g_fd, "fuzz.apk", check_member, &v, &err);
  xpack_archive_member m;
  if (xpack_archive_find(g_fd, "fuzz.apk", "assets/model.xpc", &m, &err) == XPACK_OK) {
    if (m.data_offset > size || m.stored_size > size - m.data_offset) abort();
  }
  return 0;
}
