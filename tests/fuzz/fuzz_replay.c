/* libFuzzer harness for the replay and run paths: a valid program with a list of numeric edits to its
 * parsed XNNPACK graphs, replayed into the real XNNPACK through a recording writer (the weights cache
 * `pack` uses), each weight node sized alone as a loader's caller does (xpack_replay_size_weights), then
 * reshaped, size-checked and run as `xpack run` does.
 *
 * Input: byte 0 = number of edits (mod 17), then 8 bytes per edit, then a whole .pte. The custom mutator
 * changes only the edits, so the program stays a well-formed flatbuffer and every edit is one a crafted
 * file could make: a field the reader does not constrain gets any value, an id gets the id_out of an
 * existing value (the reader refuses the others), a dims entry or a count at most 65535 (larger ones only
 * make XNNPACK allocate more). A crash, a sanitizer report or an XNNPACK write past an output buffer (each
 * sits against a guard page) is a finding; an error from libpack is the expected outcome.
 * Seeds: "\0" + a generated program (run_fuzzers.sh). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xnnpack.h>

#include "et/xnn_graph_internal.h"
#include "xpack.h"
#include "xpack_executorch.h"
#include "xpack_loader.h"
#include "xpack_replay.h"

enum { EDIT_BYTES = 8, MAX_EDITS = 16 };

typedef struct edit {
  uint8_t target;   /* % 4: value field, value dim, node field, graph id */
  uint8_t field;    /* which field (mod the count) */
  uint16_t element; /* which value or node (mod the count) */
  uint32_t number;
} edit;

static edit read_edit(const uint8_t* p) {
  edit e = {p[0], p[1], (uint16_t)(p[2] | p[3] << 8), (uint32_t)p[4] | (uint32_t)p[5] << 8 |
                                                          (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24};
  return e;
}

static int verbose; /* FUZZ_REPLAY_VERBOSE=1: print each edit and libpack's answer (reproducing a finding) */

static uint32_t existing_id(const xpack_et_xnn_graph* g, uint32_t number) {
  return g->value_count ? g->values[number % g->value_count].id_out : XPACK_ET_XNN_INVALID_ID;
}

static void edit_value(xpack_et_xnn_graph* g, const edit* e) {
  xpack_et_xnn_value* v = (xpack_et_xnn_value*)&g->values[e->element % g->value_count];
  float f;
  memcpy(&f, &e->number, sizeof f);
  if (verbose) fprintf(stderr, "  value %u (%s) field %u\n", v->index, v->datatype_name, e->field % 12);
  switch (e->field % 12) {
    case 0: v->datatype = (int16_t)(e->number % 16); v->datatype_name = xpack_et_xnn_datatype_name(v->datatype); break;
    case 1: v->constant_buffer_idx = e->number % 65536; break;
    case 2: v->external_id = e->number & 0x80000000u ? XPACK_ET_XNN_INVALID_ID : e->number % 65536; break;
    case 3: v->flags = e->number % 16; break;
    case 4: v->quant.scale = f; break;
    case 5: v->quant.zero_point = (int32_t)e->number; break;
    case 6: v->quant.channel_dim = (int32_t)(e->number % 8); break;
    case 7: v->quant.group_size = (int32_t)(e->number % 65536); break;
    case 8: v->quant.num_scales = e->number % 65536; break;
    case 9: v->quant.scale_buffer_idx = e->number % 65536; break;
    case 10: v->quant.num_nonbatch_dims = (int32_t)(e->number % 8); break;
    default: v->dq_datatype = (int16_t)(e->number % 16); break;
  }
}

static void edit_dim(xpack_et_xnn_graph* g, const edit* e) {
  const xpack_et_xnn_value* v = &g->values[e->element % g->value_count];
  if (v->num_dims == 0) return;
  if (verbose) fprintf(stderr, "  value %u dims[%u] = %u\n", v->index, e->field % v->num_dims, e->number % 65536);
  ((uint32_t*)v->dims)[e->field % v->num_dims] = e->number % 65536;
}

static void edit_node(xpack_et_xnn_graph* g, const edit* e) {
  xpack_et_xnn_node* n = (xpack_et_xnn_node*)&g->nodes[e->element % g->node_count];
  size_t count = 0;
  const xpack_et_xnn_field* fields = xpack_et_xnn_layout_fields(n->layout, &count);
  const size_t pick = e->field % (count + 2);
  float f;
  memcpy(&f, &e->number, sizeof f);
  if (verbose) fprintf(stderr, "  node %u (%s) %s\n", n->index, n->type_name, pick < count ? fields[pick].name : "min/max");
  if (pick == count) {
    n->output_min = f, n->has_output_min_max = true;
    return;
  }
  if (pick == count + 1) {
    n->output_max = f, n->has_output_min_max = true;
    return;
  }
  unsigned char* at = (unsigned char*)n + fields[pick].offset;
  uint32_t u = e->number % 65536;
  switch (fields[pick].kind) {
    case XPACK_ET_XNN_FIELD_U32: memcpy(at, &u, sizeof u); break;
    case XPACK_ET_XNN_FIELD_F32: memcpy(at, &f, sizeof f); break;
    case XPACK_ET_XNN_FIELD_ID:
      u = e->number & 0x80000000u ? XPACK_ET_XNN_INVALID_ID : existing_id(g, e->number);
      memcpy(at, &u, sizeof u);
      break;
    case XPACK_ET_XNN_FIELD_U32_ARRAY: {
      xpack_et_u32_array a;
      memcpy(&a, at, sizeof a);
      if (a.count) ((uint32_t*)a.data)[(e->number >> 16) % a.count] = u;
      break;
    }
  }
}

static void edit_graph(xpack_et_xnn_graph* g, const edit* e) {
  xpack_et_u32_array* ids = e->field & 1 ? &g->output_ids : &g->input_ids;
  if (e->field & 2) {
    g->num_externs = e->number % 65536;
  } else if (ids->count) {
    ((uint32_t*)ids->data)[e->element % ids->count] = existing_id(g, e->number);
  }
}

static void apply_edits(xpack_et_xnn_graph* g, const uint8_t* edits, size_t count) {
  for (size_t i = 0; i < count; i++) {
    edit e = read_edit(edits + i * EDIT_BYTES);
    if (verbose) {
      fprintf(stderr, "edit %zu: target %u field %u element %u number %u (0x%x)\n", i, e.target % 4, e.field,
              e.element, e.number, e.number);
    }
    switch (e.target % 4) {
      case 0: if (g->value_count) edit_value(g, &e); break;
      case 1: if (g->value_count) edit_dim(g, &e); break;
      case 2: if (g->node_count) edit_node(g, &e); break;
      default: edit_graph(g, &e); break;
    }
  }
}

/* Bytes followed by a PROT_NONE page: uninstrumented XNNPACK writing or reading past them faults. */
typedef struct guarded {
  void* map;
  size_t map_size;
  uint8_t* data;
} guarded;

static int guarded_alloc(size_t bytes, guarded* g) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  const size_t body = (bytes + page - 1) / page * page;
  g->map_size = body + page;
  g->map = mmap(NULL, g->map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (g->map == MAP_FAILED) return -1;
  mprotect((uint8_t*)g->map + body, page, PROT_NONE);
  g->data = (uint8_t*)g->map + body - bytes;
  return 0;
}

static void guarded_free(guarded* g) {
  if (g->map != NULL && g->map != MAP_FAILED) munmap(g->map, g->map_size);
}

/* Tensors as large as the declared dims say are the model's size, not a bug: XNNPACK allocates its
 * buffers for them when it creates the runtime. The harness creates runtimes only for graphs whose values
 * (not counting weights) declare at most GRAPH_MAX_VALUE_BYTES and runs only those whose external buffers
 * fit in RUN_MAX_EXTERNAL_BYTES. */
enum { GRAPH_MAX_VALUE_BYTES = 256 << 20, RUN_MAX_EXTERNAL_BYTES = 64 << 20 };

static int within_memory_bound(const xpack_et_xnn_graph* g) {
  uint64_t total = 0;
  for (size_t i = 0; i < g->value_count; i++) {
    const xpack_et_xnn_value* v = &g->values[i];
    if (v->constant_buffer_idx != 0) continue;
    uint64_t bytes = 4;
    for (uint32_t d = 0; d < v->num_dims; d++) {
      bytes *= v->dims[d]; /* below 2^28 times a dim below 2^32: no overflow */
      if (bytes > GRAPH_MAX_VALUE_BYTES) return 0;
    }
    total += bytes;
    if (total > GRAPH_MAX_VALUE_BYTES) return 0;
  }
  return 1;
}

static void run_runtime(xnn_runtime_t runtime, const xpack_replay_subgraph* replay) {
  xpack_error err;
  size_t total = 0;
  for (uint32_t i = 0; i < replay->num_externals; i++) {
    if (replay->externals[i].bytes > RUN_MAX_EXTERNAL_BYTES - total) return;
    total += replay->externals[i].bytes;
  }
  if (replay->grows) return; /* refused by xpack_execute_runtime, as `run` refuses it */
  if (xnn_reshape_runtime(runtime) != xnn_status_success) return;
  if (xpack_replay_check_externals(runtime, replay, &err) != XPACK_OK) return;
  struct xnn_external_value ext[64];
  guarded buffers[64];
  uint32_t n = replay->num_externals < 64 ? replay->num_externals : 64;
  uint32_t made = 0;
  for (; made < n; made++) {
    if (guarded_alloc(replay->externals[made].bytes + XNN_EXTRA_BYTES, &buffers[made]) != 0) break;
    ext[made].id = replay->externals[made].id;
    ext[made].data = buffers[made].data;
  }
  if (made == replay->num_externals && xnn_setup_runtime_v2(runtime, made, ext) == xnn_status_success) {
    (void)xnn_invoke_runtime(runtime);
  }
  for (uint32_t i = 0; i < made; i++) guarded_free(&buffers[i]);
}

static void bind_writer(void* writer, const void* raw, const char* identity, size_t len) {
  xpack_writer_bind(writer, raw, identity, len, NULL);
}

static char writer_path[64];

/* The sizes a loader would bind: each must be a whole number of XNNPACK's allocation units. */
static void check_size(void* context, const struct xnn_weights_cache_look_up_key* key, size_t size) {
  (void)context;
  if (key->kernel == NULL || size % xpack_xnn_alignment() != 0) abort();
}

static void replay_graph(const xpack_et_program* program, xpack_et_xnn_graph* graph) {
  xpack_error err;
  xpack_writer* writer = NULL;
  if (xpack_writer_create(writer_path, NULL, &writer, &err) != XPACK_OK) abort();
  xpack_et_named_sources sources = {.program = program};
  xpack_replay_subgraph replay;
  xpack_status st = xpack_replay_define(graph, &sources, bind_writer, writer, &replay, &err);
  if (verbose) fprintf(stderr, "define: %s\n", st == XPACK_OK ? "ok" : err.message);
  if (st == XPACK_OK && !within_memory_bound(graph)) {
    xpack_replay_release(&replay);
  } else if (st == XPACK_OK) {
    /* The sizing path a loader takes (xpack_replay_size_weights): each weight node alone in a runtime. */
    xpack_status sized = xpack_replay_size_weights(graph, &sources, check_size, NULL, &err);
    if (verbose) fprintf(stderr, "size: %s\n", sized == XPACK_OK ? "ok" : err.message);
    for (size_t i = 0; i < replay.num_weight_families; i++) {
      (void)xpack_writer_bind_family(writer, replay.weight_families[i].kernel, &replay.weight_families[i].family, &err);
    }
    xnn_runtime_t runtime = NULL;
    enum xnn_status xs = xnn_create_runtime_v4(replay.subgraph, xpack_writer_provider(writer), NULL, NULL, 0, &runtime);
    if (verbose) fprintf(stderr, "xnn_create_runtime_v4: status %d\n", (int)xs);
    xpack_writer_unbind_all(writer);
    xpack_replay_drop_definition(&replay);
    if (xs == xnn_status_success) {
      run_runtime(runtime, &replay);
      xnn_delete_runtime(runtime);
    }
    xpack_replay_release(&replay);
  }
  xpack_writer_abort(writer);
}

int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc, (void)argv;
  if (xnn_initialize(NULL) != xnn_status_success) abort();
  verbose = getenv("FUZZ_REPLAY_VERBOSE") != NULL;
  const char* tmp = getenv("TMPDIR");
  snprintf(writer_path, sizeof writer_path, "%s/fuzz_replay.%d.xpc", tmp && strlen(tmp) < 32 ? tmp : "/tmp",
           (int)getpid());
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t edits = data[0] % (MAX_EDITS + 1);
  const size_t head = 1 + edits * EDIT_BYTES;
  if (size <= head) return 0;
  guarded program_bytes; /* the program, too, ends at a guard page: XNNPACK packs straight from it */
  if (guarded_alloc(size - head, &program_bytes) != 0) return 0;
  memcpy(program_bytes.data, data + head, size - head);
  xpack_error err;
  xpack_et_program* program = NULL;
  if (xpack_et_program_open_memory(program_bytes.data, size - head, "fuzz.pte", &program, &err) == XPACK_OK) {
    const xpack_et_program_info* info = xpack_et_program_get_info(program);
    for (size_t m = 0; m < info->method_count; m++) {
      for (size_t d = 0; d < info->methods[m].delegate_count; d++) {
        xpack_et_xnn_graph* graph = NULL;
        if (xpack_et_xnn_graph_open(program, m, d, &graph, &err) != XPACK_OK) continue;
        apply_edits(graph, data + 1, edits);
        /* The edits change which values have which bytes and which nodes pack what: index the uses again, as a
         * parse of the edited graph would, so that the packing suffix reads the graph it names. */
        if (edits && !xp_xnn_graph_index_uses((xp_xnn_graph*)graph)) abort();
        replay_graph(program, graph);
        xpack_et_xnn_graph_free(graph);
      }
    }
    xpack_et_program_close(program);
  }
  guarded_free(&program_bytes);
  return 0;
}

/* Mutates the edits only; the program after them is kept byte for byte. */
size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  if (size < 1) return size;
  const size_t edits = data[0] % (MAX_EDITS + 1);
  const size_t head = 1 + edits * EDIT_BYTES;
  if (size <= head) return size;
  const size_t program = size - head;
  size_t want = edits;
  if (seed % 8 == 0 && edits < MAX_EDITS) want = edits + 1;
  else if (seed % 8 == 1 && edits > 0) want = edits - 1;
  const size_t new_head = 1 + want * EDIT_BYTES;
  if (new_head + program > max_size) return size;
  memmove(data + new_head, data + head, program);
  if (new_head > head) memset(data + head, (int)(seed >> 8), new_head - head);
  if (want > 0) LLVMFuzzerMutate(data + 1, want * EDIT_BYTES, want * EDIT_BYTES);
  data[0] = (uint8_t)want;
  return new_head + program;
}
