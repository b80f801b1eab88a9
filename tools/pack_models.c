#include "pack_models.h"

#include <stdio.h>
#include <string.h>

#include "cli_common.h"

typedef struct pack_job {
  xpack_writer* writer;
  pack_counts* counts;
} pack_job;


static int pack_one(void* context, const model_set* set, const delegate_ref* ref) {
  pack_job* job = context;
  pack_counts* c = job->counts;
  if (!ref->info->is_xnnpack) {
    c->skipped++;
    if (g_verbosity >= 0) {
      fprintf(stderr, "note: %s: method '%s' delegate %zu: backend %.*s is not XNNPACK, skipped\n", ref->file,
              ref->method_name, ref->delegate, (int)ref->info->backend_id_len, ref->info->backend_id);
    }
    return 0;
  }
  c->xnnpack++;
  run_result result;
  xpack_error err;
  xpack_status st = run_delegate(set, ref, xpack_writer_provider(job->writer), bind_to_writer, job->writer,
                                 unbind_from_writer, 0, &result, &err);
  if (st == XPACK_OK) {
    c->packed++;
    if (g_verbosity > 0) {
      fprintf(stderr, "packed %s: method '%s' delegate %zu in %.2f ms\n", ref->file, ref->method_name, ref->delegate,
              result.create_ms);
    }
    return 0;
  }
  if (c->not_packed++ == 0) c->first_error = err;
  if (st == XPACK_ERR_BAD_INPUT || st == XPACK_ERR_IO) {
    c->bad_input = 1;
    cli_error("%s", err.message);
    return XPACK_EXIT_BAD_INPUT;
  }
  cli_error("not packed: %s", err.message);
  return 0;
}

int pack_model_set(const model_set* set, xpack_writer* writer, pack_counts* counts) {
  memset(counts, 0, sizeof *counts);
  for (size_t i = 0; i < set->program_count; i++) {
    const model_file* f = &set->program_files[i];
    xpack_writer_add_input(writer, model_base_name(f->path), XPACK_INPUT_PTE, f->size, f->hash, f->program_size,
                           f->program_hash);
  }
  for (size_t i = 0; i < set->ptd_count; i++) {
    const model_file* f = &set->ptd_files[i];
    xpack_writer_add_input(writer, model_base_name(f->path), XPACK_INPUT_PTD, f->size, f->hash, 0, 0);
  }
  xpack_writer_add_info(writer, "xpack.version", XPACK_VERSION_STRING);
  xpack_writer_add_info(writer, "xnnpack.version", XPACK_XNNPACK_VERSION);
  pack_job job = {writer, counts};
  return for_each_delegate(set, NULL, pack_one, &job);
}
