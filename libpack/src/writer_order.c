/* The canonical order of a writer's regions and strings: by ticket (writer_internal.h), which is the order a
 * serial run would have made. Packing delegates in parallel stores regions in arrival order; when that
 * differs, the regions are copied once, in ticket order, into a new temporary file beside the target. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "temp_files.h"
#include "writer_internal.h"

#define WR_COPY_CHUNK (1u << 20)

static _Thread_local const xpack_writer* order_writer;

static int by_region_ticket(const void* pa, const void* pb) {
  const uint32_t a = *(const uint32_t*)pa, b = *(const uint32_t*)pb;
  const uint64_t ta = order_writer->regions[a].ticket, tb = order_writer->regions[b].ticket;
  if (ta != tb) return ta < tb ? -1 : 1;
  return a < b ? -1 : a > b;
}

static int by_string_ticket(const void* pa, const void* pb) {
  const uint32_t a = *(const uint32_t*)pa, b = *(const uint32_t*)pb;
  const uint64_t ta = order_writer->strings[a].ticket, tb = order_writer->strings[b].ticket;
  if (ta != tb) return ta < tb ? -1 : 1;
  return a < b ? -1 : a > b;
}

uint32_t* wr_string_order(const xpack_writer* w) {
  uint32_t* order = malloc((w->string_count + 1) * sizeof *order);
  if (order == NULL) return NULL;
  for (size_t i = 0; i < w->string_count; i++) order[i] = (uint32_t)i;
  order_writer = w;
  qsort(order, w->string_count, sizeof *order, by_string_ticket);
  return order;
}

static uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) & ~(a - 1); }

static int copy_range(int from, uint64_t from_offset, int to, uint64_t to_offset, uint64_t size, uint8_t* buf) {
  while (size > 0) {
    size_t n = size < WR_COPY_CHUNK ? (size_t)size : WR_COPY_CHUNK;
    ssize_t k = pread(from, buf, n, (off_t)from_offset);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      if (k == 0) errno = EIO;
      return -1;
    }
    for (ssize_t done = 0; done < k;) {
      ssize_t m = pwrite(to, buf + done, (size_t)(k - done), (off_t)(to_offset + (uint64_t)done));
      if (m < 0 && errno == EINTR) continue;
      if (m < 0) return -1;
      done += m;
    }
    from_offset += (uint64_t)k;
    to_offset += (uint64_t)k;
    size -= (uint64_t)k;
  }
  return 0;
}

xpack_status wr_canonical_regions(xpack_writer* w, xpack_error* err) {
  uint32_t* order = malloc((w->region_count + 1) * sizeof *order);
  uint32_t* new_index = malloc((w->region_count + 1) * sizeof *new_index);
  wr_region* moved = malloc((w->region_count + 1) * sizeof *moved);
  uint8_t* buf = NULL;
  char* tmp_path = NULL;
  int fd = -1;
  xpack_status st = XPACK_OK;
  if (order == NULL || new_index == NULL || moved == NULL) {
    st = xpack_fail(err, XPACK_ERR_NOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < w->region_count; i++) order[i] = (uint32_t)i;
  order_writer = w;
  qsort(order, w->region_count, sizeof *order, by_region_ticket);
  size_t first_moved = 0;
  while (first_moved < w->region_count && order[first_moved] == first_moved) first_moved++;
  if (first_moved == w->region_count) goto done; /* arrived in ticket order (always so with one thread) */
  buf = malloc(WR_COPY_CHUNK);
  size_t n = strlen(w->tmp_path) + 1;
  tmp_path = malloc(n);
  if (buf == NULL || tmp_path == NULL) {
    st = xpack_fail(err, XPACK_ERR_NOMEM, "out of memory");
    goto done;
  }
  memcpy(tmp_path, w->tmp_path, n);
  memcpy(tmp_path + n - 7, "XXXXXX", 6); /* ".<name>.XXXXXX": the same pattern, so a killed run's is removed */
  fd = xp_temp_create(tmp_path);
  if (fd < 0) {
    st = xpack_fail(err, XPACK_ERR_IO, "%s: cannot create a temporary file beside it: %s", w->out_path,
                    strerror(errno));
    goto done;
  }
  fchmod(fd, 0644);
  uint64_t end = w->data_offset;
  for (size_t i = 0; i < w->region_count; i++) {
    wr_region r = w->regions[order[i]];
    uint64_t align = r.size >= w->page_alignment ? w->page_alignment : w->region_alignment;
    uint64_t offset = align_up(end, align);
    if (copy_range(w->fd, r.offset, fd, offset, r.size, buf) != 0) {
      st = xpack_fail(err, XPACK_ERR_IO, "%s: cannot copy packed weights into a temporary file beside it: %s",
                      w->out_path, strerror(errno));
      goto done;
    }
    r.offset = offset;
    moved[i] = r;
    new_index[order[i]] = (uint32_t)i;
    end = offset + r.size;
  }
  for (size_t i = 0; i < w->entry_count; i++) w->entries[i].region = new_index[w->entries[i].region];
  memcpy(w->regions, moved, w->region_count * sizeof *moved);
  unlink(w->tmp_path);
  close(w->fd);
  w->fd = fd;
  fd = -1;
  free(w->tmp_path);
  w->tmp_path = tmp_path;
  tmp_path = NULL;
  w->data_end = end;
done:
  if (fd >= 0) {
    close(fd);
    unlink(tmp_path);
  }
  free(tmp_path);
  free(buf);
  free(moved);
  free(new_index);
  free(order);
  return st;
}
