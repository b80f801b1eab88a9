/* The canonical order of a writer's regions and strings: by ticket (writer_internal.h), which is the order a
 * serial run would have made. writer_layout.c writes regions in that order while delegates are packed in
 * parallel, as far as it can foresee it; when the temporary file still differs from the serial layout, the
 * regions are copied once, in ticket order, into a new temporary file beside the target. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/file_io.h"
#include "common/safe_write.h"
#include "writer/writer_internal.h"

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

uint32_t* xp_writer_string_order(const xpack_writer* w) {
  uint32_t* order = malloc((w->string_count + 1) * sizeof *order);
  if (order == NULL) return NULL;
  for (size_t i = 0; i < w->string_count; i++) order[i] = (uint32_t)i;
  order_writer = w;
  qsort(order, w->string_count, sizeof *order, by_string_ticket);
  return order;
}

xpack_status xp_writer_canonical_regions(xpack_writer* w, xpack_error* err) {
  if (xp_writer_spool_drain_all(w) != 0) return xp_fail(err, XPACK_ERR_IO, "%s: %s", w->out_path, w->failure);
  uint32_t* order = malloc((w->region_count + 1) * sizeof *order);
  uint32_t* new_index = malloc((w->region_count + 1) * sizeof *new_index);
  xp_writer_region* placed = malloc((w->region_count + 1) * sizeof *placed);
  xp_safe_file fresh = XP_SAFE_FILE_NONE;
  xpack_status st = XPACK_OK;
  if (order == NULL || new_index == NULL || placed == NULL) {
    st = xp_fail(err, XPACK_ERR_NOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < w->region_count; i++) order[i] = (uint32_t)i;
  order_writer = w;
  qsort(order, w->region_count, sizeof *order, by_region_ticket);
  /* The serial layout, and whether the temporary file already is it (always so with one thread). */
  int in_place = 1;
  uint64_t end = w->data_offset;
  for (size_t i = 0; i < w->region_count; i++) {
    placed[i] = w->regions[order[i]];
    placed[i].offset = xp_writer_region_place(w, end, placed[i].size);
    in_place &= placed[i].offset == w->regions[order[i]].offset;
    new_index[order[i]] = (uint32_t)i;
    end = placed[i].offset + placed[i].size;
  }
  if (!in_place) {
    /* A second temporary file in the same folder and of the same kind (named at commit, or never), which
     * then replaces the first. */
    st = w->file.unnamed ? xp_safe_create_unnamed(&fresh, w->file.folder, w->out_path, err)
                         : xp_safe_create(&fresh, w->out_path, err);
    if (st != XPACK_OK) goto done;
    for (size_t i = 0; i < w->region_count; i++) {
      if (xp_copy_range(w->file.fd, w->regions[order[i]].offset, fresh.fd, placed[i].offset, placed[i].size) != 0) {
        st = xp_fail(err, XPACK_ERR_IO, "%s: cannot copy packed weights into a temporary file beside it: %s",
                     w->out_path, strerror(errno));
        goto done;
      }
    }
    xp_safe_abort(&w->file);
    w->file = fresh;
    fresh = XP_SAFE_FILE_NONE;
  }
  for (size_t i = 0; i < w->entry_count; i++) w->entries[i].region = new_index[w->entries[i].region];
  if (w->region_count > 0) memcpy(w->regions, placed, w->region_count * sizeof *placed); /* both NULL when 0 */
  w->data_end = end;
done:
  xp_safe_abort(&fresh);
  free(placed);
  free(new_index);
  free(order);
  return st;
}
