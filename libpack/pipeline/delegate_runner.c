/* Walking every delegate of a model set, and creating (and optionally running) an XNNPACK runtime for one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xxhash.h>

#include "common/error.h"
#include "loader/xnn_compat.h"
#include "xpack_pipeline.h"

int xpack_for_each_delegate(const xpack_model_set* set, const char* only_method, xpack_delegate_fn fn,
                            void* context) {
  if (set == NULL || fn == NULL) return 0;
  for (size_t p = 0; p < set->program_count; p++) {
    const xpack_et_program_info* info = xpack_et_program_get_info(set->programs[p]);
    for (size_t m = 0; m < info->method_count; m++) {
      const xpack_et_method* method = &info->methods[m];
      const char* name = method->name ? method->name : "";
      if (only_method && strcmp(only_method, name) != 0) continue;
      for (size_t d = 0; d < method->delegate_count; d++) {
        xpack_delegate_ref ref = {p, m, d, xpack_model_base_name(set->program_files[p].path), name, &method->delegates[d]};
        int rc = fn(context, set, &ref);
        if (rc) return rc;
      }
    }
  }
  return 0;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Deterministic inputs: the same method, delegate and input always get the same bytes. */
static void fill_input(uint8_t* buf, const xpack_replay_external* e, const xpack_delegate_ref* ref) {
  uint64_t seed = XXH3_64bits(ref->method_name, strlen(ref->method_name)) ^ (ref->delegate * 0x9E3779B97F4A7C15ULL) ^
                  ((uint64_t)e->id << 32);
  const int is_float = e->datatype == XPACK_ET_XNN_DT_FP32;
  const int is_half = e->datatype == XPACK_ET_XNN_DT_FP16;
  for (size_t k = 0; k < e->bytes;) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    if (is_float && k + 4 <= e->bytes) {
      float f = (float)((int32_t)(seed >> 40) - (1 << 23)) / (float)(1 << 23);
      memcpy(buf + k, &f, 4);
      k += 4;
    } else if (is_half && k + 2 <= e->bytes) {
      uint16_t h = (uint16_t)(0x3000 + ((seed >> 40) & 0x0fff)) | (uint16_t)((seed >> 63) << 15); /* |x| < 1 */
      memcpy(buf + k, &h, 2);
      k += 2;
    } else {
      buf[k++] = (uint8_t)(seed >> 56);
    }
  }
}

xpack_status xpack_execute_runtime(xnn_runtime_t runtime, const xpack_replay_subgraph* replay,
                                   const xpack_delegate_ref* ref, xpack_run_result* out, xpack_error* err) {
  xpack_status st = XPACK_OK;
  enum xnn_status xs = xnn_status_success;
  xpack_error why;
  if (out != NULL) { /* set, not added to: a result may be reused (a review found the hashes appended) */
    out->first_inference_ms = 0;
    out->num_outputs = 0;
  }
  if (runtime == NULL || replay == NULL || ref == NULL || out == NULL) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_execute_runtime: NULL argument");
  }
  /* Reshaped and checked before the inputs and outputs are allocated: their sizes are the graph's declared dims,
   * which a crafted file sets to gigabytes that the reshape or the check then refuses (a 1.7 KB program cost
   * 8.4 GB of zeroed and filled buffers before its reshape failed; found by a review). */
  if (replay->grows) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT,
                   "%s: method '%s' delegate %zu: XNNPACK's reshape makes its values %llu bytes larger than their "
                   "declared dims, more than the %llu it may (the most: value %u, %llu bytes where its dims give "
                   "%llu); not run, since XNNPACK would allocate the computed sizes",
                   ref->file, ref->method_name, ref->delegate, (unsigned long long)replay->growth_bytes,
                   (unsigned long long)XPACK_REPLAY_GROWTH_BUDGET, (unsigned)replay->grown_value,
                   (unsigned long long)replay->grown_bytes, (unsigned long long)replay->grown_declared_bytes);
  }
  const double t0 = now_ms();
  if ((xs = xnn_reshape_runtime(runtime)) != xnn_status_success) {
    return xp_fail(err, XPACK_ERR_XNNPACK, "%s: method '%s' delegate %zu: reshaping the runtime failed (status %d: %s)",
                   ref->file, ref->method_name, ref->delegate, (int)xs, xp_xnn_status_text(xs));
  }
  if ((st = xpack_replay_check_externals(runtime, replay, &why)) != XPACK_OK) {
    return xp_fail(err, st, "%s: method '%s' delegate %zu: %s", ref->file, ref->method_name, ref->delegate,
                   why.message);
  }
  const double reshape_ms = now_ms() - t0;
  struct xnn_external_value* ext = calloc(replay->num_externals + 1, sizeof *ext);
  int ok = ext != NULL;
  for (uint32_t i = 0; ok && i < replay->num_externals; i++) {
    ext[i].id = replay->externals[i].id;
    ext[i].data = calloc(1, replay->externals[i].bytes + XNN_EXTRA_BYTES);
    ok = ext[i].data != NULL;
    if (ok && replay->externals[i].is_input) fill_input(ext[i].data, &replay->externals[i], ref);
  }
  const double t1 = now_ms();
  if (!ok) {
    st = xp_fail(err, XPACK_ERR_NOMEM, "%s: method '%s' delegate %zu: out of memory for its inputs and outputs",
                 ref->file, ref->method_name, ref->delegate);
  } else if ((xs = xnn_setup_runtime_v2(runtime, replay->num_externals, ext)) != xnn_status_success ||
             (xs = xnn_invoke_runtime(runtime)) != xnn_status_success) {
    st = xp_fail(err, XPACK_ERR_XNNPACK, "%s: method '%s' delegate %zu: running the runtime failed (status %d: %s)",
                 ref->file, ref->method_name, ref->delegate, (int)xs, xp_xnn_status_text(xs));
  } else {
    out->first_inference_ms = reshape_ms + (now_ms() - t1); /* reshape, set-up and run: not the buffers' filling */
    for (uint32_t i = 0; i < replay->num_externals && out->num_outputs < XPACK_RUN_MAX_OUTPUTS; i++) {
      if (!replay->externals[i].is_input) {
        out->output_hash[out->num_outputs++] = XXH3_64bits(ext[i].data, replay->externals[i].bytes);
      }
    }
  }
  for (uint32_t i = 0; ext && i < replay->num_externals; i++) free(ext[i].data);
  free(ext);
  return st;
}

/* A writer also needs the packing family of every filter it records (the loader reads them from the file).
 * A family the writer refuses costs those weights their entries: counted, and the first reason kept. Running out
 * of memory is no property of the model: it fails the delegate (XPACK_ERR_NOMEM, in err), so that a pack never
 * writes a file short of entries it could have recorded. */
static xpack_status bind_families(xpack_writer* writer, const xpack_replay_subgraph* replay, xpack_run_result* out,
                                  xpack_error* err) {
  for (size_t i = 0; i < replay->num_weight_families; i++) {
    const xpack_replay_weight_family* f = &replay->weight_families[i];
    xpack_error why;
    const xpack_status st = xpack_writer_bind_family(writer, f->kernel, &f->family, &why);
    if (st == XPACK_ERR_NOMEM) {
      if (err) *err = why;
      return st;
    }
    if (st != XPACK_OK && out->weights_not_recorded++ == 0) out->not_recorded = why;
  }
  return XPACK_OK;
}

static void unbind_from_cache(void* cache) { xpack_cache_unbind_all(cache); }

/* A writer's bindings, and whether one ran out of memory: that weight would be packed but not recorded, which a
 * pack must not let pass (bind_families). A bind refused for its arguments leaves the weight unnamed, as before. */
typedef struct writer_binding {
  xpack_writer* writer;
  xpack_error error; /* the first bind that ran out of memory, else XPACK_OK */
} writer_binding;

static void bind_to_writer(void* context, const void* raw, const char* identity, size_t len) {
  writer_binding* wb = context;
  xpack_error why;
  if (xpack_writer_bind(wb->writer, raw, identity, len, &why) == XPACK_ERR_NOMEM && wb->error.status == XPACK_OK) {
    wb->error = why;
  }
}

static void unbind_from_writer(void* writer) { xpack_writer_unbind_all(writer); }

/* The provider and callbacks a target stands for: bind(context, ...), unbind(target->object). */
typedef struct binding {
  struct xnn_weights_cache_provider* provider;
  xpack_bind_fn bind;
  void* context;
  void (*unbind)(void*);
} binding;

static xpack_status resolve_target(const xpack_bind_target* target, writer_binding* wb, binding* b, xpack_error* err) {
  *b = (binding){0};
  switch (target->kind) {
    case XPACK_BIND_NONE: return XPACK_OK;
    case XPACK_BIND_CACHE:
      *b = (binding){xpack_cache_provider(target->object), xpack_replay_bind_to_cache, target->object, unbind_from_cache};
      break;
    case XPACK_BIND_WRITER:
      *wb = (writer_binding){.writer = target->object, .error = {XPACK_OK, ""}};
      *b = (binding){xpack_writer_provider(target->object), bind_to_writer, wb, unbind_from_writer};
      break;
    case XPACK_BIND_CALLBACKS:
      *b = (binding){target->provider, target->bind, target->object, target->unbind};
      return XPACK_OK;
    default: return xp_fail(err, XPACK_ERR_ARG, "xpack_run_delegate: unknown bind kind %d", (int)target->kind);
  }
  if (target->object == NULL) return xp_fail(err, XPACK_ERR_ARG, "xpack_run_delegate: bind target without object");
  return XPACK_OK;
}

xpack_status xpack_run_delegate(const xpack_model_set* set, const xpack_delegate_ref* ref,
                                const xpack_bind_target* target, bool execute, xpack_run_result* out,
                                xpack_error* err) {
  if (out) memset(out, 0, sizeof *out);
  if (set == NULL || ref == NULL || target == NULL || out == NULL) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_run_delegate: NULL argument");
  }
  if (ref->program >= set->program_count) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_run_delegate: program %zu of a set of %zu", ref->program,
                   set->program_count);
  }
  binding b;
  writer_binding wb;
  xpack_status st = resolve_target(target, &wb, &b, err);
  if (st != XPACK_OK) return st;
  xpack_et_xnn_graph* graph = NULL;
  st = xpack_et_xnn_graph_open(set->programs[ref->program], ref->method, ref->delegate, &graph, err);
  if (st != XPACK_OK) return st;
  xpack_et_named_sources sources = xpack_model_set_sources(set, ref->program);
  xpack_replay_subgraph replay;
  st = xpack_replay_define(graph, &sources, b.bind, b.context, &replay, err);
  if (st != XPACK_OK) {
    if (b.unbind) b.unbind(target->object); /* what the define bound before it failed */
    xpack_et_xnn_graph_free(graph);
    return st;
  }
  if (target->kind == XPACK_BIND_WRITER) {
    if (wb.error.status != XPACK_OK) {
      st = wb.error.status;
      if (err) *err = wb.error;
    }
    if (st == XPACK_OK) st = bind_families(target->object, &replay, out, err);
    out->weights_unnamed_long = replay.unnamed_long;
  }
  if (st == XPACK_OK && target->kind == XPACK_BIND_CACHE && xpack_cache_refusal(target->object) == NULL) { /* else nothing is served */
    st = xpack_replay_size_weights_for_cache(graph, &sources, target->object, err);
  }
  if (st != XPACK_OK) {
    if (b.unbind) b.unbind(target->object);
    xpack_replay_release(&replay);
    xpack_et_xnn_graph_free(graph);
    return st;
  }
  xnn_runtime_t runtime = NULL;
  double t0 = now_ms();
  enum xnn_status xs = xpack_replay_create_runtime(&replay, b.provider, &runtime);
  out->create_ms = now_ms() - t0;
  if (b.unbind) b.unbind(target->object);
  xpack_replay_drop_definition(&replay); /* as ExecuTorch, before the first inference */
  if (xs != xnn_status_success) {
    st = xp_fail(err, xp_xnn_failure(xs), "%s: method '%s' delegate %zu: xnn_create_runtime_v4 failed (status %d: %s)",
                 ref->file, ref->method_name, ref->delegate, (int)xs, xp_xnn_status_text(xs));
  } else if (execute) {
    st = xpack_execute_runtime(runtime, &replay, ref, out, err);
  }
  if (runtime) xnn_delete_runtime(runtime);
  xpack_replay_release(&replay);
  xpack_et_xnn_graph_free(graph);
  return st;
}
