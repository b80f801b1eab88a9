/* xpack export --executorch CACHE OUT [--json]: the cache as ExecuTorch's packed_cache_path file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_common.h"
#include "commands.h"
#include "json.h"
#include "xpack.h"

#define USAGE "xpack export --executorch CACHE OUT [--json]"

/* Under this many packed bytes an export likely makes stock ExecuTorch's load_method slower than no cache: its
 * weights cache opens, locks and maps the file in more time than XNNPACK packs that few. Measured with ExecuTorch
 * v1.4.0 (docs/BENCHMARKS.md, "Stock ExecuTorch's load_method"): exports of 256 B to 67 KiB loaded in 1.1 to 1.5
 * times the time without a cache, one of 137 KiB in 1.03, those of 243 KiB to 2 MiB in 0.18 to 0.71 of it. */
#define EXPORT_SMALL_BYTES (128u * 1024u)

/* Whether an export written is that small: said the same way in text and JSON. */
static int likely_slower_than_packing(const xpack_export_stats* s) {
  return s->records > 0 && s->data_bytes < EXPORT_SMALL_BYTES;
}

static const char* reason_name(xpack_export_outcome o) {
  switch (o) {
    case XPACK_EXPORT_WRITTEN: return "written";
    case XPACK_EXPORT_SKIP_UNNAMED: return "unnamed_constant";
    case XPACK_EXPORT_SKIP_NOT_EXECUTORCH: return "not_an_executorch_key";
    case XPACK_EXPORT_SKIP_AMBIGUOUS: return "ambiguous_name";
  }
  return "?";
}

typedef struct outcome_list {
  xpack_export_outcome* of_entry;
  uint64_t count, cap;
  int out_of_memory;
} outcome_list;

static void keep_outcome(void* context, uint64_t entry, const char* name, size_t name_len, xpack_export_outcome o) {
  (void)name;
  (void)name_len;
  outcome_list* k = context;
  if (entry >= k->cap) {
    uint64_t cap = k->cap ? 2 * k->cap : 256;
    while (cap <= entry) cap *= 2;
    xpack_export_outcome* grown = realloc(k->of_entry, (size_t)cap * sizeof *grown);
    if (grown == NULL) {
      k->out_of_memory = 1;
      return;
    }
    k->of_entry = grown;
    k->cap = cap;
  }
  k->of_entry[entry] = o;
  if (entry >= k->count) k->count = entry + 1;
}

static void hex(const uint8_t* p, size_t n, char* out) {
  for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", p[i]);
  out[2 * n] = 0;
}

/* The condition ExecuTorch cannot check for itself, said the same way in text and JSON. */
static void validity_text(const char* cache, const xpack_file_info* info, const char* build_id, char* out, size_t n) {
  snprintf(out, n,
           "valid only in an app whose XNNPACK packs exactly like the one that packed %s: the same XNNPACK build "
           "(build identifier %s; this xpack uses XNNPACK %s) choosing the same CPU kernels (packed on %s). "
           "ExecuTorch checks nothing but each weight's seed, which does not catch every difference, and would "
           "serve wrongly packed weights. Valid only with the programs it was packed from, too: ExecuTorch names a "
           "packed weight by its keys alone, and would serve it to a program using the same key in another shape, "
           "node or quantization",
           cache, build_id, XPACK_XNNPACK_VERSION, info->arch_name);
}

static void print_json(const char* cache, const char* out, const xpack_file* f, const xpack_file_info* info,
                       const xpack_export_stats* s, const xpack_export_outcome* outcomes, const char* validity,
                       const char* check, const char* build_id) {
  json j;
  json_init(&j, cli_out());
  json_object(&j);
  json_key(&j, "cache"); json_string(&j, cache);
  json_key(&j, "output"); json_string(&j, out);
  json_key(&j, "format"); json_string(&j, "executorch-xpwc");
  json_key(&j, "format_version"); json_uint(&j, 2);
  json_key(&j, "written"); json_bool(&j, s->records > 0);
  json_key(&j, "entries"); json_uint(&j, s->entries);
  json_key(&j, "exported"); json_uint(&j, s->exported);
  json_key(&j, "records"); json_uint(&j, s->records);
  json_key(&j, "skipped"); json_object(&j);
  json_key(&j, "total"); json_uint(&j, s->entries - s->exported);
  json_key(&j, "unnamed_constant"); json_uint(&j, s->skipped_unnamed);
  json_key(&j, "not_an_executorch_key"); json_uint(&j, s->skipped_not_executorch);
  json_key(&j, "ambiguous_name"); json_uint(&j, s->skipped_ambiguous);
  json_end_object(&j);
  json_key(&j, "skipped_entries"); json_array(&j);
  for (uint64_t i = 0; i < s->entries && i < info->entry_count; i++) {
    if (outcomes[i] == XPACK_EXPORT_WRITTEN) continue;
    xpack_file_entry e;
    xpack_file_get_entry(f, i, &e);
    json_object(&j);
    json_key(&j, "entry"); json_uint(&j, i);
    json_key(&j, "seed"); json_uint(&j, e.seed);
    json_key(&j, "kernel"); json_string(&j, e.kernel);
    json_key(&j, "bias"); json_string(&j, e.bias);
    json_key(&j, "reason"); json_string(&j, reason_name(outcomes[i]));
    json_end_object(&j);
  }
  json_end_array(&j);
  json_key(&j, "module_path_records"); json_uint(&j, s->module_path_records);
  json_key(&j, "regions"); json_uint(&j, s->regions);
  json_key(&j, "data_bytes"); json_uint(&j, s->data_bytes);
  json_key(&j, "file_size"); json_uint(&j, s->file_size);
  json_key(&j, "likely_slower_than_packing"); json_bool(&j, likely_slower_than_packing(s));
  json_key(&j, "packed_on"); json_string(&j, info->arch_name);
  json_key(&j, "xnnpack_build_id"); json_string(&j, build_id);
  json_key(&j, "valid_only"); json_string(&j, validity);
  json_key(&j, "check_on_target"); json_string(&j, check);
  json_end_object(&j);
  json_finish(&j);
}

static void print_text(const char* cache, const char* out, const xpack_export_stats* s) {
  char b1[32], b2[32];
  if (s->records == 0) {
    fprintf(cli_out(), "nothing to export: none of the %llu entries of %s has a name ExecuTorch would look it up by; "
            "wrote nothing\n",
            (unsigned long long)s->entries, cache);
  } else {
    fprintf(cli_out(), "wrote %s: ExecuTorch packed-weights cache (XPWC version 2, for the XNNPACK backend's packed_cache_path)\n",
            out);
    fprintf(cli_out(), "  %llu of %llu entries exported in %llu record%s; %llu packed weight%s, %s; file %s\n",
            (unsigned long long)s->exported, (unsigned long long)s->entries, (unsigned long long)s->records,
            s->records == 1 ? "" : "s", (unsigned long long)s->regions, s->regions == 1 ? "" : "s",
           cli_bytes(s->data_bytes, b1), cli_bytes(s->file_size, b2));
  }
  uint64_t skipped = s->entries - s->exported;
  if (skipped > 0) {
    fprintf(cli_out(), "  skipped %llu entr%s that ExecuTorch's naming cannot express (XNNPACK packs them in the app as "
            "usual):\n",
            (unsigned long long)skipped, skipped == 1 ? "y" : "ies");
    if (s->skipped_unnamed) {
      fprintf(cli_out(), "    %llu with a constant that has no named key (ExecuTorch looks weights up by named key only)\n",
              (unsigned long long)s->skipped_unnamed);
    }
    if (s->skipped_not_executorch) {
      fprintf(cli_out(), "    %llu with an identity that is not an ExecuTorch named key (bound through xpack's C API)\n",
              (unsigned long long)s->skipped_not_executorch);
    }
    if (s->skipped_ambiguous) {
      fprintf(cli_out(), "    %llu whose name (kernel key + bias key) other entries share with another seed or other bytes "
              "(ExecuTorch keeps one per name)\n",
              (unsigned long long)s->skipped_ambiguous);
    }
  }
  if (likely_slower_than_packing(s) && g_verbosity >= 0) {
    cli_line(stderr, "note: %s holds %s of packed weights, under %s: stock ExecuTorch opens, locks and maps its cache file "
            "in more time than XNNPACK packs that few, so it will likely load the program slower than without it "
            "(docs/BENCHMARKS.md, \"Stock ExecuTorch's load_method\"); ship it only if it measures faster on the device",
            out, cli_bytes(s->data_bytes, b1), cli_bytes(EXPORT_SMALL_BYTES, b2));
  }
  if (s->module_path_records > 0) {
    fprintf(cli_out(), "  %llu records are named by module paths, not content hashes: ExecuTorch serves them to any program "
            "using the same key, so use %s only with the programs %s was packed from\n",
            (unsigned long long)s->module_path_records, out, cache);
  }
}

static const cli_option kOptions[] = {{"--json", 0, 0, 0}, {"--executorch", 0, 0, 0}};
static const cli_options kExportOptions = {"export", kOptions, sizeof kOptions / sizeof kOptions[0]};

int cmd_export(int argc, char** argv) {
  const char* cache = NULL;
  const char* out = NULL;
  int as_json = 0, executorch = 0;
  int rc = cli_check_options(&kExportOptions, argc, argv);
  if (rc != 0) return rc;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) as_json = 1;
    else if (strcmp(argv[i], "--executorch") == 0) executorch = 1;
    else if (cache == NULL) cache = argv[i];
    else if (out == NULL) out = argv[i];
    else {
      cli_error("export: one CACHE and one OUT (usage: " USAGE ")");
      return XPACK_EXIT_USAGE;
    }
  }
  if (!executorch || cache == NULL || out == NULL) {
    cli_error("export: %s (usage: " USAGE ")",
              !executorch ? "say which format: --executorch is the only one" : "missing CACHE or OUT");
    return XPACK_EXIT_USAGE;
  }
  /* The other commands read ARCHIVE!/MEMBER where it lies; export reads a cache file (the export goes into the
   * app beside the cache, not from inside its APK). */
  const char* member = strstr(cache, "!/");
  if (member != NULL && access(cache, F_OK) != 0) {
    char archive[4096];
    snprintf(archive, sizeof archive, "%.*s", (int)(member - cache), cache);
    if (access(archive, F_OK) != 0) { /* neither a file of that name nor an archive: the input is missing */
      cli_error("%s: cannot open: %s", cache, strerror(errno));
      return XPACK_EXIT_BAD_INPUT;
    }
    cli_error("export: %s names a member of an archive: export takes a cache file (export it before it goes into "
              "the archive, or extract it)", cache);
    return XPACK_EXIT_USAGE;
  }
  /* The export checks the cache first (a transport-form cache is refused before anything else). */
  xpack_error err;
  xpack_export_stats stats;
  outcome_list kept = {0};
  cli_file_identity identity;
  cli_file_identity_take(cache, &identity);
  xpack_status st = xpack_export_executorch(cache, out, keep_outcome, &kept, &stats, &err);
  xpack_file* f = NULL;
  if (st != XPACK_OK) {
    cli_error("%s", err.message);
    free(kept.of_entry);
    if (st != XPACK_ERR_IO) return st == XPACK_ERR_NOMEM ? XPACK_EXIT_FAILED : cli_exit_for_status(st);
    /* An I/O error is the cache's when the cache cannot be opened, else the output's. */
    xpack_error open_err;
    if (xpack_file_open(cache, &f, &open_err) != XPACK_OK) return XPACK_EXIT_BAD_INPUT;
    xpack_file_close(f);
    return XPACK_EXIT_FAILED;
  }
  if (kept.out_of_memory || xpack_file_open(cache, &f, &err) != XPACK_OK) {
    cli_error("%s: exported, but cannot report on it: %s", cache, kept.out_of_memory ? "out of memory" : err.message);
    free(kept.of_entry);
    return XPACK_EXIT_FAILED;
  }
  /* The export checked and wrote from one mapping; the report below reads the cache again by name. */
  if (!cli_file_identity_still(cache, &identity, "export",
                               "the output was written from the file as export first opened and checked it, but the report would "
                               "describe another, so it is not given")) {
    free(kept.of_entry);
    xpack_file_close(f);
    return XPACK_EXIT_FAILED;
  }
  xpack_export_outcome* outcomes = kept.of_entry;
  xpack_file_info info;
  xpack_file_get_info(f, &info);
  char build_id[2 * 256 + 1];
  hex(info.build_id, info.build_id_size < 256 ? info.build_id_size : 256, build_id);
  char validity[1536], check[512];
  validity_text(cache, &info, build_id, validity, sizeof validity);
  snprintf(check, sizeof check,
           "on the target device, `xpack verify %s` must say every entry is served (its packing families' probes "
           "pack alike there); adding `--model MODEL.pte` re-packs every weight and compares",
           cache);
  if (as_json) print_json(cache, out, f, &info, &stats, outcomes, validity, check, build_id);
  else if (g_verbosity >= 0) print_text(cache, out, &stats); /* -q: as pack and inflate, the exit status says it */
  if (stats.records > 0 && g_verbosity >= 0) {
    cli_line(stderr, "%s: warning: %s is %s.", g_program, out, validity);
    cli_line(stderr, "  Check: %s.", check);
  }
  free(outcomes);
  xpack_file_close(f);
  return XPACK_EXIT_OK;
}
