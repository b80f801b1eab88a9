/* xpack inspect MODEL.pte [MODEL2.pte ...] [--data FILE.ptd ...] [--json]
 *
 * What a program holds and what xpack can do with it: methods, delegates (backend, location, size),
 * XNNPACK node counts by type, datatypes, constants (identity, size, where they live), and for every
 * XNNPACK delegate whether xpack can replay it (xpack_replay_define with no bind callback, then
 * released) or why not. Non-XNNPACK delegates are listed and skipped.
 *
 * Exit codes: 0 report printed (also when a delegate is not replayable, and when there is nothing to
 * pack); 2 usage; 3 an input file is missing or malformed, including a delegate blob that does not
 * parse or a constant that does not resolve (the reader's message goes to stderr and, as for every
 * failure, the report is dropped: cli_out); 4 out of memory or an XNNPACK failure unrelated to the file.
 *
 * JSON (--json), one document on stdout. Keys are stable; new keys may be added, none removed:
 * {
 *   "programs": [{
 *     "file": path as given,
 *     "size": bytes, "version": Program.version, "extended_header_size": 0 when none,
 *     "segments": count, "named_data": count, "legacy_constant_buffers": count,
 *     "delegates": total over methods, "xnnpack_delegates": count, "replayable_delegates": count,
 *     "nothing_to_pack": true when the program has no XNNPACK delegate,
 *     "methods": [{
 *       "name": string or null,
 *       "delegates": [{
 *         "index": position in the method's delegate list,
 *         "backend": backend id, e.g. "XnnpackBackend",
 *         "location": "segment" | "inline", "location_index": segment / backend_delegate_data index,
 *         "offset": file offset of the processed bytes, "size": their length,
 *         "xnnpack": bool,
 *         "note": "skipped: not XNNPACK" or null,
 *         "error": null, or the reader's message when the blob does not parse or a constant does not
 *                  resolve (then the counts below are those gathered before the error),
 *         "identifier": "XN01" / "XN00" or null, "has_header": bool (XH00),
 *         "values": count, "nodes": count,
 *         "node_counts": {type name: count}, e.g. {"FullyConnected": 2}; {} for non-XNNPACK,
 *         "datatypes": {datatype name: values of it}, e.g. {"fp32": 5},
 *         "constant_bytes": sum of the constants' sizes,
 *         "constants": [{
 *           "identity": the cache identity (named key, or "xpack:xxh3-128:<hex>:<size>"; a weight's ends in
 *                       "|xnn:<hex>", how it is packed: its shape, quantization and nodes),
 *           "ambiguous": true when the values or nodes using the bytes pack them otherwise: bound to nothing,
 *                        every look-up misses (FORMAT.md section 6),
 *           "size": bytes,
 *           "source": "blob" | "legacy" | "ptd" | "pte named_data",
 *           "file": the .pte or .ptd holding the bytes,
 *           "offset": file offset of the bytes in that file, or null (.ptd),
 *           "value": first xvalue index using it, "datatype": that value's datatype name,
 *           "scale": true when reached through scale_buffer_idx
 *         }],
 *         "replayable": bool (false for non-XNNPACK),
 *         "replay_error": null, or why xpack cannot replay it (xpack_replay_define's message),
 *         "replay_status": null, or the status name, e.g. "unsupported"
 *       }]
 *     }]
 *   }],
 *   "data_files": [{"file", "size", "entries"}]
 * }
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "commands.h"
#include "json.h"
#include "model_args.h"
#include "xpack_replay.h"

/* ------------------------------------------------------------------------------ collection -- */

typedef struct insp_delegate {
  size_t method, index;
  const xpack_et_delegate* del;
  /* XNNPACK only */
  xpack_et_delegate_summary sum; /* header facts, counts, constants */
  char* error; /* parse or resolve failure (owned) */
  xpack_status error_status;
  bool parsed;
  bool replayable;
  char* replay_error; /* owned */
  xpack_status replay_status;
} insp_delegate;

typedef struct insp_program {
  const xpack_model_set* set;
  const xpack_model_file* file;
  const xpack_et_program* program;
  const xpack_et_program_info* info;
  insp_delegate* delegates; /* all methods, in order */
  size_t delegate_count, xnnpack_count, replayable_count;
} insp_program;

static char* dup_string(const char* s) {
  size_t n = strlen(s) + 1;
  char* d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* The file holding a constant's bytes, and their offset in it (-1 when unknown). */
static const char* constant_place(const insp_program* ip, const xpack_et_constant_summary* c, int64_t* offset) {
  *offset = -1;
  if (c->source == XPACK_ET_CONSTANT_PTD && c->ptd_index < ip->set->ptd_count) {
    return ip->set->ptd_files[c->ptd_index].path;
  }
  size_t n = 0;
  const uint8_t* base = xpack_et_program_bytes(ip->program, &n);
  if (base && c->data && c->data >= base && c->data <= base + n) *offset = (int64_t)(c->data - base);
  return ip->file->path;
}

/* Parses delegate (m, i), summarizes it and tries the replay. Returns NOMEM only; file problems are
 * recorded in d->error. */
static xpack_status inspect_xnnpack(insp_program* ip, const xpack_et_named_sources* src, insp_delegate* d) {
  xpack_error err = {0};
  xpack_et_xnn_graph* g = NULL;
  xpack_status st = xpack_et_xnn_graph_open(ip->program, d->method, d->index, &g, &err);
  if (st != XPACK_OK) {
    if (st == XPACK_ERR_NOMEM) return st;
    d->error_status = st;
    d->error = dup_string(err.message);
    return d->error ? XPACK_OK : XPACK_ERR_NOMEM;
  }
  d->parsed = true;
  st = xpack_et_summarize_graph(g, src, &d->sum, &err);
  if (st == XPACK_ERR_NOMEM) {
    xpack_et_xnn_graph_free(g);
    return st;
  }
  if (st != XPACK_OK) {
    d->error_status = st;
    d->error = dup_string(err.message);
  }
  /* The replay, exactly as pack does it but binding nothing. */
  xpack_replay_subgraph r;
  xpack_error rerr = {0};
  xpack_status rs = xpack_replay_define(g, src, NULL, NULL, &r, &rerr);
  if (rs == XPACK_ERR_NOMEM) { /* says nothing of the delegate: the command fails rather than call it unreplayable */
    xpack_et_xnn_graph_free(g);
    return rs;
  }
  if (rs == XPACK_OK) {
    d->replayable = true;
    xpack_replay_release(&r);
  } else {
    d->replay_status = rs;
    d->replay_error = dup_string(rerr.message[0] ? rerr.message : xpack_status_name(rs));
  }
  xpack_et_xnn_graph_free(g);
  if ((st != XPACK_OK && !d->error) || (rs != XPACK_OK && !d->replay_error)) return XPACK_ERR_NOMEM;
  return XPACK_OK;
}

static xpack_status inspect_program(const xpack_model_set* set, size_t p, insp_program* ip) {
  memset(ip, 0, sizeof *ip);
  ip->set = set;
  ip->file = &set->program_files[p];
  ip->program = set->programs[p];
  ip->info = xpack_et_program_get_info(ip->program);
  xpack_et_named_sources src = xpack_model_set_sources(set, p);
  size_t total = 0;
  for (size_t m = 0; m < ip->info->method_count; m++) total += ip->info->methods[m].delegate_count;
  ip->delegates = calloc(total ? total : 1, sizeof *ip->delegates);
  if (!ip->delegates) return XPACK_ERR_NOMEM;
  for (size_t m = 0; m < ip->info->method_count; m++) {
    const xpack_et_method* method = &ip->info->methods[m];
    for (size_t i = 0; i < method->delegate_count; i++) {
      insp_delegate* d = &ip->delegates[ip->delegate_count++];
      d->method = m;
      d->index = i;
      d->del = &method->delegates[i];
      if (!d->del->is_xnnpack) continue;
      ip->xnnpack_count++;
      xpack_status st = inspect_xnnpack(ip, &src, d);
      if (st != XPACK_OK) return st;
      if (d->replayable) ip->replayable_count++;
    }
  }
  return XPACK_OK;
}

static void free_program(insp_program* ip) {
  for (size_t i = 0; i < ip->delegate_count; i++) {
    insp_delegate* d = &ip->delegates[i];
    xpack_et_delegate_summary_clear(&d->sum);
    free(d->error);
    free(d->replay_error);
  }
  free(ip->delegates);
}

/* ------------------------------------------------------------------------------ text -- */

static const char* location_name(xpack_et_location l) { return l == XPACK_ET_LOCATION_SEGMENT ? "segment" : "inline"; }

static void print_delegate_text(const insp_program* ip, const insp_delegate* d, FILE* out) {
  char b[32];
  const xpack_et_delegate* del = d->del;
  fprintf(out, "  delegate %zu: %s, %s[%u], %s at offset %llu", d->index, cli_name(del->backend_id),
          location_name(del->location), (unsigned)del->index, cli_bytes(del->size, b),
          (unsigned long long)del->file_offset);
  if (!del->is_xnnpack) {
    fprintf(out, "\n    skipped: not XNNPACK\n");
    return;
  }
  if (!d->parsed) {
    fprintf(out, "\n    error: %s\n", cli_name(d->error));
    return;
  }
  fprintf(out, "\n    %s%s, %zu values, %zu nodes\n", cli_name(d->sum.identifier), d->sum.has_header ? " with XH00 header" : " (legacy, no XH00)",
          d->sum.value_count, d->sum.node_count);
  fprintf(out, "    nodes:");
  for (int t = 1; t <= XPACK_ET_XNN_NODE_TYPE_MAX; t++) {
    if (d->sum.node_type_counts[t]) fprintf(out, " %s x%u", xpack_et_xnn_node_type_name(t), (unsigned)d->sum.node_type_counts[t]);
  }
  fprintf(out, "\n    datatypes:");
  for (int t = 0; t < XPACK_ET_XNN_DT_COUNT; t++) {
    if (d->sum.datatype_counts[t]) fprintf(out, " %s x%u", xpack_et_xnn_datatype_name(t), (unsigned)d->sum.datatype_counts[t]);
  }
  if (d->sum.unknown_datatypes) fprintf(out, " unknown x%u", (unsigned)d->sum.unknown_datatypes);
  fprintf(out, "\n    constants: %zu, %s\n", d->sum.constant_count, cli_bytes(d->sum.constant_bytes, b));
  size_t shown = g_verbosity > 0 ? d->sum.constant_count : (d->sum.constant_count < 8 ? d->sum.constant_count : 8);
  for (size_t k = 0; k < shown; k++) {
    const xpack_et_constant_summary* c = &d->sum.constants[k];
    int64_t offset;
    const char* file = constant_place(ip, c, &offset);
    fprintf(out, "      %s  %zu bytes  %s%s", cli_name(c->identity), c->size, xpack_et_constant_source_name(c->source),
            c->is_scale ? " (scale)" : "");
    if (offset >= 0) fprintf(out, " at %s+%lld", xpack_model_base_name(file), (long long)offset);
    else fprintf(out, " in %s", xpack_model_base_name(file));
    fprintf(out, "  xvalues[%u] %s\n", (unsigned)c->value_index, xpack_et_xnn_datatype_name(c->datatype));
  }
  if (shown < d->sum.constant_count) fprintf(out, "      ... %zu more (-v lists all)\n", d->sum.constant_count - shown);
  if (d->error) fprintf(out, "    error: %s\n", cli_name(d->error));
  if (d->replayable) fprintf(out, "    replay: replayable\n");
  else fprintf(out, "    replay: NOT replayable: %s\n", cli_name(d->replay_error));
}

static void print_program_text(const insp_program* ip, FILE* out) {
  const xpack_et_program_info* info = ip->info;
  char b[32];
  fprintf(out, "%s: %s, program version %u, ", ip->file->path, cli_bytes(info->file_size, b), (unsigned)info->version);
  if (info->extended_header_size) {
    fprintf(out, "eh00 header %u bytes, %zu segment(s)\n", (unsigned)info->extended_header_size, info->segment_count);
  } else {
    fprintf(out, "no extended header\n");
  }
  fprintf(out, "named_data: %zu; legacy constant_buffer: %zu\n", info->named_data_count,
          info->legacy_constant_buffer_count);
  fprintf(out, "methods: %zu\n", info->method_count);
  size_t k = 0;
  for (size_t m = 0; m < info->method_count; m++) {
    const xpack_et_method* method = &info->methods[m];
    fprintf(out, "method %s: %zu delegate(s)\n", method->name ? cli_name(method->name) : "(unnamed)",
            method->delegate_count);
    for (size_t i = 0; i < method->delegate_count; i++) print_delegate_text(ip, &ip->delegates[k++], out);
  }
  if (ip->xnnpack_count == 0) {
    fprintf(out, "no XNNPACK delegate: nothing xpack can pack\n");
  } else {
    fprintf(out, "XNNPACK delegates: %zu, replayable: %zu, not replayable: %zu; other delegates skipped: %zu\n",
            ip->xnnpack_count, ip->replayable_count, ip->xnnpack_count - ip->replayable_count,
            ip->delegate_count - ip->xnnpack_count);
  }
}

/* ------------------------------------------------------------------------------ JSON -- */

static void json_opt_string(json* j, const char* s) {
  if (s) json_string(j, s);
  else json_null(j);
}

static void print_delegate_json(json* j, const insp_program* ip, const insp_delegate* d) {
  const xpack_et_delegate* del = d->del;
  json_object(j);
  json_key(j, "index"); json_uint(j, d->index);
  json_key(j, "backend"); json_string_n(j, del->backend_id, del->backend_id_len);
  json_key(j, "location"); json_string(j, location_name(del->location));
  json_key(j, "location_index"); json_uint(j, del->index);
  json_key(j, "offset"); json_uint(j, del->file_offset);
  json_key(j, "size"); json_uint(j, del->size);
  json_key(j, "xnnpack"); json_bool(j, del->is_xnnpack);
  json_key(j, "note"); json_opt_string(j, del->is_xnnpack ? NULL : "skipped: not XNNPACK");
  json_key(j, "error"); json_opt_string(j, d->error);
  json_key(j, "identifier"); json_opt_string(j, d->parsed ? d->sum.identifier : NULL);
  json_key(j, "has_header"); json_bool(j, d->parsed && d->sum.has_header);
  json_key(j, "values"); json_uint(j, d->sum.value_count);
  json_key(j, "nodes"); json_uint(j, d->sum.node_count);
  json_key(j, "node_counts"); json_object(j);
  for (int t = 1; t <= XPACK_ET_XNN_NODE_TYPE_MAX; t++) {
    if (d->sum.node_type_counts[t]) {
      json_key(j, xpack_et_xnn_node_type_name(t));
      json_uint(j, d->sum.node_type_counts[t]);
    }
  }
  json_end_object(j);
  json_key(j, "datatypes"); json_object(j);
  for (int t = 0; t < XPACK_ET_XNN_DT_COUNT; t++) {
    if (d->sum.datatype_counts[t]) {
      json_key(j, xpack_et_xnn_datatype_name(t));
      json_uint(j, d->sum.datatype_counts[t]);
    }
  }
  if (d->sum.unknown_datatypes) {
    json_key(j, "unknown");
    json_uint(j, d->sum.unknown_datatypes);
  }
  json_end_object(j);
  json_key(j, "constant_bytes"); json_uint(j, d->sum.constant_bytes);
  json_key(j, "constants"); json_array(j);
  for (size_t k = 0; k < d->sum.constant_count; k++) {
    const xpack_et_constant_summary* c = &d->sum.constants[k];
    int64_t offset;
    const char* file = constant_place(ip, c, &offset);
    json_object(j);
    json_key(j, "identity"); json_string(j, c->identity);
    json_key(j, "ambiguous"); json_bool(j, c->ambiguous);
    json_key(j, "size"); json_uint(j, c->size);
    json_key(j, "source"); json_string(j, xpack_et_constant_source_name(c->source));
    json_key(j, "file"); json_string(j, file);
    json_key(j, "offset");
    if (offset >= 0) json_uint(j, (uint64_t)offset);
    else json_null(j);
    json_key(j, "value"); json_uint(j, c->value_index);
    json_key(j, "datatype"); json_string(j, xpack_et_xnn_datatype_name(c->datatype));
    json_key(j, "scale"); json_bool(j, c->is_scale);
    json_end_object(j);
  }
  json_end_array(j);
  json_key(j, "replayable"); json_bool(j, d->replayable);
  json_key(j, "replay_error"); json_opt_string(j, d->replay_error);
  json_key(j, "replay_status"); json_opt_string(j, d->replay_error ? xpack_status_name(d->replay_status) : NULL);
  json_end_object(j);
}

static void print_program_json(json* j, const insp_program* ip) {
  const xpack_et_program_info* info = ip->info;
  json_object(j);
  json_key(j, "file"); json_string(j, ip->file->path);
  json_key(j, "size"); json_uint(j, info->file_size);
  json_key(j, "version"); json_uint(j, info->version);
  json_key(j, "extended_header_size"); json_uint(j, info->extended_header_size);
  json_key(j, "segments"); json_uint(j, info->segment_count);
  json_key(j, "named_data"); json_uint(j, info->named_data_count);
  json_key(j, "legacy_constant_buffers"); json_uint(j, info->legacy_constant_buffer_count);
  json_key(j, "delegates"); json_uint(j, ip->delegate_count);
  json_key(j, "xnnpack_delegates"); json_uint(j, ip->xnnpack_count);
  json_key(j, "replayable_delegates"); json_uint(j, ip->replayable_count);
  json_key(j, "nothing_to_pack"); json_bool(j, ip->xnnpack_count == 0);
  json_key(j, "methods"); json_array(j);
  size_t k = 0;
  for (size_t m = 0; m < info->method_count; m++) {
    const xpack_et_method* method = &info->methods[m];
    json_object(j);
    json_key(j, "name");
    if (method->name) json_string_n(j, method->name, method->name_len);
    else json_null(j);
    json_key(j, "delegates"); json_array(j);
    for (size_t i = 0; i < method->delegate_count; i++) print_delegate_json(j, ip, &ip->delegates[k++]);
    json_end_array(j);
    json_end_object(j);
  }
  json_end_array(j);
  json_end_object(j);
}

/* ------------------------------------------------------------------------------ command -- */

static const cli_option kOptions[] = {{"--data", 1, 0, 1}, {"--json", 0, 0, 0}};
static const cli_options kInspectOptions = {"inspect", kOptions, sizeof kOptions / sizeof kOptions[0]};

int cmd_inspect(int argc, char** argv) {
  bool as_json = false;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) as_json = true;
  }
  xpack_model_set set;
  int rc = model_args_open(&set, argc, argv, &kInspectOptions, XPACK_MODEL_SET_HASH_PROGRAMS);
  if (rc != 0) {
    xpack_model_set_close(&set);
    return rc;
  }
  insp_program* programs = calloc(set.program_count ? set.program_count : 1, sizeof *programs);
  if (!programs) {
    cli_error("out of memory");
    xpack_model_set_close(&set);
    return XPACK_EXIT_FAILED;
  }
  int exit_code = XPACK_EXIT_OK;
  size_t done = 0;
  for (; done < set.program_count; done++) {
    if (inspect_program(&set, done, &programs[done]) != XPACK_OK) {
      cli_error("%s: out of memory", set.program_files[done].path);
      done++;
      exit_code = XPACK_EXIT_FAILED;
      break;
    }
  }
  if (exit_code == XPACK_EXIT_OK) {
    if (as_json) {
      json j;
      json_init(&j, cli_out());
      json_object(&j);
      json_key(&j, "programs"); json_array(&j);
      for (size_t p = 0; p < set.program_count; p++) print_program_json(&j, &programs[p]);
      json_end_array(&j);
      json_key(&j, "data_files"); json_array(&j);
      for (size_t t = 0; t < set.ptd_count; t++) {
        json_object(&j);
        json_key(&j, "file"); json_string(&j, set.ptd_files[t].path);
        json_key(&j, "size"); json_uint(&j, set.ptd_files[t].size);
        json_key(&j, "entries"); json_uint(&j, xpack_et_ptd_get_info(set.ptds[t])->entry_count);
        json_end_object(&j);
      }
      json_end_array(&j);
      json_end_object(&j);
      json_finish(&j);
    } else {
      for (size_t p = 0; p < set.program_count; p++) {
        if (p) fprintf(cli_out(), "\n");
        print_program_text(&programs[p], cli_out());
      }
      for (size_t t = 0; t < set.ptd_count; t++) {
        fprintf(cli_out(), "data file %s: %zu entries\n", set.ptd_files[t].path, xpack_et_ptd_get_info(set.ptds[t])->entry_count);
      }
      if (set.program_count == 0) fprintf(cli_out(), "no program, only weight files: nothing xpack can pack\n");
    }
    /* Delegates that do not parse or whose constants do not resolve make the input bad. */
    for (size_t p = 0; p < set.program_count; p++) {
      for (size_t i = 0; i < programs[p].delegate_count; i++) {
        const insp_delegate* d = &programs[p].delegates[i];
        if (d->error) {
          cli_error("%s", d->error);
          int code = cli_exit_for_status(d->error_status);
          if (exit_code == XPACK_EXIT_OK) exit_code = code == XPACK_EXIT_OK ? XPACK_EXIT_BAD_INPUT : code;
        }
      }
    }
  }
  for (size_t p = 0; p < done; p++) free_program(&programs[p]);
  free(programs);
  xpack_model_set_close(&set);
  return exit_code;
}
