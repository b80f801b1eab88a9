#include "pte_writer.h"

#include <stdlib.h>
#include <string.h>

#include "fb_builder.h"
#include "common/le.h"
#include "out_file.h"

#define PTE_SEGMENT_ALIGNMENT 128
#define PTE_HEADER_LENGTH 32 /* eh00 length written since mid-2025 */
#define PTE_HEADER_PADDED 32 /* padded to the schema's largest force_align (16) */
#define PTD_HEADER_LENGTH 40
#define PTD_HEADER_PADDED 48
#define PTD_ALIGNMENT 16 /* FlatTensor tensor and segment alignment (lcm with the data's 16) */
#define MEMORY_PLAN_ALIGNMENT 16

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

static ptd_layout g_ptd_layout = PTD_LAYOUT_2025_06;
void pte_set_ptd_layout(ptd_layout layout) { g_ptd_layout = layout; }

void pte_init(pte_program* p) { memset(p, 0, sizeof *p); }

void pte_free(pte_program* p) {
  for (int i = 0; i < p->nmethods; i++)
    for (int c = 0; c < p->methods[i].ncalls; c++) free(p->methods[i].calls[c].blob);
  free(p->named);
  memset(p, 0, sizeof *p);
}

pte_method* pte_add_method(pte_program* p, const char* name) {
  if (p->nmethods >= PTE_MAX_METHODS) {
    p->failed = 1;
    return NULL;
  }
  pte_method* m = &p->methods[p->nmethods++];
  memset(m, 0, sizeof *m);
  snprintf(m->name, sizeof m->name, "%s", name);
  return m;
}

int pte_add_value(pte_method* m, int8_t scalar_type, const int32_t* sizes, int ndims) {
  if (m->nvalues >= PTE_MAX_VALUES || ndims > 6) return -1;
  pte_tensor* t = &m->values[m->nvalues];
  t->scalar_type = scalar_type;
  t->ndims = ndims;
  memcpy(t->sizes, sizes, (size_t)ndims * sizeof *sizes);
  return m->nvalues++;
}

void pte_method_io(pte_method* m, const int* inputs, int ninputs, const int* outputs, int noutputs) {
  m->ninputs = ninputs;
  m->noutputs = noutputs;
  for (int i = 0; i < ninputs; i++) m->inputs[i] = inputs[i];
  for (int i = 0; i < noutputs; i++) m->outputs[i] = outputs[i];
}

static int register_named(pte_program* p, weight* w) {
  for (size_t i = 0; i < p->nnamed; i++)
    if (strcmp(p->named[i]->key, w->key) == 0) return 1; /* identical bytes: one key, one segment */
  if (p->nnamed == p->named_cap) {
    size_t nc = p->named_cap ? 2 * p->named_cap : 64;
    weight** nn = realloc(p->named, nc * sizeof *nn);
    if (!nn) return 0;
    p->named = nn;
    p->named_cap = nc;
  }
  p->named[p->nnamed++] = w;
  return 1;
}

int pte_add_delegate(pte_program* p, pte_method* m, const xg_graph* g, const int* args, int nargs) {
  if (m->ncalls >= PTE_MAX_CALLS || nargs > PTE_MAX_VALUES || g->failed) return p->failed = 1, 0;
  for (size_t i = 1; i < g->nconsts; i++) {
    weight* w = g->consts[i];
    if (!w->hashed && !weight_hash(w)) return p->failed = 1, 0;
    if (!register_named(p, w)) return p->failed = 1, 0;
  }
  pte_call* c = &m->calls[m->ncalls];
  c->blob = xg_blob(g, &c->blob_size);
  if (!c->blob) return p->failed = 1, 0;
  memcpy(c->args, args, (size_t)nargs * sizeof *args);
  c->nargs = nargs;
  m->ncalls++;
  return 1;
}

/* ---- layout ---- */

typedef struct blob_ref {
  const uint8_t* data;
  size_t size;
} blob_ref;

typedef struct layout {
  blob_ref blobs[PTE_MAX_METHODS * PTE_MAX_CALLS];
  int nblobs;
  int call_segment[PTE_MAX_METHODS][PTE_MAX_CALLS];
  uint64_t* seg_offset; /* relative to the segment base */
  uint64_t* seg_size;
  size_t nsegs;
  size_t first_named_segment;
} layout;

/* Byte-identical delegate blobs (e.g. two methods lowering the same graph) share one segment. */
static int plan_layout(const pte_program* p, int weights_in_pte, layout* L) {
  memset(L, 0, sizeof *L);
  for (int mi = 0; mi < p->nmethods; mi++) {
    const pte_method* m = &p->methods[mi];
    for (int ci = 0; ci < m->ncalls; ci++) {
      const pte_call* c = &m->calls[ci];
      int found = -1;
      for (int b = 0; b < L->nblobs; b++)
        if (L->blobs[b].size == c->blob_size && memcmp(L->blobs[b].data, c->blob, c->blob_size) == 0) found = b;
      if (found < 0) {
        found = L->nblobs++;
        L->blobs[found].data = c->blob;
        L->blobs[found].size = c->blob_size;
      }
      L->call_segment[mi][ci] = 1 + found;
    }
  }
  L->first_named_segment = 1 + (size_t)L->nblobs;
  L->nsegs = L->first_named_segment + (weights_in_pte ? p->nnamed : 0);
  L->seg_offset = calloc(L->nsegs, sizeof *L->seg_offset);
  L->seg_size = calloc(L->nsegs, sizeof *L->seg_size);
  if (!L->seg_offset || !L->seg_size) return 0;
  /* Segment 0 is the constant segment; these programs have no non-delegated constants. */
  uint64_t end = 0;
  for (size_t s = 0; s < L->nsegs; s++) {
    uint64_t size = s == 0 ? 0
                    : s < L->first_named_segment ? L->blobs[s - 1].size
                                                 : p->named[s - L->first_named_segment]->nbytes;
    L->seg_offset[s] = align_up(end, PTE_SEGMENT_ALIGNMENT);
    L->seg_size[s] = size;
    end = L->seg_offset[s] + size;
  }
  return 1;
}

static void free_layout(layout* L) {
  free(L->seg_offset);
  free(L->seg_size);
}

/* ---- program flatbuffer ---- */

static size_t scalar_size(int8_t t) { return t == ST_HALF || t == ST_BFLOAT16 ? 2 : t == ST_LONG ? 8 : 4; }

static const char* k_leaf = "{\"type\": null, \"context\": null, \"children_spec\": []}";

/* The pytree specs torch.export writes for (args...) with no kwargs, and for the outputs. */
static void container_specs(const pte_method* m, char* in, size_t in_cap, char* out, size_t out_cap) {
  size_t n = (size_t)snprintf(in, in_cap,
                              "[1, {\"type\": \"builtins.tuple\", \"context\": \"null\", \"children_spec\": "
                              "[{\"type\": \"builtins.tuple\", \"context\": \"null\", \"children_spec\": [");
  for (int i = 0; i < m->ninputs && n < in_cap; i++)
    n += (size_t)snprintf(in + n, in_cap - n, "%s%s", i ? ", " : "", k_leaf);
  if (n < in_cap)
    snprintf(in + n, in_cap - n,
             "]}, {\"type\": \"builtins.dict\", \"context\": \"[]\", \"children_spec\": []}]}]");
  if (m->noutputs == 1) {
    snprintf(out, out_cap, "[1, %s]", k_leaf);
    return;
  }
  n = (size_t)snprintf(out, out_cap, "[1, {\"type\": \"builtins.tuple\", \"context\": \"null\", \"children_spec\": [");
  for (int i = 0; i < m->noutputs && n < out_cap; i++)
    n += (size_t)snprintf(out + n, out_cap - n, "%s%s", i ? ", " : "", k_leaf);
  if (n < out_cap) snprintf(out + n, out_cap - n, "]}]");
}

static fb_ref ser_method(fb_builder* b, const pte_method* m, const int* call_segment) {
  fb_ref refs[PTE_MAX_VALUES > PTE_MAX_CALLS ? PTE_MAX_VALUES : PTE_MAX_CALLS];

  /* Memory plan: every activation tensor gets its own 16-aligned slot in memory id 1. */
  uint64_t plan = 0;
  fb_ref values[PTE_MAX_VALUES];
  for (int i = 0; i < m->nvalues; i++) {
    const pte_tensor* t = &m->values[i];
    uint64_t nbytes = scalar_size(t->scalar_type);
    uint8_t dim_order[6];
    for (int d = 0; d < t->ndims; d++) {
      nbytes *= (uint64_t)t->sizes[d];
      dim_order[d] = (uint8_t)d;
    }
    fb_ref sizes = fb_vec_i32(b, t->sizes, (size_t)t->ndims);
    fb_ref order = fb_vec_u8(b, dim_order, (size_t)t->ndims, 1);
    fb_table_begin(b);
    fb_add_u32(b, 0, 1, 0);
    fb_add_u32(b, 1, (uint32_t)plan, 0);
    fb_add_u32(b, 2, (uint32_t)(plan >> 32), 0);
    fb_ref alloc = fb_table_end(b);
    plan = align_up(plan + nbytes, MEMORY_PLAN_ALIGNMENT);
    fb_table_begin(b);
    fb_add_u8(b, 0, (uint8_t)t->scalar_type, 0);
    fb_add_ref(b, 2, sizes);
    fb_add_ref(b, 3, order);
    fb_add_ref(b, 6, alloc);
    fb_ref tensor = fb_table_end(b);
    fb_table_begin(b);
    fb_add_u8(b, 0, 5 /* KernelTypes.Tensor */, 0);
    fb_add_ref(b, 1, tensor);
    values[i] = fb_table_end(b);
  }
  fb_ref values_vec = fb_vec_ref(b, values, (size_t)m->nvalues);

  for (int c = 0; c < m->ncalls; c++) {
    fb_ref args = fb_vec_i32(b, m->calls[c].args, (size_t)m->calls[c].nargs);
    fb_table_begin(b);
    fb_add_i32(b, 0, c, 0);
    fb_add_ref(b, 1, args);
    fb_ref call = fb_table_end(b);
    fb_table_begin(b);
    fb_add_u8(b, 0, 2 /* InstructionArguments.DelegateCall */, 0);
    fb_add_ref(b, 1, call);
    refs[c] = fb_table_end(b);
  }
  fb_ref instructions = fb_vec_ref(b, refs, (size_t)m->ncalls);
  fb_ref no_ints = fb_vec_i32(b, NULL, 0);
  fb_table_begin(b);
  fb_add_ref(b, 0, no_ints);
  fb_add_ref(b, 1, no_ints);
  fb_add_ref(b, 2, instructions);
  fb_ref chain = fb_table_end(b);
  fb_ref chains = fb_vec_ref(b, &chain, 1);

  for (int c = 0; c < m->ncalls; c++) {
    fb_ref id = fb_cstring(b, "XnnpackBackend");
    fb_table_begin(b);
    fb_add_u8(b, 0, 1 /* DataLocation.SEGMENT */, 0);
    fb_add_u32(b, 1, (uint32_t)call_segment[c], 0);
    fb_ref processed = fb_table_end(b);
    fb_ref specs = fb_vec_ref(b, NULL, 0);
    fb_table_begin(b);
    fb_add_ref(b, 0, id);
    fb_add_ref(b, 1, processed);
    fb_add_ref(b, 2, specs);
    refs[c] = fb_table_end(b);
  }
  fb_ref delegates = fb_vec_ref(b, refs, (size_t)m->ncalls);
  fb_ref operators = fb_vec_ref(b, NULL, 0);
  int64_t buffer_sizes[2] = {0, (int64_t)plan};
  fb_ref non_const = fb_vec_i64(b, buffer_sizes, 2);
  fb_ref inputs = fb_vec_i32(b, m->inputs, (size_t)m->ninputs);
  fb_ref outputs = fb_vec_i32(b, m->outputs, (size_t)m->noutputs);

  char in_spec[2048], out_spec[1024];
  container_specs(m, in_spec, sizeof in_spec, out_spec, sizeof out_spec);
  fb_ref in_str = fb_cstring(b, in_spec);
  fb_ref out_str = fb_cstring(b, out_spec);
  fb_table_begin(b);
  fb_add_ref(b, 0, in_str);
  fb_add_ref(b, 1, out_str);
  fb_ref meta = fb_table_end(b);
  fb_ref name = fb_cstring(b, m->name);

  fb_table_begin(b);
  fb_add_ref(b, 0, name);
  fb_add_ref(b, 1, meta);
  fb_add_ref(b, 2, values_vec);
  fb_add_ref(b, 3, inputs);
  fb_add_ref(b, 4, outputs);
  fb_add_ref(b, 5, chains);
  fb_add_ref(b, 6, operators);
  fb_add_ref(b, 7, delegates);
  fb_add_ref(b, 8, non_const);
  return fb_table_end(b);
}

static fb_ref ser_segments(fb_builder* b, const uint64_t* offset, const uint64_t* size, size_t n) {
  fb_ref* refs = malloc((n + 1) * sizeof *refs);
  if (!refs) return 0;
  for (size_t s = 0; s < n; s++) {
    fb_table_begin(b);
    fb_add_u64(b, 0, offset[s], 0);
    fb_add_u64(b, 1, size[s], 0);
    refs[s] = fb_table_end(b);
  }
  fb_ref v = fb_vec_ref(b, refs, n);
  free(refs);
  return v;
}

static fb_ref ser_named_data(fb_builder* b, weight* const* named, size_t n, size_t first_segment) {
  fb_ref* refs = malloc((n + 1) * sizeof *refs);
  if (!refs) return 0;
  for (size_t i = 0; i < n; i++) {
    fb_ref key = fb_cstring(b, named[i]->key);
    fb_table_begin(b);
    fb_add_ref(b, 0, key);
    /* ExecuTorch's NamedDataStore keeps one buffer per distinct content: a key whose bytes equal an earlier
     * key's (module-path keys of equal tensors) names that key's segment. */
    size_t segment = i;
    for (size_t j = 0; j < i && segment == i; j++) {
      const weight *x = named[j], *y = named[i];
      if (x->format == y->format && x->seed == y->seed && x->rows == y->rows && x->cols == y->cols &&
          x->stddev == y->stddev && x->nbytes == y->nbytes) {
        segment = j;
      }
    }
    fb_add_u32(b, 1, (uint32_t)(first_segment + segment), 0);
    refs[i] = fb_table_end(b);
  }
  fb_ref v = fb_vec_ref(b, refs, n);
  free(refs);
  return v;
}

static const uint8_t* build_program(fb_builder* b, const pte_program* p, const layout* L, int weights_in_pte,
                                    size_t* size) {
  fb_ref named = weights_in_pte && p->nnamed ? ser_named_data(b, p->named, p->nnamed, L->first_named_segment) : 0;
  uint64_t zero = 0;
  fb_ref offsets = fb_vec_i64(b, (const int64_t*)&zero, 1); /* offsets[0] is the reserved placeholder */
  fb_table_begin(b);
  fb_add_ref(b, 1, offsets);
  fb_ref constant_segment = fb_table_end(b);
  fb_ref segments = ser_segments(b, L->seg_offset, L->seg_size, L->nsegs);
  fb_ref empty = fb_vec_ref(b, NULL, 0);
  fb_ref plans[PTE_MAX_METHODS];
  for (int i = 0; i < p->nmethods; i++) plans[i] = ser_method(b, &p->methods[i], L->call_segment[i]);
  fb_ref plan_vec = fb_vec_ref(b, plans, (size_t)p->nmethods);
  fb_table_begin(b);
  fb_add_ref(b, 1, plan_vec);
  fb_add_ref(b, 2, empty);
  fb_add_ref(b, 3, empty);
  fb_add_ref(b, 4, segments);
  fb_add_ref(b, 5, constant_segment);
  fb_add_ref(b, 7, named);
  fb_ref root = fb_table_end(b);
  return fb_finish(b, root, "ET12", size);
}

/* Inserts a header after the root offset and identifier, as exir does, shifting the root offset. */
static void write_with_header(out_file* o, const uint8_t* fb, size_t fb_size, const uint8_t* header,
                              size_t header_padded) {
  uint8_t head[8];
  xp_put32(head, xp_le32(fb) + (uint32_t)header_padded);
  memcpy(head + 4, fb + 4, 4);
  out_write(o, head, 8);
  out_write(o, header, header_padded);
  out_write(o, fb + 8, fb_size - 8);
}

static int write_ptd(const pte_program* p, out_file* o) {
  uint64_t* offset = calloc(p->nnamed + 1, sizeof *offset);
  uint64_t* size = calloc(p->nnamed + 1, sizeof *size);
  if (!offset || !size) return free(offset), free(size), 0;
  uint64_t end = 0;
  for (size_t i = 0; i < p->nnamed; i++) {
    offset[i] = align_up(end, PTD_ALIGNMENT);
    size[i] = p->named[i]->nbytes;
    end = offset[i] + size[i];
  }
  fb_builder b;
  fb_init(&b);
  fb_ref named = ser_named_data(&b, p->named, p->nnamed, 0);
  fb_ref segments = ser_segments(&b, offset, size, p->nnamed);
  fb_table_begin(&b);
  if (g_ptd_layout == PTD_LAYOUT_2025_04) {
    fb_add_u32(&b, 1, PTD_ALIGNMENT, 0);      /* tensor_alignment */
    fb_add_ref(&b, 2, fb_vec_ref(&b, NULL, 0)); /* tensors: none, delegate weights are named data */
    fb_add_ref(&b, 3, segments);
    fb_add_ref(&b, 4, named);
  } else {
    fb_add_ref(&b, 1, segments);
    fb_add_ref(&b, 2, named);
  }
  size_t fb_size;
  const uint8_t* fb = fb_finish(&b, fb_table_end(&b), "FT01", &fb_size);
  int ok = fb != NULL;
  if (ok) {
    uint64_t base = align_up(align_up(fb_size, PTD_ALIGNMENT) + PTD_HEADER_PADDED, PTD_ALIGNMENT);
    uint8_t header[PTD_HEADER_PADDED] = {0};
    memcpy(header, "FH01", 4);
    xp_put32(header + 4, PTD_HEADER_LENGTH);
    xp_put64(header + 8, PTD_HEADER_PADDED);
    xp_put64(header + 16, fb_size);
    xp_put64(header + 24, base);
    xp_put64(header + 32, end);
    write_with_header(o, fb, fb_size, header, sizeof header);
    for (size_t i = 0; i < p->nnamed && !o->failed; i++) {
      out_pad_to(o, base + offset[i]);
      if (!weight_write(p->named[i], o->f)) o->failed = 1;
      o->written += size[i];
    }
  }
  fb_free(&b);
  free(offset);
  free(size);
  return ok && !o->failed;
}

int pte_write(const pte_program* p, const char* pte_path, const char* ptd_path) {
  if (p->failed) return 0;
  int weights_in_pte = ptd_path == NULL;
  layout L;
  if (!plan_layout(p, weights_in_pte, &L)) return free_layout(&L), 0;
  fb_builder b;
  fb_init(&b);
  size_t fb_size;
  const uint8_t* fb = build_program(&b, p, &L, weights_in_pte, &fb_size);
  int ok = fb != NULL;
  out_file pte = {0}, ptd = {0};
  if (ok) ok = out_open(&pte, pte_path);
  if (ok) {
    uint64_t program_size = PTE_HEADER_PADDED + fb_size;
    uint64_t base = align_up(program_size, PTE_SEGMENT_ALIGNMENT);
    uint64_t data_size = L.nsegs ? L.seg_offset[L.nsegs - 1] + L.seg_size[L.nsegs - 1] : 0;
    uint8_t header[PTE_HEADER_PADDED] = {0};
    memcpy(header, "eh00", 4);
    xp_put32(header + 4, PTE_HEADER_LENGTH);
    xp_put64(header + 8, program_size);
    xp_put64(header + 16, base);
    xp_put64(header + 24, data_size);
    write_with_header(&pte, fb, fb_size, header, sizeof header);
    for (size_t s = 1; s < L.nsegs && !pte.failed; s++) {
      out_pad_to(&pte, base + L.seg_offset[s]);
      if (s < L.first_named_segment) {
        out_write(&pte, L.blobs[s - 1].data, L.blobs[s - 1].size);
      } else {
        if (!weight_write(p->named[s - L.first_named_segment], pte.f)) pte.failed = 1;
        pte.written += L.seg_size[s];
      }
    }
    ok = out_close(&pte);
  }
  if (ok && ptd_path) ok = out_open(&ptd, ptd_path) && write_ptd(p, &ptd) && out_close(&ptd);
  /* The .ptd lands first so a reader never sees a new .pte without its weights. */
  if (ok && ptd_path) ok = out_commit(&ptd);
  if (ok) ok = out_commit(&pte);
  if (!ok) {
    out_discard(&pte);
    out_discard(&ptd);
  }
  fb_free(&b);
  free_layout(&L);
  return ok;
}
