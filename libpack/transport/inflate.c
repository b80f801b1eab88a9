/* xpack_inflate_file: the transport form back into the mappable form, laid out as the writer lays it out. */
#include <stdlib.h>
#include <string.h>

#include "cachefile/cache_checks.h"
#include "cachefile/cache_write.h"
#include "common/error.h"
#include "transport/transport.h"
#include "xpc_format.h"

#define ALREADY_MAPPABLE "already in the mappable form (header flags bit 0 clear): nothing to inflate"

xpack_status xp_transport_inflate_view(const xp_view* v, const char* name, const xp_transport_sink* sink, int input_is_mapped,
                                       uint64_t* file_size, xpack_transport_stats* stats, xpack_error* err) {
  if (!(v->flags & XPC_FLAG_TRANSPORT)) {
    return xp_fail(err, XPACK_ERR_ARG, "%s: " ALREADY_MAPPABLE, name);
  }
  xpack_status st = xp_check_first(v, name, err);
  if (st != XPACK_OK) return st;
  const uint64_t count = v->regions.count;
  uint64_t* offsets = malloc((size_t)(count + 1) * sizeof *offsets);
  uint64_t* sizes = malloc((size_t)(count + 1) * sizeof *sizes);
  xp_rebuilt layout = {0};
  xp_transport_decoder decoder = {0};
  uint64_t data_end = 0, region_bytes = 0, frame_bytes = 0;
  if (offsets == NULL || sizes == NULL) {
    st = xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory for %llu region records", name, (unsigned long long)count);
    goto done;
  }
  st = xp_mappable_offsets(v, name, offsets, &data_end, err);
  if (st != XPACK_OK) goto done;
  for (uint64_t i = 0; i < count && st == XPACK_OK; i++) {
    xp_region r;
    xp_view_region(v, i, &r);
    sizes[i] = r.size;
    region_bytes += r.size;
    frame_bytes += r.stored_size;
    char what[256];
    if ((st = xp_transport_check_region(v, &r, what, sizeof what)) != XPACK_OK) {
      xp_fail(err, st, "%s: region %llu at offset %llu: %s", name, (unsigned long long)i, (unsigned long long)r.offset,
              what);
    }
  }
  if (st != XPACK_OK) goto done;
  st = xp_metadata_rebuild(v, name, offsets, sizes, v->page_alignment, data_end, 0, &layout, err);
  /* A file system too small for the declared size is found before gigabytes are written into it. */
  if (st == XPACK_OK && sink->room != NULL) st = sink->room(sink->context, layout.file_size, err);
  if (st == XPACK_OK) st = xp_transport_decoder_init(&decoder, err);
  if (st != XPACK_OK) goto done;
  decoder.release_input = input_is_mapped;
  for (uint64_t i = 0; i < count && st == XPACK_OK; i++) {
    xp_region r;
    xp_view_region(v, i, &r);
    char what[256];
    st = xp_transport_decode_region(&decoder, v, &r, sink, offsets[i], what, sizeof what, err);
    if (st == XPACK_ERR_CORRUPT) {
      xp_fail(err, st, "%s: region %llu at offset %llu: %s", name, (unsigned long long)i,
              (unsigned long long)r.offset, what);
    }
  }
  if (st == XPACK_OK) st = sink->write(sink->context, layout.header, sizeof layout.header, 0, err);
  if (st == XPACK_OK) st = sink->write(sink->context, layout.tail, layout.tail_size, layout.metadata_offset, err);
  if (st == XPACK_OK) {
    *file_size = layout.file_size;
    if (stats != NULL) {
      *stats = (xpack_transport_stats){count, region_bytes, frame_bytes, v->size, layout.file_size};
    }
  }
done:
  xp_transport_decoder_free(&decoder);
  free(layout.tail);
  free(offsets);
  free(sizes);
  return st;
}

static xpack_status inflate_view(void* context, const xp_view* v, const char* name, int input_is_mapped,
                                 const xp_transport_sink* sink, uint64_t* file_size, xpack_transport_stats* stats,
                                 xpack_error* err) {
  (void)context;
  return xp_transport_inflate_view(v, name, sink, input_is_mapped, file_size, stats, err);
}

xpack_status xpack_inflate_file(const char* in_path, const char* out_path, xpack_transport_stats* stats,
                                xpack_error* err) {
  if (in_path == NULL || out_path == NULL) return xp_fail(err, XPACK_ERR_ARG, "xpack_inflate_file: NULL path");
  return xp_transport_convert_file(in_path, out_path, 1, ALREADY_MAPPABLE, inflate_view, NULL, stats, err);
}

xpack_status xpack_inflate_range(int fd, uint64_t offset, uint64_t size, const char* name, const char* out_path,
                                 xpack_transport_stats* stats, xpack_error* err) {
  if (fd < 0 || name == NULL || out_path == NULL) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_inflate_range: negative fd, or NULL name or output path");
  }
  return xp_transport_convert_range(fd, offset, size, name, out_path, 1, ALREADY_MAPPABLE, inflate_view, NULL, stats,
                                    err);
}
