/* xpack_compress_file: a mappable cache into the transport form, each region one zstd frame. Regions are
 * compressed by several threads at once when asked, each frame by the same streaming calls whichever thread
 * makes it, so the file is the same bytes for every thread count. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_getCParams: the window a level would choose */
#include <zstd.h>

#include "cachefile/cache_checks.h"
#include "cachefile/cache_open.h"
#include "cachefile/cache_write.h"
#include "common/error.h"
#include "common/quiet_thread.h"
#include "transport/transport.h"
#include "xpc_format.h"

typedef struct compressor {
  ZSTD_CCtx* cctx;
  uint8_t* buffer;
  int level;
} compressor;

/* bytes[0, size) as one frame of raw blocks (128 KiB each, a window of 128 KiB, the content size in 8 bytes)
 * written at offset: what a region is stored as where the frames so far would otherwise expand past
 * XP_TRANSPORT_EXPANSION_MAX (constant weights: zstd's RLE blocks take 4 bytes per 128 KiB). */
static xpack_status write_raw_frame(const uint8_t* bytes, uint64_t size, const xp_transport_sink* sink,
                                    uint64_t offset, uint64_t* frame_size, xpack_error* err) {
  enum { BLOCK = 128 * 1024 };
  uint8_t header[14] = {0x28, 0xB5, 0x2F, 0xFD, 0xC0 /* 8-byte Frame_Content_Size */, (17 - 10) << 3 /* 2^17 */};
  for (int i = 0; i < 8; i++) header[6 + i] = (uint8_t)(size >> (8 * i));
  xpack_status st = sink->write(sink->context, header, sizeof header, offset, err);
  uint64_t at = sizeof header;
  for (uint64_t done = 0; st == XPACK_OK && done < size;) {
    const uint32_t n = size - done > BLOCK ? BLOCK : (uint32_t)(size - done);
    const uint32_t block = (done + n == size ? 1u : 0u) | (n << 3); /* last?, raw, size */
    const uint8_t block_header[3] = {(uint8_t)block, (uint8_t)(block >> 8), (uint8_t)(block >> 16)};
    st = sink->write(sink->context, block_header, sizeof block_header, offset + at, err);
    if (st == XPACK_OK) st = sink->write(sink->context, bytes + done, n, offset + at + 3, err);
    at += 3 + n;
    done += n;
  }
  if (st == XPACK_OK) *frame_size = at;
  return st;
}

/* Compresses bytes[0, size) into one frame written at offset; *frame_size receives its length. */
static xpack_status compress_region(compressor* c, const uint8_t* bytes, uint64_t size, const xp_transport_sink* sink,
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
    return xp_fail(err, XPACK_ERR_NOMEM, "%s: region %llu: zstd compression failed: %s", name,
                   (unsigned long long)index, ZSTD_getErrorName(failed));
  }
  *frame_size = written;
  return XPACK_OK;
}

/* A region at most this large is compressed into memory by a worker and written by the caller in order;
 * a larger one is streamed to the output by the caller alone, so memory stays bounded by threads times this. */
#define FRAME_IN_MEMORY_MAX ((uint64_t)64 << 20)

typedef struct memory_frame {
  uint8_t* bytes;
  size_t size, capacity;
} memory_frame;

/* Writes at `offset` in the frame (a raw frame is written over a compressed one from 0). */
static xpack_status memory_write(void* context, const uint8_t* bytes, size_t n, uint64_t offset, xpack_error* err) {
  memory_frame* f = context;
  const size_t end = (size_t)offset + n;
  if (end > f->capacity) {
    size_t capacity = f->capacity ? f->capacity : XT_BUFFER_SIZE;
    while (capacity < end) capacity *= 2;
    uint8_t* bigger = realloc(f->bytes, capacity);
    if (bigger == NULL) return xp_fail(err, XPACK_ERR_NOMEM, "out of memory for a compressed frame");
    f->bytes = bigger;
    f->capacity = capacity;
  }
  memcpy(f->bytes + offset, bytes, n);
  if (end > f->size) f->size = end;
  return XPACK_OK;
}

/* One region's work: its bytes checked against the region's XXH3-64, then compressed into frame. */
typedef struct frame_job {
  compressor c;
  const xp_view* v;
  const char* name;
  uint64_t index;
  memory_frame frame;
  xpack_status status;
  xpack_error err;
} frame_job;

static xpack_status check_region(const xp_view* v, const char* name, uint64_t i, const xp_region* r,
                                 xpack_error* err) {
  char what[160];
  if (xp_region_bytes_match(v, r, what, sizeof what)) return XPACK_OK;
  return xp_fail(err, XPACK_ERR_CORRUPT, "%s: region %llu at offset %llu: %s", name, (unsigned long long)i,
                 (unsigned long long)r->offset, what);
}

static void* run_frame_job(void* arg) {
  frame_job* j = arg;
  xp_region r;
  xp_view_region(j->v, j->index, &r);
  j->frame.size = 0;
  j->status = check_region(j->v, j->name, j->index, &r, &j->err);
  if (j->status == XPACK_OK) {
    const xp_transport_sink memory = {memory_write, &j->frame, NULL};
    uint64_t frame_size = 0;
    j->status = compress_region(&j->c, j->v->base + r.offset, r.size, &memory, 0, &frame_size, j->name, j->index,
                                &j->err);
  }
  return NULL;
}

static int compressor_init(compressor* c, int level) {
  *c = (compressor){ZSTD_createCCtx(), malloc(XT_BUFFER_SIZE), level};
  return c->cctx != NULL && c->buffer != NULL &&
         !ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_compressionLevel, level)) &&
         !ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_contentSizeFlag, 1)) &&
         !ZSTD_isError(ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_checksumFlag, 0));
}

static void compressor_free(compressor* c) {
  ZSTD_freeCCtx(c->cctx);
  free(c->buffer);
}

/* Whether frames of `stored` bytes in all would decode to `declared` bytes, past XP_TRANSPORT_EXPANSION_MAX
 * (only `bounded`: the file's regions hold more than XP_TRANSPORT_FLOOR_BYTES). */
static int expands_too_far(int bounded, uint64_t stored, uint64_t declared) {
  return bounded && (stored > UINT64_MAX / XP_TRANSPORT_EXPANSION_MAX ? 0 : stored * XP_TRANSPORT_EXPANSION_MAX < declared);
}

/* Every region of v, checked against its XXH3-64 and compressed back to back from data_offset, by up to
 * `threads` threads: consecutive regions of at most FRAME_IN_MEMORY_MAX bytes are compressed in batches,
 * one per thread, and written in region order. */
static xpack_status compress_regions(const xp_view* v, const char* name, int level, int threads,
                                     const xp_transport_sink* sink, uint64_t data_offset, uint64_t* offsets,
                                     uint64_t* stored, uint64_t* data_end, xpack_error* err) {
  if ((uint64_t)threads > v->regions.count) threads = v->regions.count > 0 ? (int)v->regions.count : 1;
  frame_job* jobs = calloc((size_t)threads, sizeof *jobs);
  pthread_t* ids = calloc((size_t)threads, sizeof *ids);
  xpack_status st = XPACK_OK;
  int ready = 0;
  if (jobs == NULL || ids == NULL) {
    st = xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory for %d compression threads", name, threads);
  }
  for (; st == XPACK_OK && ready < threads; ready++) {
    if (!compressor_init(&jobs[ready].c, level)) {
      compressor_free(&jobs[ready].c);
      st = xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory for a zstd compression context", name);
      break;
    }
    jobs[ready].v = v;
    jobs[ready].name = name;
  }
  /* Past the floor, the file's size bounds what its regions may declare (FORMAT.md 9.2): the frames written so far
   * never expand past the ratio together, a region stored in raw blocks where they would (the first of a model
   * of constant weights, whose raw bytes then cover the RLE frames of many regions after it). */
  const int bounded = xp_view_region_bytes(v) > XP_TRANSPORT_FLOOR_BYTES;
  uint64_t declared_before = 0; /* of the regions written */
  uint64_t cursor = data_offset;
  for (uint64_t i = 0; i < v->regions.count && st == XPACK_OK;) {
    xp_region r;
    xp_view_region(v, i, &r);
    if (r.size > FRAME_IN_MEMORY_MAX || threads == 1) { /* streamed straight to the output */
      offsets[i] = cursor;
      st = check_region(v, name, i, &r, err);
      if (st == XPACK_OK) {
        st = compress_region(&jobs[0].c, v->base + r.offset, r.size, sink, cursor, &stored[i], name, i, err);
      }
      if (st == XPACK_OK && expands_too_far(bounded, cursor - data_offset + stored[i], declared_before + r.size)) {
        st = write_raw_frame(v->base + r.offset, r.size, sink, cursor, &stored[i], err); /* over the shorter one */
      }
      if (st == XPACK_OK) cursor += stored[i];
      declared_before += r.size;
      i++;
      continue;
    }
    int batch = 0;
    for (uint64_t k = i; k < v->regions.count && batch < threads; k++, batch++) {
      xp_region next;
      xp_view_region(v, k, &next);
      if (next.size > FRAME_IN_MEMORY_MAX) break;
      jobs[batch].index = k;
    }
    int started = 1; /* jobs[0] runs on this thread */
    for (; started < batch; started++) {
      if (xp_thread_create_quiet(&ids[started], run_frame_job, &jobs[started]) != 0) break;
    }
    run_frame_job(&jobs[0]);
    for (int t = 1; t < started; t++) pthread_join(ids[t], NULL);
    for (int t = started; t < batch; t++) run_frame_job(&jobs[t]); /* a thread could not start: do it here */
    for (int t = 0; t < batch && st == XPACK_OK; t++) {
      frame_job* j = &jobs[t];
      if (j->status != XPACK_OK) {
        if (err != NULL) *err = j->err;
        st = j->status;
        break;
      }
      xp_region jr;
      xp_view_region(v, j->index, &jr);
      if (expands_too_far(bounded, cursor - data_offset + j->frame.size, declared_before + jr.size)) {
        const xp_transport_sink memory = {memory_write, &j->frame, NULL};
        uint64_t raw_size = 0;
        st = write_raw_frame(v->base + jr.offset, jr.size, &memory, 0, &raw_size, err); /* over the shorter one */
        if (st != XPACK_OK) break;
      }
      offsets[j->index] = cursor;
      stored[j->index] = j->frame.size;
      st = sink->write(sink->context, j->frame.bytes, j->frame.size, cursor, err);
      cursor += j->frame.size;
      declared_before += jr.size;
    }
    i += (uint64_t)batch;
  }
  *data_end = cursor;
  for (int t = 0; t < ready; t++) {
    compressor_free(&jobs[t].c);
    free(jobs[t].frame.bytes);
  }
  free(jobs);
  free(ids);
  return st;
}

static xpack_status compress_view(const xp_view* v, const char* name, int level, int threads, const xp_transport_sink* sink,
                                  uint64_t* file_size, xpack_transport_stats* stats, xpack_error* err) {
  xpack_status st = xp_check_first(v, name, err);
  if (st != XPACK_OK) return st;
  const uint64_t count = v->regions.count;
  uint64_t* offsets = malloc((size_t)(count + 1) * sizeof *offsets);
  uint64_t* stored = malloc((size_t)(count + 1) * sizeof *stored);
  if (offsets == NULL || stored == NULL) {
    free(offsets);
    free(stored);
    return xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory for %llu region records", name,
                   (unsigned long long)count);
  }
  uint64_t data_end = 0;
  xp_rebuilt layout = {0};
  st = compress_regions(v, name, level, threads, sink, XPC_HEADER_SIZE, offsets, stored, &data_end, err);
  if (st == XPACK_OK) {
    st = xp_metadata_rebuild(v, name, offsets, stored, XPC_HEADER_SIZE, data_end, XPC_FLAG_TRANSPORT, &layout, err);
  }
  if (st == XPACK_OK) st = sink->write(sink->context, layout.header, sizeof layout.header, 0, err);
  if (st == XPACK_OK) st = sink->write(sink->context, layout.tail, layout.tail_size, layout.metadata_offset, err);
  if (st == XPACK_OK) {
    *file_size = layout.file_size;
    if (stats != NULL) {
      *stats = (xpack_transport_stats){count, xp_view_region_bytes(v), data_end - XPC_HEADER_SIZE, v->size,
                                       layout.file_size};
    }
  }
  free(layout.tail);
  free(offsets);
  free(stored);
  return st;
}

typedef struct compress_settings {
  int level;
  int threads;
} compress_settings;

static xpack_status compress_with_settings(void* context, const xp_view* v, const char* name, int input_is_mapped,
                                           const xp_transport_sink* sink, uint64_t* file_size, xpack_transport_stats* stats,
                                           xpack_error* err) {
  (void)input_is_mapped;
  const compress_settings* settings = context;
  return compress_view(v, name, settings->level, settings->threads, sink, file_size, stats, err);
}

xpack_status xpack_compress_file_threads(const char* in_path, const char* out_path, int level, int threads,
                                         xpack_transport_stats* stats, xpack_error* err) {
  if (in_path == NULL || out_path == NULL) return xp_fail(err, XPACK_ERR_ARG, "xpack_compress_file: NULL path");
  if (level < XPACK_ZSTD_LEVEL_MIN || level > XPACK_ZSTD_LEVEL_MAX) {
    return xp_fail(err, XPACK_ERR_ARG, "zstd level %d: expected %d to %d", level, XPACK_ZSTD_LEVEL_MIN,
                   XPACK_ZSTD_LEVEL_MAX);
  }
  if (threads < 1 || threads > XPACK_COMPRESS_THREADS_MAX) {
    return xp_fail(err, XPACK_ERR_ARG, "compression threads %d: expected 1 to %d", threads,
                   XPACK_COMPRESS_THREADS_MAX);
  }
  compress_settings settings = {level, threads};
  return xp_transport_convert_file(in_path, out_path, 0, "already in the transport form", compress_with_settings, &settings,
                                   stats, err);
}

xpack_status xpack_compress_file(const char* in_path, const char* out_path, int level, xpack_transport_stats* stats,
                                 xpack_error* err) {
  return xpack_compress_file_threads(in_path, out_path, level, 1, stats, err);
}
