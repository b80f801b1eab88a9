/* xpack dump FILE [--json]: every field of a cache file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_cache_source.h"
#include "cli_common.h"
#include "commands.h"
#include "json.h"
#include "xpack.h"

static const char* input_kind(uint32_t kind) {
  return kind == XPACK_INPUT_PTE ? "pte" : kind == XPACK_INPUT_PTD ? "ptd" : "other";
}

static void hex(const uint8_t* p, size_t n, char* out) {
  for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", p[i]);
  out[2 * n] = 0;
}

/* Bytes of the regions as stored: their zstd frames in the transport form, else their sizes. */
static uint64_t stored_total(const xpack_file* f, const xpack_file_info* info) {
  uint64_t total = 0;
  for (uint64_t i = 0; i < info->region_count; i++) {
    xpack_file_region r;
    xpack_file_get_region(f, i, &r);
    total += r.stored_size;
  }
  return total;
}

static double ratio(uint64_t stored, uint64_t size) { return size ? (double)stored / (double)size : 1.0; }

typedef struct info_key {
  const char* key;
  uint64_t index;
} info_key;

static int by_key_then_index(const void* a, const void* b) {
  const info_key *x = a, *y = b;
  const int c = strcmp(x->key, y->key);
  return c != 0 ? c : (x->index > y->index) - (x->index < y->index);
}

/* INFO records whose key an earlier record has (repeated[i] = 1): a JSON object names each key once, and a file
 * may repeat one (the text report lists every record). Sorted, not compared pairwise: INFO may hold millions.
 * NULL when there is no memory for it (then every record is listed). */
static unsigned char* repeated_info_keys(const xpack_file* f, uint64_t count) {
  info_key* keys = malloc((size_t)(count ? count : 1) * sizeof *keys);
  unsigned char* repeated = calloc((size_t)(count ? count : 1), 1);
  if (keys == NULL || repeated == NULL) {
    free(keys);
    free(repeated);
    return NULL;
  }
  for (uint64_t i = 0; i < count; i++) {
    const char* value;
    xpack_file_get_info_pair(f, i, &keys[i].key, &value);
    keys[i].index = i;
  }
  qsort(keys, (size_t)count, sizeof *keys, by_key_then_index);
  for (uint64_t i = 1; i < count; i++) {
    if (strcmp(keys[i].key, keys[i - 1].key) == 0) repeated[keys[i].index] = 1;
  }
  free(keys);
  return repeated;
}

static void dump_json(const xpack_file* f, const xpack_file_info* info, const char* path) {
  json j;
  json_init(&j, cli_out());
  char build_id[2 * 256 + 1];
  hex(info->build_id, info->build_id_size < 256 ? info->build_id_size : 256, build_id);
  json_object(&j);
  json_key(&j, "file"); json_string(&j, path);
  json_key(&j, "format_version"); json_object(&j);
  json_key(&j, "major"); json_uint(&j, info->major);
  json_key(&j, "minor"); json_uint(&j, info->minor);
  json_end_object(&j);
  json_key(&j, "transport_form"); json_bool(&j, info->flags & 1);
  json_key(&j, "file_size"); json_uint(&j, info->file_size);
  json_key(&j, "arch"); json_string(&j, info->arch_name);
  json_key(&j, "xnn_alignment"); json_uint(&j, info->xnn_alignment);
  json_key(&j, "page_alignment"); json_uint(&j, info->page_alignment);
  json_key(&j, "xnnpack_build_id"); json_string(&j, build_id);
  json_key(&j, "build_id_matches_this_xnnpack"); json_bool(&j, info->build_id_matches);
  json_key(&j, "data"); json_object(&j);
  json_key(&j, "offset"); json_uint(&j, info->data_offset);
  json_key(&j, "size"); json_uint(&j, info->data_size);
  json_end_object(&j);
  json_key(&j, "metadata"); json_object(&j);
  json_key(&j, "offset"); json_uint(&j, info->metadata_offset);
  json_key(&j, "size"); json_uint(&j, info->metadata_size);
  json_end_object(&j);
  json_key(&j, "inputs"); json_array(&j);
  for (uint64_t i = 0; i < info->input_count; i++) {
    xpack_file_input in;
    xpack_file_get_input(f, i, &in);
    json_object(&j);
    json_key(&j, "name"); json_string(&j, in.name);
    json_key(&j, "kind"); json_string(&j, input_kind(in.kind));
    json_key(&j, "size"); json_uint(&j, in.file_size);
    json_key(&j, "xxh3"); json_hex64(&j, in.file_hash);
    json_key(&j, "program_size"); json_uint(&j, in.program_size);
    json_key(&j, "program_xxh3"); json_hex64(&j, in.program_hash);
    json_end_object(&j);
  }
  json_end_array(&j);
  json_key(&j, "info"); json_object(&j);
  unsigned char* repeated = repeated_info_keys(f, info->info_count);
  for (uint64_t i = 0; i < info->info_count; i++) {
    if (repeated != NULL && repeated[i]) continue;
    const char *k, *v;
    xpack_file_get_info_pair(f, i, &k, &v);
    json_key(&j, k); json_string(&j, v);
  }
  free(repeated);
  json_end_object(&j);
  json_key(&j, "regions"); json_array(&j);
  for (uint64_t i = 0; i < info->region_count; i++) {
    xpack_file_region r;
    xpack_file_get_region(f, i, &r);
    json_object(&j);
    json_key(&j, "index"); json_uint(&j, i);
    json_key(&j, "offset"); json_uint(&j, r.offset);
    json_key(&j, "size"); json_uint(&j, r.size);
    json_key(&j, "stored_size"); json_uint(&j, r.stored_size);
    json_key(&j, "ratio"); json_double(&j, ratio(r.stored_size, r.size));
    json_key(&j, "xxh3"); json_hex64(&j, r.hash);
    json_end_object(&j);
  }
  json_end_array(&j);
  json_key(&j, "families"); json_array(&j);
  for (uint64_t i = 0; i < info->family_count; i++) {
    xpack_file_family m;
    xpack_file_get_family(f, i, &m);
    json_object(&j);
    json_key(&j, "index"); json_uint(&j, i);
    json_key(&j, "name"); json_string(&j, m.name);
    json_key(&j, "flags"); json_uint(&j, m.flags);
    json_key(&j, "probe_xxh3"); json_hex64(&j, m.probe_hash);
    json_key(&j, "probe_keys_xxh3"); json_hex64(&j, m.probe_keys);
    json_end_object(&j);
  }
  json_end_array(&j);
  json_key(&j, "entries"); json_array(&j);
  for (uint64_t i = 0; i < info->entry_count; i++) {
    xpack_file_entry e;
    xpack_file_get_entry(f, i, &e);
    json_object(&j);
    json_key(&j, "seed"); json_uint(&j, e.seed);
    json_key(&j, "kernel"); json_string(&j, e.kernel);
    json_key(&j, "bias"); json_string(&j, e.bias);
    json_key(&j, "region"); json_uint(&j, e.region);
    if (e.region < info->region_count) {
      xpack_file_region r;
      xpack_file_get_region(f, e.region, &r);
      json_key(&j, "offset"); json_uint(&j, r.offset);
      json_key(&j, "size"); json_uint(&j, r.size);
      json_key(&j, "xxh3"); json_hex64(&j, r.hash);
    }
    json_key(&j, "family");
    if (e.family == 0xFFFFFFFFu) json_null(&j); else json_uint(&j, e.family);
    json_key(&j, "packed_on_insert"); json_bool(&j, e.flags & 1);
    json_key(&j, "flags"); json_uint(&j, e.flags);
    json_key(&j, "sound"); json_bool(&j, e.sound);
    json_key(&j, "servable"); json_bool(&j, xpack_file_entry_servable(f, i));
    json_end_object(&j);
  }
  json_end_array(&j);
  json_key(&j, "totals"); json_object(&j);
  json_key(&j, "entries"); json_uint(&j, info->entry_count);
  json_key(&j, "regions"); json_uint(&j, info->region_count);
  json_key(&j, "stored_bytes"); json_uint(&j, info->stored_bytes);
  json_key(&j, "referenced_bytes"); json_uint(&j, info->referenced_bytes);
  json_key(&j, "dedup_saved_bytes"); json_uint(&j, info->referenced_bytes - info->stored_bytes);
  uint64_t frames = stored_total(f, info);
  json_key(&j, "region_stored_bytes"); json_uint(&j, frames);
  json_key(&j, "region_ratio"); json_double(&j, ratio(frames, info->stored_bytes));
  json_end_object(&j);
  json_end_object(&j);
  json_finish(&j);
}

static void dump_text(const xpack_file* f, const xpack_file_info* info, const char* path) {
  char b1[32], b2[32], b3[32];
  char build_id[2 * 256 + 1];
  hex(info->build_id, info->build_id_size < 256 ? info->build_id_size : 256, build_id);
  fprintf(cli_out(), "file            %s (%s)\n", cli_name(path), cli_bytes(info->file_size, b1));
  fprintf(cli_out(), "format          xpack cache %u.%u%s\n", info->major, info->minor,
          (info->flags & 1) ? ", transport form (zstd regions)" : "");
  fprintf(cli_out(), "target          %s, XNN_ALLOCATION_ALIGNMENT %u, large regions aligned to %u\n", info->arch_name,
          info->xnn_alignment, info->page_alignment);
  fprintf(cli_out(), "xnnpack build   %s (%s this xpack's XNNPACK)\n", build_id,
          info->build_id_matches ? "matches" : "DIFFERS from");
  fprintf(cli_out(), "data area       offset %llu, %llu bytes\n", (unsigned long long)info->data_offset,
          (unsigned long long)info->data_size);
  fprintf(cli_out(), "metadata area   offset %llu, %llu bytes\n", (unsigned long long)info->metadata_offset,
          (unsigned long long)info->metadata_size);
  fprintf(cli_out(), "inputs          %llu\n", (unsigned long long)info->input_count);
  for (uint64_t i = 0; i < info->input_count; i++) {
    xpack_file_input in;
    xpack_file_get_input(f, i, &in);
    fprintf(cli_out(), "  %-3s %s  %llu bytes  xxh3 %016llx", input_kind(in.kind), cli_name(in.name),
            (unsigned long long)in.file_size, (unsigned long long)in.file_hash);
    if (in.program_size) {
      fprintf(cli_out(), "  program %llu bytes xxh3 %016llx", (unsigned long long)in.program_size,
              (unsigned long long)in.program_hash);
    }
    fprintf(cli_out(), "\n");
  }
  for (uint64_t i = 0; i < info->info_count; i++) {
    const char *k, *v;
    xpack_file_get_info_pair(f, i, &k, &v);
    fprintf(cli_out(), "info            %s = %s\n", cli_name(k), cli_name(v));
  }
  fprintf(cli_out(), "regions         %llu\n", (unsigned long long)info->region_count);
  for (uint64_t i = 0; i < info->region_count; i++) {
    xpack_file_region r;
    xpack_file_get_region(f, i, &r);
    fprintf(cli_out(), "  #%-4llu offset %-10llu size %-10llu xxh3 %016llx", (unsigned long long)i,
            (unsigned long long)r.offset, (unsigned long long)r.size, (unsigned long long)r.hash);
    if (info->flags & 1) {
      fprintf(cli_out(), "  zstd %-10llu ratio %.3f", (unsigned long long)r.stored_size, ratio(r.stored_size, r.size));
    }
    fprintf(cli_out(), "\n");
  }
  fprintf(cli_out(), "families        %llu\n", (unsigned long long)info->family_count);
  for (uint64_t i = 0; i < info->family_count; i++) {
    xpack_file_family m;
    xpack_file_get_family(f, i, &m);
    fprintf(cli_out(), "  #%-4llu %s  probe xxh3 %016llx  keys xxh3 %016llx%s\n", (unsigned long long)i,
            cli_name(m.name), (unsigned long long)m.probe_hash, (unsigned long long)m.probe_keys,
            m.flags ? "  (unknown flags)" : "");
  }
  fprintf(cli_out(), "entries         %llu\n", (unsigned long long)info->entry_count);
  for (uint64_t i = 0; i < info->entry_count; i++) {
    xpack_file_entry e;
    xpack_file_get_entry(f, i, &e);
    char family[32] = "no family";
    if (e.family != 0xFFFFFFFFu) snprintf(family, sizeof family, "family #%u", e.family);
    fprintf(cli_out(), "  seed %08x  kernel %s  bias %s  -> region #%u, %s%s%s\n", e.seed, cli_name(e.kernel),
            e.bias ? cli_name(e.bias) : "(none)",
            e.region, family, (e.flags & 1) ? "  (XNNPACK packs it at every create)" : "",
            !e.sound                               ? "  ** UNSOUND **"
            : !xpack_file_entry_servable(f, i) ? "  ** NOT SERVED (flags, strings, key hash or order, its key claimed twice, or an identity no loader binds: empty, xpack:ambiguous, over 1023 bytes) **"
                                               : "");
  }
  fprintf(cli_out(), "totals          %llu entries, %llu regions; stored %s; without dedup %s; saved %s\n",
          (unsigned long long)info->entry_count, (unsigned long long)info->region_count,
          cli_bytes(info->stored_bytes, b1), cli_bytes(info->referenced_bytes, b2),
         cli_bytes(info->referenced_bytes - info->stored_bytes, b3));
  if (info->flags & 1) {
    uint64_t frames = stored_total(f, info);
    fprintf(cli_out(), "transport       %s of regions in %s of zstd frames, ratio %.3f; `xpack inflate` makes it mappable\n",
            cli_bytes(info->stored_bytes, b1), cli_bytes(frames, b2), ratio(frames, info->stored_bytes));
  }
}

static const cli_option kOptions[] = {{"--json", 0, 0, 0}};
static const cli_options kDumpOptions = {"dump", kOptions, sizeof kOptions / sizeof kOptions[0]};

int cmd_dump(int argc, char** argv) {
  const char* path = NULL;
  int as_json = 0;
  int rc = cli_check_options(&kDumpOptions, argc, argv);
  if (rc != 0) return rc;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) as_json = 1;
    else if (path == NULL) path = argv[i];
    else {
      cli_error("dump: one file at a time");
      return XPACK_EXIT_USAGE;
    }
  }
  if (path == NULL) {
    cli_error("dump: missing FILE (usage: xpack dump FILE [--json])");
    return XPACK_EXIT_USAGE;
  }
  cli_cache_source source;
  rc = cli_cache_source_open("dump", path, &source);
  const char* unusable = rc == 0 ? cli_cache_source_unusable(&source) : NULL;
  if (unusable) {
    cli_line(stderr, "%s: dump: %s: %s", g_program, path, unusable);
    rc = XPACK_EXIT_BAD_INPUT;
  }
  xpack_file* f = NULL;
  xpack_error err;
  xpack_status st = rc == 0 ? cli_cache_source_open_file(&source, &f, &err) : XPACK_OK;
  if (rc == 0 && st != XPACK_OK) {
    cli_error("%s", err.message);
    rc = cli_exit_for_status(st);
  }
  if (rc == 0) {
    xpack_file_info info;
    xpack_file_get_info(f, &info);
    if (as_json) dump_json(f, &info, path);
    else dump_text(f, &info, path);
  }
  xpack_file_close(f);
  cli_cache_source_close(&source);
  return rc;
}
