/* Reading raw weights only when something touches them (XPACK_ET_OPEN_WEIGHTS_ON_DEMAND): the mapping is
 * advised MADV_RANDOM, which turns the kernel's read-around off, before anything reads it; the parts every
 * run needs are then asked for with MADV_WILLNEED, in large reads. Hints only: madvise failing changes
 * what is read when, never what is read. */
#include <stdint.h>
#include <sys/mman.h>

#include "common/file_map.h"
#include "common/le.h"
#include "et/et_internal.h"

static void advise(const xp_et_map* map, uint64_t offset, uint64_t size, int advice) {
  xp_advise_range(map->mapping, map->mapping_size, offset, size, advice);
}

/* Below this size a file is read whole, as without the flag: one read of all of it costs less than the
 * few small reads on demand makes (measured: an 86 KiB program loaded cold in 0.53 ms whole, 0.80 ms on
 * demand; a 2.1 MiB one in 3.5 ms whole, 0.5 ms on demand; docs/BENCHMARKS.md). */
#define XP_ON_DEMAND_MIN_FILE_BYTES (512u * 1024u)

int xp_et_worth_reading_on_demand(const xp_et_map* map) {
  return map->mapping != NULL && map->mapping_size >= XP_ON_DEMAND_MIN_FILE_BYTES;
}

/* Before parsing: no read-around, then the headers and flatbuffer at once, up to the segment base that the
 * file's header (magic at byte 8, a u64 at base_at) gives; read from the first page, which this touches,
 * and only bounded by the file here (the parser checks it). Without that header, the whole file. */
static void advise_before_parse(const xp_et_map* map, uint32_t magic, size_t base_at) {
  if (map->mapping == NULL) return;
  advise(map, 0, map->mapping_size, MADV_RANDOM);
  uint64_t flatbuffer_end = map->mapping_size;
  if (map->size >= base_at + 8 && xp_le32(map->data + 8) == magic) {
    const uint64_t segment_base = xp_le64(map->data + base_at);
    if (segment_base != 0 && segment_base < flatbuffer_end) flatbuffer_end = segment_base;
  }
  advise(map, 0, flatbuffer_end, MADV_WILLNEED);
}

void xp_et_program_advise_before_parse(const xp_et_map* map) {
  advise_before_parse(map, 0x30306865u /* "eh00" */, 24);
}

/* After parsing: the delegate blobs stored as segments. */
void xp_et_program_advise_after_parse(const xpack_et_program* program) {
  const xpack_et_program_info* info = &program->info;
  for (size_t m = 0; m < info->method_count; m++) {
    for (size_t d = 0; d < info->methods[m].delegate_count; d++) {
      const xpack_et_delegate* delegate = &info->methods[m].delegates[d];
      if (delegate->location == XPACK_ET_LOCATION_SEGMENT) {
        advise(&program->map, delegate->file_offset, delegate->size, MADV_WILLNEED);
      }
    }
  }
}

/* A .ptd has no blobs: everything past its FH01 header's segment base is weights, so the advice before
 * parsing is all it needs. */
void xp_et_ptd_advise_before_parse(const xp_et_map* map) { advise_before_parse(map, 0x31304846u /* "FH01" */, 32); }

/* The kernel reads at most its read-ahead window (or the device's largest I/O) per MADV_WILLNEED call and
 * leaves the rest of a larger range unread: larger ranges are asked for in pieces. */
#define XP_READ_AHEAD_PIECE_BYTES (2u * 1024u * 1024u)

bool xpack_et_reads_on_demand(const xpack_et_named_sources* sources) {
  if (sources == NULL) return false;
  if (sources->program != NULL && sources->program->map.read_on_demand) return true;
  for (size_t i = 0; i < sources->ptd_count; i++) {
    if (sources->ptds[i] != NULL && sources->ptds[i]->map.read_on_demand) return true;
  }
  return false;
}

void xpack_et_read_ahead(const xpack_et_named_sources* sources, const void* data, size_t size) {
  if (sources == NULL || data == NULL || size == 0) return;
  const xp_et_map* map = xp_et_holder_of(sources, data, size).map;
  /* Read whole or read around, the kernel's usual reads serve. A file read on demand is xp_et_map_file's own
   * mapping of the whole file (data == mapping). */
  if (map == NULL || !map->read_on_demand) return;
  const uint64_t offset = (uint64_t)((const uint8_t*)data - map->data);
  for (uint64_t done = 0; done < size; done += XP_READ_AHEAD_PIECE_BYTES) {
    const uint64_t left = size - done;
    advise(map, offset + done, left < XP_READ_AHEAD_PIECE_BYTES ? left : XP_READ_AHEAD_PIECE_BYTES, MADV_WILLNEED);
  }
}

/* Back to the kernel's default read-around, for the weights XNNPACK will pack after all. */
void xpack_et_program_read_weights_ahead(const xpack_et_program* program) {
  if (program != NULL) advise(&program->map, 0, program->map.mapping_size, MADV_NORMAL);
}

void xpack_et_ptd_read_weights_ahead(const xpack_et_ptd* ptd) {
  if (ptd != NULL) advise(&ptd->map, 0, ptd->map.mapping_size, MADV_NORMAL);
}
