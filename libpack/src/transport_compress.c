/* xpack_compress_file: a mappable cache into the transport form, each region one zstd frame. */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_getCParams: the window a level would choose */
#include <zstd.h>

#include "error.h"
#include "transport.h"
#include "xpc_format.h"

typedef struct compressor {
  ZSTD_CCtx* cctx;
  uint8_t* buffer;
  int level;
} compressor;

/* Compresses bytes[0, size) into one frame written at offset; *frame_size receives its length. */
static xpack_status compress_region(compressor* c, const uint8_t* bytes, uint64_t size, const xt_sink* sink,
                                    uint64_t offset, uint64_t* frame_size, const char* name, uint64_t index,
                                    xpack_error* err) {
  /* Frames must decode within an 8 MiB window (docs/FORMAT.md 9.2); a level's own choice may be larger. */
  ZSTD_compressionParameters cp = ZSTD_getCParams(c->level, size, 0);
  size_t failed = ZSTD_CCtx_reset(c->cctx, ZSTD_reset_session_only);
  if (!ZSTD_isError(failed)) {
    failed = ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_windowLog,
                                    cp.windowLog > XT_WINDOW_LOG_MAX ? XT_WINDOW_LOG_MAX : 0);
  }
  if (!ZSTD_isError(failed)) failed = ZSTD_CCtx_setPledgedSrcSize(c->cctx, size);
  ZSTD_inBuffer in = {bytes, (size_t)size, 0};
  uint64_t written = 0;
  for (size_t more = 1; !ZSTD_isError(failed) && more != 0;) {
    ZSTD_outBuffer out = {c->buffer, XT_BUFFER_SIZE, 0};
    more = ZSTD_compressStream2(c->cctx, &out, &in, ZSTD_e_end);
    if (ZSTD_isError(more)) {
      failed = more;
      break;
    }
    xpack_status st = sink->write(sink->context, c->buffer, out.pos, offset + written, err);
    if (st != XPACK_OK) return st;
    written += out.pos;
  }
  if (ZSTD_isError(failed)) {
    return xpack_fail(err, XPACK_ERR_NOMEM, "%s: region %llu: zstd compression failed: %s", name,
                      (unsigned long long)index, ZSTD_getErrorName(failed));
  }
  *frame_size = written;
  return XPACK_OK;
}

/* Every region of v, checked against its XXH3-64 and compressed back to back from data_offset. */
static xpack_status compress_regions(const xpc_view* v, const char* name, int level, const xt_sink* sink,
                                     uint64_t data_offset, uint64_t* offsets, uint64_t* stored, uint64_t* data_end,
                                     xpack_error* err) {
  compressor c = {ZSTD_createCCtx(), malloc(XT_BUFFER_SIZE), level};
  xpack_status st = XPACK_OK;
  if (c.cctx == NULL || c.buffer == NULL ||
      ZSTD_isError(ZSTD_CCtx_setParameter(c.cctx, ZSTD_c_compressionLevel, level)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(c.cctx, ZSTD_c_contentSizeFlag, 1)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(c.cctx, ZSTD_c_checksumFlag, 0))) {
    st = xpack_fail(err, XPACK_ERR_NOMEM, "%s: out of memory for a zstd compression context", name);
  }
  uint64_t cursor = data_offset;
  for (uint64_t i = 0; i < v->regions.count && st == XPACK_OK; i++) {
    xpc_region r;
    xpc_view_region(v, i, &r);
    const uint8_t* bytes = v->base + r.offset;
    uint64_t h = XXH3_64bits(bytes, (size_t)r.size);
    if (h != r.hash) {
      st = xpack_fail(err, XPACK_ERR_CORRUPT,
                      "%s: region %llu at offset %llu: XXH3-64 of its %llu bytes is %016llx, the record says %016llx",
                      name, (unsigned long long)i, (unsigned long long)r.offset, (unsigned long long)r.size,
                      (unsigned long long)h, (unsigned long long)r.hash);
      break;
    }
    offsets[i] = cursor;
    st = compress_region(&c, bytes, r.size, sink, cursor, &stored[i], name, i, err);
    cursor += stored[i];
  }
  *data_end = cursor;
  ZSTD_freeCCtx(c.cctx);
  free(c.buffer);
  return st;
}

static xpack_status compress_view(const xpc_view* v, const char* name, int level, const xt_sink* sink,
                                  uint64_t* file_size, xpack_transport_stats* stats, xpack_error* err) {
  xpack_status st = xt_check_source(v, name, err);
  if (st != XPACK_OK) return st;
  const uint64_t count = v->regions.count;
  uint64_t* offsets = malloc((size_t)(count + 1) * sizeof *offsets);
  uint64_t* stored = malloc((size_t)(count + 1) * sizeof *stored);
  if (offsets == NULL || stored == NULL) {
    free(offsets);
    free(stored);
    return xpack_fail(err, XPACK_ERR_NOMEM, "%s: out of memory for %llu region records", name,
                      (unsigned long long)count);
  }
  uint64_t data_end = 0;
  xt_layout layout = {0};
  st = compress_regions(v, name, level, sink, XPC_HEADER_SIZE, offsets, stored, &data_end, err);
  if (st == XPACK_OK) {
    st = xt_build_layout(v, name, offsets, stored, XPC_HEADER_SIZE, data_end, XPC_FLAG_TRANSPORT, &layout, err);
  }
  if (st == XPACK_OK) st = sink->write(sink->context, layout.header, sizeof layout.header, 0, err);
  if (st == XPACK_OK) st = sink->write(sink->context, layout.tail, layout.tail_size, layout.metadata_offset, err);
  if (st == XPACK_OK) {
    *file_size = layout.file_size;
    if (stats != NULL) {
      *stats = (xpack_transport_stats){count, 0, data_end - XPC_HEADER_SIZE, v->size, layout.file_size};
      for (uint64_t i = 0; i < count; i++) {
        xpc_region r;
        xpc_view_region(v, i, &r);
        stats->region_bytes += r.size;
      }
    }
  }
  free(layout.tail);
  free(offsets);
  free(stored);
  return st;
}

static xpack_status compress_with_level(void* context, const xpc_view* v, const char* name, int input_is_mapped,
                                        const xt_sink* sink, uint64_t* file_size, xpack_transport_stats* stats,
                                        xpack_error* err) {
  (void)input_is_mapped;
  return compress_view(v, name, *(const int*)context, sink, file_size, stats, err);
}

xpack_status xpack_compress_file(const char* in_path, const char* out_path, int level, xpack_transport_stats* stats,
                                 xpack_error* err) {
  if (in_path == NULL || out_path == NULL) return xpack_fail(err, XPACK_ERR_ARG, "xpack_compress_file: NULL path");
  if (level < XPACK_ZSTD_LEVEL_MIN || level > XPACK_ZSTD_LEVEL_MAX) {
    return xpack_fail(err, XPACK_ERR_ARG, "zstd level %d: expected %d to %d", level, XPACK_ZSTD_LEVEL_MIN,
                      XPACK_ZSTD_LEVEL_MAX);
  }
  return xt_convert_file(in_path, out_path, 0, "already in the transport form", compress_with_level, &level, stats,
                         err);
}
