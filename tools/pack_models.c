#include "pack_models.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "pack_schedule.h"
#include "progress.h"

typedef struct pack_job {
  xpack_writer* writer;
  pack_counts* counts;
  progress* progress; /* NULL: no progress line */
  size_t next_index;  /* of the next delegate, in for_each_delegate order */
} pack_job;


/* What replaying one delegate gave; reported in delegate order, whichever worker ran it. */
typedef struct delegate_outcome {
  delegate_ref ref;
  int done;
  xpack_status status;
  run_result result;
  xpack_error err;
} delegate_outcome;

static void replay_into_writer(xpack_writer* writer, const model_set* set, delegate_outcome* o, uint32_t index) {
  xpack_writer_begin_delegate(writer, index, NULL);
  if (o->ref.info->is_xnnpack) {
    o->status = run_delegate(set, &o->ref, xpack_writer_provider(writer), bind_to_writer, writer, unbind_from_writer,
                             0, &o->result, &o->err);
  }
  xpack_writer_end_delegate(writer, NULL);
  o->done = 1;
}

/* Counts and reports one replayed delegate; returns an exit code when it was malformed. */
static int report_one(pack_counts* c, const delegate_outcome* o) {
  const delegate_ref* ref = &o->ref;
  if (!ref->info->is_xnnpack) {
    c->skipped++;
    if (g_verbosity >= 0) {
      fprintf(stderr, "note: %s: method '%s' delegate %zu: backend %.*s is not XNNPACK, skipped\n", ref->file,
              ref->method_name, ref->delegate, (int)ref->info->backend_id_len, ref->info->backend_id);
    }
    return 0;
  }
  c->xnnpack++;
  if (o->status == XPACK_OK) {
    c->packed++;
    if (g_verbosity > 0) {
      fprintf(stderr, "packed %s: method '%s' delegate %zu in %.2f ms\n", ref->file, ref->method_name, ref->delegate,
              o->result.create_ms);
    }
    return 0;
  }
  if (c->not_packed++ == 0) c->first_error = o->err;
  if (o->status == XPACK_ERR_BAD_INPUT || o->status == XPACK_ERR_IO) {
    c->bad_input = 1;
    cli_error("%s", o->err.message);
    return XPACK_EXIT_BAD_INPUT;
  }
  cli_error("not packed: %s", o->err.message);
  return 0;
}

static int pack_one(void* context, const model_set* set, const delegate_ref* ref) {
  pack_job* job = context;
  delegate_outcome o;
  memset(&o, 0, sizeof o);
  o.ref = *ref;
  replay_into_writer(job->writer, set, &o, (uint32_t)job->next_index++);
  return report_one(job->counts, &o);
}

/* Advances the progress line once per finished delegate, whatever became of it. */
static int pack_one_counted(void* context, const model_set* set, const delegate_ref* ref) {
  pack_job* job = context;
  int rc = pack_one(context, set, ref);
  if (job->progress) {
    xpack_writer_stats stats;
    xpack_writer_stats_get(job->writer, &stats);
    progress_item_done(job->progress, stats.packed_bytes);
  }
  return rc;
}

static int count_one(void* context, const model_set* set, const delegate_ref* ref) {
  (void)set;
  (void)ref;
  ++*(uint64_t*)context;
  return 0;
}

int pack_model_set(const model_set* set, xpack_writer* writer, pack_counts* counts) {
  return pack_model_set_jobs(set, writer, NULL, 1, counts);
}

int pack_model_set_progress(const model_set* set, xpack_writer* writer, progress* bar, pack_counts* counts) {
  return pack_model_set_jobs(set, writer, bar, 1, counts);
}

/* The worker pool: each worker takes what pack_schedule gives it and replays it into the one writer, whose
 * bindings are per thread and whose layout follows delegate indices (xpack_writer_begin_delegate), so the
 * file does not depend on which worker took which delegate. */
typedef struct pool {
  pack_schedule schedule;
  const model_set* set;
  xpack_writer* writer;
  progress* bar;
  delegate_outcome* outcomes;
} pool;

static void* pool_worker(void* arg) {
  pool* p = arg;
  for (;;) {
    const size_t i = pack_schedule_take(&p->schedule);
    if (i == SIZE_MAX) return NULL;
    delegate_outcome* o = &p->outcomes[i];
    replay_into_writer(p->writer, p->set, o, (uint32_t)i);
    /* A malformed delegate: later ones are not started (the run fails with exit 3). */
    const int malformed = o->status == XPACK_ERR_BAD_INPUT || o->status == XPACK_ERR_IO;
    pack_schedule_done(&p->schedule, i, malformed);
    if (p->bar) {
      xpack_writer_stats stats;
      xpack_writer_stats_get(p->writer, &stats);
      progress_item_done(p->bar, stats.packed_bytes);
    }
  }
}

typedef struct ref_list {
  delegate_outcome* items;
  size_t count, cap;
} ref_list;

static int collect_one(void* context, const model_set* set, const delegate_ref* ref) {
  (void)set;
  ref_list* l = context;
  if (l->count == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 64;
    delegate_outcome* grown = realloc(l->items, cap * sizeof *grown);
    if (grown == NULL) return XPACK_EXIT_FAILED;
    l->items = grown;
    l->cap = cap;
  }
  memset(&l->items[l->count], 0, sizeof *l->items);
  l->items[l->count++].ref = *ref;
  return 0;
}

static int pack_parallel(const model_set* set, xpack_writer* writer, progress* bar, int jobs, pack_counts* counts) {
  ref_list refs = {0};
  if (for_each_delegate(set, NULL, collect_one, &refs) != 0) {
    free(refs.items);
    cli_error("out of memory listing the delegates");
    return XPACK_EXIT_FAILED;
  }
  progress_set_total(bar, refs.count);
  const char* order = getenv("XPACK_TEST_PACK_ORDER");
  pool p = {.set = set, .writer = writer, .bar = bar, .outcomes = refs.items};
  int planned = pack_schedule_init(&p.schedule, refs.count, order != NULL && strcmp(order, "reverse") == 0) == 0;
  for (size_t i = 0; planned && i < refs.count; i++) {
    planned = pack_schedule_list(&p.schedule, i, set, &refs.items[i].ref) == 0;
  }
  if (!planned) {
    pack_schedule_destroy(&p.schedule);
    free(refs.items);
    cli_error("out of memory planning the delegates");
    return XPACK_EXIT_FAILED;
  }
  size_t workers = (size_t)jobs < refs.count ? (size_t)jobs : refs.count;
  pthread_t* threads = calloc(workers + 1, sizeof *threads);
  size_t started = 0;
  /* The calling thread is one of the workers. */
  while (threads && started + 1 < workers && pthread_create(&threads[started], NULL, pool_worker, &p) == 0) started++;
  pool_worker(&p);
  for (size_t i = 0; i < started; i++) pthread_join(threads[i], NULL);
  free(threads);
  pack_schedule_destroy(&p.schedule);
  int rc = 0;
  for (size_t i = 0; i < refs.count && rc == 0 && refs.items[i].done; i++) rc = report_one(counts, &refs.items[i]);
  free(refs.items);
  return rc;
}

/* The input files' hashes, computed on a thread of their own while the delegates are packed: it reads every
 * byte of the inputs, and pack has a core to spare for it whenever a delegate waits. */
typedef struct input_hashes {
  const model_set* set;
  uint64_t programs[MODEL_SET_MAX_FILES], ptds[MODEL_SET_MAX_FILES];
} input_hashes;

static void* hash_inputs(void* arg) {
  input_hashes* h = arg;
  for (size_t i = 0; i < h->set->program_count; i++) h->programs[i] = model_set_file_hash(h->set, 0, i);
  for (size_t i = 0; i < h->set->ptd_count; i++) h->ptds[i] = model_set_file_hash(h->set, 1, i);
  return NULL;
}

static int pack_delegates(const model_set* set, xpack_writer* writer, progress* bar, int jobs, pack_counts* counts) {
  if (jobs > 1) return pack_parallel(set, writer, bar, jobs, counts);
  pack_job job = {writer, counts, bar, 0};
  if (bar) {
    uint64_t total = 0;
    for_each_delegate(set, NULL, count_one, &total);
    progress_set_total(bar, total);
  }
  return for_each_delegate(set, NULL, pack_one_counted, &job);
}

int pack_model_set_jobs(const model_set* set, xpack_writer* writer, progress* bar, int jobs, pack_counts* counts) {
  memset(counts, 0, sizeof *counts);
  input_hashes hashes = {.set = set};
  pthread_t hasher;
  const int hashing = pthread_create(&hasher, NULL, hash_inputs, &hashes) == 0;
  if (!hashing) hash_inputs(&hashes);
  int rc = pack_delegates(set, writer, bar, jobs, counts);
  if (hashing) pthread_join(hasher, NULL);
  /* Recorded after the delegates, which changes no byte: the writer lays out what is recorded outside any
   * delegate in the order it was recorded, before everything of the delegates. */
  for (size_t i = 0; i < set->program_count; i++) {
    const model_file* f = &set->program_files[i];
    xpack_writer_add_input(writer, model_base_name(f->path), XPACK_INPUT_PTE, f->size, hashes.programs[i],
                           f->program_size, f->program_hash, NULL);
  }
  for (size_t i = 0; i < set->ptd_count; i++) {
    const model_file* f = &set->ptd_files[i];
    xpack_writer_add_input(writer, model_base_name(f->path), XPACK_INPUT_PTD, f->size, hashes.ptds[i], 0, 0, NULL);
  }
  xpack_writer_add_info(writer, "xpack.version", XPACK_VERSION_STRING, NULL);
  xpack_writer_add_info(writer, "xnnpack.version", XPACK_XNNPACK_VERSION, NULL);
  return rc;
}
