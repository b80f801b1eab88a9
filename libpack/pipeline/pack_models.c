/* Packing every XNNPACK delegate of a model set through one recording writer: xpack_pack_into_writer. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "common/error.h"
#include "common/quiet_thread.h"
#include "pipeline/pack_schedule.h"
#include "xpack_pipeline.h"

/* What replaying one delegate gave; reported in delegate order, whichever worker ran it. */
typedef struct delegate_outcome {
  xpack_delegate_ref ref;
  int done;
  xpack_status status;
  xpack_run_result result;
  xpack_error err;
} delegate_outcome;

/* One pack: where results, messages and progress go. */
typedef struct pack_run {
  const xpack_model_set* set;
  xpack_writer* writer;
  const xpack_pack_options* options;
  xpack_pack_report* report;
  uint64_t total;         /* delegates, for progress */
  _Atomic uint64_t done;  /* delegates finished, for progress */
} pack_run;

static void say(const pack_run* run, xpack_message_kind kind, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void say(const pack_run* run, xpack_message_kind kind, const char* fmt, ...) {
  if (run->options->on_message == NULL) return;
  char text[2 * XPACK_ERROR_MESSAGE_SIZE];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  run->options->on_message(run->options->message_context, kind, text);
}

static void progress_total(pack_run* run, uint64_t total) {
  run->total = total;
  if (run->options->on_progress) run->options->on_progress(run->options->progress_context, 0, total, 0);
}

/* Once per finished delegate, whatever became of it. Any thread. */
static void progress_delegate_done(pack_run* run) {
  const uint64_t done = ++run->done;
  if (run->options->on_progress == NULL) return;
  xpack_writer_stats stats;
  xpack_writer_stats_get(run->writer, &stats);
  run->options->on_progress(run->options->progress_context, done, run->total, stats.packed_bytes);
}

static void replay_into_writer(pack_run* run, delegate_outcome* o, uint32_t index) {
  o->status = xpack_writer_begin_delegate(run->writer, index, &o->err);
  if (o->status == XPACK_OK && o->ref.info->is_xnnpack) {
    const xpack_bind_target target = {.kind = XPACK_BIND_WRITER, .object = run->writer};
    o->status = xpack_run_delegate(run->set, &o->ref, &target, false, &o->result, &o->err);
  }
  xpack_error end_err;
  if (xpack_writer_end_delegate(run->writer, &end_err) != XPACK_OK && o->status == XPACK_OK) {
    o->status = end_err.status;
    o->err = end_err;
  }
  o->done = 1;
}

static int is_malformed(xpack_status st) { return st == XPACK_ERR_BAD_INPUT || st == XPACK_ERR_IO; }

/* A malformed delegate ends the pack, and so does running out of memory, which says nothing of the model: going
 * on would write a file short of the delegate's entries, which a pack run with more memory records. A delegate
 * XNNPACK cannot define or create here is reported and passed over. */
static int ends_pack(xpack_status st) { return is_malformed(st) || st == XPACK_ERR_NOMEM; }

/* Counts and reports one replayed delegate. One that ends the pack (ends_pack) has its error returned. */
static xpack_status report_one(pack_run* run, const delegate_outcome* o, xpack_error* err) {
  xpack_pack_report* c = run->report;
  const xpack_delegate_ref* ref = &o->ref;
  if (!ref->info->is_xnnpack) {
    c->skipped++;
    say(run, XPACK_MESSAGE_NOTE, "%s: method '%s' delegate %zu: backend %.*s is not XNNPACK, skipped", ref->file,
        ref->method_name, ref->delegate, (int)ref->info->backend_id_len, ref->info->backend_id);
    return XPACK_OK;
  }
  c->xnnpack++;
  const size_t refused = o->result.weights_not_recorded;
  if (refused > 0) {
    say(run, XPACK_MESSAGE_WARNING, "%s: method '%s' delegate %zu: %zu weight%s not recorded: %s", ref->file,
        ref->method_name, ref->delegate, refused, refused == 1 ? "" : "s", o->result.not_recorded.message);
  }
  const size_t unnamed = o->result.weights_unnamed_long;
  if (unnamed > 0) {
    say(run, XPACK_MESSAGE_WARNING, "%s: method '%s' delegate %zu: %zu weight%s not recorded: a named key makes the "
        "identity longer than %u bytes, so nothing names %s in a cache and XNNPACK packs %s at load", ref->file,
        ref->method_name, ref->delegate, unnamed, unnamed == 1 ? "" : "s", XPACK_IDENTITY_MAX_LEN,
        unnamed == 1 ? "it" : "them", unnamed == 1 ? "it" : "them");
  }
  if (o->status == XPACK_OK) {
    c->packed++;
    say(run, XPACK_MESSAGE_DETAIL, "packed %s: method '%s' delegate %zu in %.2f ms", ref->file, ref->method_name,
        ref->delegate, o->result.create_ms);
    return XPACK_OK;
  }
  if (c->not_packed++ == 0) c->first_error = o->err;
  if (ends_pack(o->status)) {
    c->failed_on_input = is_malformed(o->status);
    if (err) *err = o->err;
    return o->status;
  }
  say(run, XPACK_MESSAGE_ERROR, "not packed: %s", o->err.message);
  return XPACK_OK;
}

/* One delegate after another, on the calling thread. */
typedef struct serial {
  pack_run* run;
  size_t next_index; /* of the next delegate, in xpack_for_each_delegate order */
  xpack_status status;
  xpack_error* err;
} serial;

static int pack_one(void* context, const xpack_model_set* set, const xpack_delegate_ref* ref) {
  (void)set;
  serial* s = context;
  delegate_outcome o;
  memset(&o, 0, sizeof o);
  o.ref = *ref;
  replay_into_writer(s->run, &o, (uint32_t)s->next_index++);
  s->status = report_one(s->run, &o, s->err);
  progress_delegate_done(s->run);
  return s->status != XPACK_OK;
}

static int count_one(void* context, const xpack_model_set* set, const xpack_delegate_ref* ref) {
  (void)set;
  (void)ref;
  ++*(uint64_t*)context;
  return 0;
}

static xpack_status pack_serial(pack_run* run, xpack_error* err) {
  if (run->options->on_progress) {
    uint64_t total = 0;
    xpack_for_each_delegate(run->set, NULL, count_one, &total);
    progress_total(run, total);
  }
  serial s = {run, 0, XPACK_OK, err};
  xpack_for_each_delegate(run->set, NULL, pack_one, &s);
  return s.status;
}

/* The worker pool: each worker takes what xp_pack_schedule gives it and replays it into the one writer, whose
 * bindings are per thread and whose layout follows delegate indices (xpack_writer_begin_delegate), so the
 * file does not depend on which worker took which delegate. */
typedef struct pool {
  xp_pack_schedule schedule;
  pack_run* run;
  delegate_outcome* outcomes;
} pool;

static void* pool_worker(void* arg) {
  pool* p = arg;
  for (;;) {
    const size_t i = xp_pack_schedule_take(&p->schedule);
    if (i == SIZE_MAX) return NULL;
    delegate_outcome* o = &p->outcomes[i];
    replay_into_writer(p->run, o, (uint32_t)i);
    /* A delegate that ends the pack: later ones are not started (the pack fails with its error). */
    xp_pack_schedule_done(&p->schedule, i, ends_pack(o->status));
    progress_delegate_done(p->run);
  }
}

typedef struct ref_list {
  delegate_outcome* items;
  size_t count, cap;
} ref_list;

static int collect_one(void* context, const xpack_model_set* set, const xpack_delegate_ref* ref) {
  (void)set;
  ref_list* l = context;
  if (l->count == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 64;
    delegate_outcome* grown = realloc(l->items, cap * sizeof *grown);
    if (grown == NULL) return 1;
    l->items = grown;
    l->cap = cap;
  }
  memset(&l->items[l->count], 0, sizeof *l->items);
  l->items[l->count++].ref = *ref;
  return 0;
}

static xpack_status pack_parallel(pack_run* run, xpack_error* err) {
  ref_list refs = {0};
  if (xpack_for_each_delegate(run->set, NULL, collect_one, &refs) != 0) {
    free(refs.items);
    return xp_fail(err, XPACK_ERR_NOMEM, "out of memory listing the delegates");
  }
  progress_total(run, refs.count);
  pool p = {.run = run, .outcomes = refs.items};
  const int reverse = run->options->order == XPACK_PACK_ORDER_REVERSE;
  int planned = xp_pack_schedule_init(&p.schedule, refs.count, reverse) == 0;
  for (size_t i = 0; planned && i < refs.count; i++) {
    planned = xp_pack_schedule_list(&p.schedule, i, run->set, &refs.items[i].ref) == 0;
  }
  if (!planned) {
    xp_pack_schedule_destroy(&p.schedule);
    free(refs.items);
    return xp_fail(err, XPACK_ERR_NOMEM, "out of memory planning the delegates");
  }
  const size_t jobs = (size_t)run->options->jobs;
  size_t workers = jobs < refs.count ? jobs : refs.count;
  pthread_t* threads = calloc(workers + 1, sizeof *threads);
  size_t started = 0;
  /* The calling thread is one of the workers. */
  while (threads && started + 1 < workers && xp_thread_create_quiet(&threads[started], pool_worker, &p) == 0) started++;
  pool_worker(&p);
  for (size_t i = 0; i < started; i++) pthread_join(threads[i], NULL);
  free(threads);
  xp_pack_schedule_destroy(&p.schedule);
  /* In file order, as one job reports. A delegate that never ran was left waiting when one that ends the pack
   * stopped the schedule (it shared a raw weight with one in flight, or the order is reversed), and may come
   * before it in file order: passed over, so that the stopping one's error is the pack's. Only a stop leaves one. */
  xpack_status st = XPACK_OK;
  for (size_t i = 0; i < refs.count && st == XPACK_OK; i++) {
    if (refs.items[i].done) st = report_one(run, &refs.items[i], err);
  }
  free(refs.items);
  return st;
}

/* The input files' hashes, computed on a thread of their own while the delegates are packed: it reads every
 * byte of the inputs, and pack has a core to spare for it whenever a delegate waits. */
typedef struct input_hashes {
  const xpack_model_set* set;
  uint64_t programs[XPACK_MODEL_SET_MAX_FILES], ptds[XPACK_MODEL_SET_MAX_FILES];
} input_hashes;

static void* hash_inputs(void* arg) {
  input_hashes* h = arg;
  size_t size = 0;
  for (size_t i = 0; i < h->set->program_count; i++) {
    const uint8_t* bytes = xpack_et_program_bytes(h->set->programs[i], &size);
    h->programs[i] = XXH3_64bits(bytes, size);
  }
  for (size_t i = 0; i < h->set->ptd_count; i++) {
    const uint8_t* bytes = xpack_et_ptd_bytes(h->set->ptds[i], &size);
    h->ptds[i] = XXH3_64bits(bytes, size);
  }
  return NULL;
}

/* Records the inputs, the versions and this CPU in the writer. Stops at the first failure (out of memory). */
static xpack_status record_provenance(const xpack_model_set* set, const input_hashes* hashes, xpack_writer* writer,
                                      xpack_error* err) {
  xpack_status st = XPACK_OK;
  for (size_t i = 0; i < set->program_count && st == XPACK_OK; i++) {
    const xpack_model_file* f = &set->program_files[i];
    st = xpack_writer_add_input(writer, xpack_model_base_name(f->path), XPACK_INPUT_PTE, f->size, hashes->programs[i],
                                f->program_size, f->program_hash, err);
  }
  for (size_t i = 0; i < set->ptd_count && st == XPACK_OK; i++) {
    const xpack_model_file* f = &set->ptd_files[i];
    st = xpack_writer_add_input(writer, xpack_model_base_name(f->path), XPACK_INPUT_PTD, f->size, hashes->ptds[i], 0, 0,
                                err);
  }
  if (st == XPACK_OK) st = xpack_writer_add_info(writer, "xpack.version", XPACK_VERSION_STRING, err);
  if (st == XPACK_OK) st = xpack_writer_add_info(writer, "xnnpack.version", XPACK_XNNPACK_VERSION, err);
  char cpu[XPACK_CPU_DESCRIPTION_SIZE];
  if (st == XPACK_OK) st = xpack_writer_add_info(writer, "cpu", xpack_describe_this_cpu(cpu, sizeof cpu), err);
  return st;
}

xpack_status xpack_pack_into_writer(const xpack_model_set* set, xpack_writer* writer,
                                    const xpack_pack_options* options, xpack_pack_report* report, xpack_error* err) {
  if (report) memset(report, 0, sizeof *report);
  if (set == NULL || writer == NULL || options == NULL || report == NULL) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_pack_into_writer: NULL argument");
  }
  pack_run run = {.set = set, .writer = writer, .options = options, .report = report};
  input_hashes hashes = {.set = set};
  pthread_t hasher;
  const int hashing = xp_thread_create_quiet(&hasher, hash_inputs, &hashes) == 0;
  if (!hashing) hash_inputs(&hashes);
  xpack_status st = options->jobs > 1 ? pack_parallel(&run, err) : pack_serial(&run, err);
  if (hashing) pthread_join(hasher, NULL);
  /* Recorded after the delegates, which changes no byte: the writer lays out what is recorded outside any
   * delegate in the order it was recorded, before everything of the delegates. */
  xpack_error provenance_err;
  if (record_provenance(set, &hashes, writer, &provenance_err) != XPACK_OK && st == XPACK_OK) {
    st = provenance_err.status;
    if (err) *err = provenance_err;
  }
  xpack_writer_stats_get(writer, &report->stats);
  return st;
}
