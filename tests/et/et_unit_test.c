/* Unit tests of the verifying flatbuffer reader, the XH00 blob header checks, the .ptd/.pte
 * front-matter checks and the constant identity rule, on hand-made bytes. No real files needed. */
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/file_map.h"
#include "et/et_map.h"
#include "et/flatbuf.h"
#include "et_test_util.h"
#include "xpack_executorch.h"

/* A tiny forward flatbuffer assembler: callers place objects at increasing offsets by hand, which
 * keeps every uoffset positive as the format requires. */
typedef struct buf {
  uint8_t b[1024];
  size_t n;
} buf;

static void put16(buf* f, size_t at, uint16_t v) { f->b[at] = (uint8_t)v; f->b[at + 1] = (uint8_t)(v >> 8); }
static void put32(buf* f, size_t at, uint32_t v) {
  for (int i = 0; i < 4; i++) f->b[at + i] = (uint8_t)(v >> (8 * i));
}
static void put64(buf* f, size_t at, uint64_t v) {
  put32(f, at, (uint32_t)v);
  put32(f, at + 4, (uint32_t)(v >> 32));
}
/* A uoffset at `at` pointing to `target`. */
static void ref(buf* f, size_t at, size_t target) { put32(f, at, (uint32_t)(target - at)); }

/* Root table at 16 with one vtable at 8: fields id0 u32 at +4, id1 uoffset at +8. */
static void simple_table(buf* f) {
  memset(f, 0, sizeof *f);
  put32(f, 0, 16);           /* root offset */
  memcpy(f->b + 4, "TEST", 4);
  put16(f, 8, 8);            /* vtable size: 2 fields */
  put16(f, 10, 12);          /* inline size */
  put16(f, 12, 4);           /* id0 at +4 */
  put16(f, 14, 8);           /* id1 at +8 */
  put32(f, 16, 16 - 8);      /* soffset: table - vtable */
  put32(f, 20, 0xdeadbeef);  /* id0 */
  f->n = 28;
}

static void test_scalars_and_defaults(void) {
  buf f;
  simple_table(&f);
  ref(&f, 24, 28); /* id1 -> string "hi" */
  put32(&f, 28, 2);
  memcpy(f.b + 32, "hi", 3);
  f.n = 35;
  xp_fb fb;
  xpack_error err = {0};
  xp_fb_init(&fb, f.b, f.n, "unit", &err);
  xp_fb_table t;
  EXPECT_MSG(xp_fb_root(&fb, &t), "root: %s", err.message);
  EXPECT_MSG(xp_fb_u32(&t, 0, 7, "a") == 0xdeadbeef, "scalar");
  EXPECT_MSG(xp_fb_u32(&t, 5, 7, "absent") == 7, "default for a field past the vtable");
  uint32_t len = 0;
  const char* s = xp_fb_str(&t, 1, "s", &len);
  EXPECT_MSG(s && len == 2 && strcmp(s, "hi") == 0, "string");
  EXPECT_MSG(!xp_fb_failed(&fb), "no error: %s", err.message);
  /* A u64 read of id0 (byte 20) is not 8-byte aligned. */
  (void)xp_fb_u64(&t, 0, 0, "wide");
  EXPECT_MSG(fb.status == XPACK_ERR_BAD_INPUT && strstr(err.message, "unit: wide:") != NULL, "width check: %s",
        err.message);
  /* Sticky: later reads return defaults. */
  EXPECT_MSG(xp_fb_u32(&t, 0, 9, "a") == 9, "sticky error returns defaults");
}

static void expect_bad(buf* f, const char* what, const char* needle, bool (*probe)(xp_fb*)) {
  xp_fb fb;
  xpack_error err = {0};
  xp_fb_init(&fb, f->b, f->n, "unit", &err);
  probe(&fb);
  EXPECT_MSG(fb.status == XPACK_ERR_BAD_INPUT, "%s: status %s", what, xpack_status_name(fb.status));
  EXPECT_MSG(!needle || strstr(err.message, needle) != NULL, "%s: message %s", what, err.message);
}

static bool probe_string(xp_fb* fb) {
  xp_fb_table t;
  return xp_fb_root(fb, &t) && xp_fb_str(&t, 1, "s", NULL);
}
static bool probe_vector(xp_fb* fb) {
  xp_fb_table t;
  xp_fb_vec v;
  return xp_fb_root(fb, &t) && xp_fb_vector(&t, 1, 8, "v", &v);
}
static bool probe_child(xp_fb* fb) {
  xp_fb_table t, c;
  return xp_fb_root(fb, &t) && xp_fb_child(&t, 1, "c", &c);
}
static bool probe_root(xp_fb* fb) {
  xp_fb_table t;
  return xp_fb_root(fb, &t);
}
static bool probe_id0(xp_fb* fb) {
  xp_fb_table t;
  return xp_fb_root(fb, &t) && (xp_fb_u32(&t, 0, 0, "a"), !xp_fb_failed(fb));
}
static bool probe_union(xp_fb* fb) {
  xp_fb_table t, v;
  return xp_fb_root(fb, &t) && xp_fb_union(&t, 0, 1, 3, "u", &v);
}

static void test_malformed(void) {
  buf f;
  simple_table(&f);
  ref(&f, 24, 28);
  put32(&f, 28, 3);
  memcpy(f.b + 32, "abc", 3); /* no NUL: the buffer ends right after */
  f.n = 35;
  expect_bad(&f, "string without NUL", "runs past", probe_string);
  f.b[35] = 'x';
  f.n = 36;
  expect_bad(&f, "string with a non-NUL terminator", "NUL", probe_string);

  simple_table(&f);
  ref(&f, 24, 28);
  put32(&f, 28, 0xffffffffu); /* 2^32-1 elements of 8 bytes */
  f.n = 32;
  expect_bad(&f, "vector length overflow", "claims 4294967295 elements", probe_vector);

  simple_table(&f);
  put32(&f, 24, 0x7ffffff0u); /* offset far past the end */
  expect_bad(&f, "offset past the end", "past the end", probe_child);

  simple_table(&f);
  put32(&f, 16, 0x80000000u); /* vtable soffset out of range */
  expect_bad(&f, "vtable outside", "vtable", probe_root);

  simple_table(&f);
  put16(&f, 8, 7); /* odd vtable size */
  expect_bad(&f, "odd vtable size", "vtable", probe_root);

  simple_table(&f);
  put16(&f, 14, 10); /* id1 at +10: a uoffset must be 4-byte aligned */
  expect_bad(&f, "misaligned field", "aligned to 4", probe_child);

  simple_table(&f);
  put16(&f, 12, 12); /* id0 at +12, bytes 28..31: past the 28-byte buffer */
  f.n = 30;
  expect_bad(&f, "field past the buffer", "inside the 30-byte buffer", probe_id0);

  simple_table(&f);
  put32(&f, 24, 0); /* an offset that points at itself */
  expect_bad(&f, "self offset", "forward offset", probe_child);

  simple_table(&f);
  put32(&f, 0, 18); /* root table at an odd position */
  expect_bad(&f, "misaligned table", "aligned", probe_root);

  simple_table(&f);
  f.n = 3;
  expect_bad(&f, "3-byte buffer", NULL, probe_root);

  /* A union whose type is known but whose value is missing, and one with an unknown type. */
  simple_table(&f);
  put32(&f, 20, 2); /* id0 as type byte = 2 */
  put16(&f, 14, 0); /* id1 absent */
  expect_bad(&f, "union without value", "missing", probe_union);
  simple_table(&f);
  put32(&f, 20, 9);
  xp_fb fb;
  xpack_error err = {0};
  xp_fb_init(&fb, f.b, f.n, "unit", &err);
  probe_union(&fb);
  EXPECT_MSG(fb.status == XPACK_ERR_UNSUPPORTED && strstr(err.message, "union type 9") != NULL, "unknown union: %s",
        err.message);

}

/* Paths name where an error lies, through vectors and children: root.v (id1) holds two tables sharing one
 * vtable; element 0's field c leads to a table, element 1's points past the end. A child read into its own
 * parent's record still gets its path. */
static void test_paths(void) {
  buf f;
  simple_table(&f);
  ref(&f, 24, 28);          /* v */
  put32(&f, 28, 2);         /* two elements */
  ref(&f, 32, 48);          /* v[0] */
  ref(&f, 36, 72);          /* v[1] */
  put16(&f, 40, 6);         /* vtable of the elements: one field */
  put16(&f, 42, 8);
  put16(&f, 44, 4);         /* c at +4 */
  put32(&f, 48, 48 - 40);   /* v[0] */
  ref(&f, 52, 64);          /* v[0].c */
  put32(&f, 64, 64 - 40);   /* v[0].c, a table of the same vtable */
  put32(&f, 72, 72 - 40);   /* v[1] */
  put32(&f, 76, 0x7ffffff0u); /* v[1].c: far past the end */
  f.n = 80;
  xp_fb fb;
  xpack_error err = {0};
  xp_fb_init(&fb, f.b, f.n, "unit", &err);
  xp_fb_table t, e;
  xp_fb_vec v;
  EXPECT_MSG(xp_fb_root(&fb, &t) && xp_fb_vector(&t, 1, 4, "v", &v) && v.count == 2, "vector: %s", err.message);
  EXPECT_MSG(strcmp(v.path, "v") == 0, "vector path: %s", v.path);
  EXPECT_MSG(xp_fb_vec_table(&v, 0, &e) && strcmp(e.path, "v[0]") == 0, "element path: %s", e.path);
  EXPECT_MSG(xp_fb_child(&e, 0, "c", &e) && strcmp(e.path, "v[0].c") == 0 && e.pos == 64, "child into its parent: %s at %zu",
             e.path, e.pos);
  EXPECT_MSG(!xp_fb_vec_table(&v, 2, &e) && strcmp(e.path, "v[2]") == 0 && e.pos == 0 && !xp_fb_failed(&fb),
             "past the vector's end: no table, no error, path %s", e.path);
  EXPECT_MSG(xp_fb_vec_table(&v, 1, &e), "element 1: %s", err.message);
  EXPECT_MSG(!xp_fb_child(&e, 0, "c", &e) && e.pos == 0 && strcmp(e.path, "v[1].c") == 0, "bad child: path %s", e.path);
  EXPECT_MSG(fb.status == XPACK_ERR_BAD_INPUT && strstr(err.message, "unit: v[1].c: offset") != NULL, "message: %s",
             err.message);
}

/* The reference verifier bounds a field by the buffer, not by the vtable's declared inline size:
 * ExecuTorch's training export writes tables whose 8-byte fields lie past it, and ExecuTorch loads them. */
static void test_inline_size_is_not_a_bound(void) {
  buf f;
  simple_table(&f);
  put16(&f, 10, 8);  /* inline size 8: soffset and id0 only */
  put16(&f, 14, 8);  /* id1: a u64 at +8, bytes 24..31, past the inline size */
  put64(&f, 24, 0x0123456789abcdefULL);
  f.n = 32;
  xp_fb fb;
  xpack_error err = {0};
  xp_fb_init(&fb, f.b, f.n, "unit", &err);
  xp_fb_table t;
  EXPECT_MSG(xp_fb_root(&fb, &t), "root: %s", err.message);
  EXPECT_MSG(xp_fb_u64(&t, 1, 0, "size") == 0x0123456789abcdefULL && !xp_fb_failed(&fb),
        "a field past the declared inline size but inside the buffer reads: %s", err.message);
  put16(&f, 10, 0); /* even an inline size of 0, which the reference verifier never reads */
  xp_fb_init(&fb, f.b, f.n, "unit", &err);
  EXPECT_MSG(xp_fb_root(&fb, &t) && xp_fb_u32(&t, 0, 0, "a") == 0xdeadbeef, "inline size 0: %s", err.message);
}

/* A minimal XH00 blob header around a flatbuffer whose identifier we control. */
static void test_blob_header(void) {
  buf f;
  memset(&f, 0, sizeof f);
  memcpy(f.b + 4, "XH00", 4);
  put16(&f, 8, 30);
  put32(&f, 10, 32);  /* flatbuffer offset */
  put32(&f, 14, 64);  /* flatbuffer size */
  put32(&f, 18, 80);  /* constant data offset: inside the flatbuffer: invalid */
  put64(&f, 22, 16);
  f.n = 128;
  xpack_et_xnn_graph* g;
  xpack_error err = {0};
  EXPECT_MSG(xpack_et_xnn_graph_parse(f.b, f.n, "blob", &g, &err) == XPACK_ERR_BAD_INPUT &&
             strstr(err.message, "must follow the flatbuffer") != NULL,
        "overlapping constant region: %s", err.message);
  put32(&f, 18, 96);
  put32(&f, 14, 1000);
  EXPECT_MSG(xpack_et_xnn_graph_parse(f.b, f.n, "blob", &g, &err) == XPACK_ERR_BAD_INPUT &&
             strstr(err.message, "XH00 flatbuffer") != NULL,
        "flatbuffer past the blob: %s", err.message);
  put32(&f, 14, 64);
  memcpy(f.b + 36, "XN02", 4);
  EXPECT_MSG(xpack_et_xnn_graph_parse(f.b, f.n, "blob", &g, &err) == XPACK_ERR_BAD_INPUT &&
             strstr(err.message, "XN01") != NULL,
        "wrong identifier: %s", err.message);
  EXPECT_MSG(xpack_et_xnn_graph_parse(f.b, 20, "blob", &g, &err) == XPACK_ERR_BAD_INPUT, "short XH00 blob");
  EXPECT_MSG(xpack_et_xnn_graph_parse(f.b, 0, "blob", &g, &err) == XPACK_ERR_BAD_INPUT, "empty blob");
}

static void test_program_front_matter(void) {
  buf f;
  memset(&f, 0, sizeof f);
  xpack_et_program* p;
  xpack_error err = {0};
  memcpy(f.b, "PK\x03\x04", 4);
  EXPECT_MSG(xpack_et_program_open_memory(f.b, 64, "z.pte", &p, &err) == XPACK_ERR_BAD_INPUT &&
             strstr(err.message, "ZIP") != NULL,
        "zip: %s", err.message);
  memcpy(f.b, "\x10\0\0\0ET13", 8);
  EXPECT_MSG(xpack_et_program_open_memory(f.b, 64, "v.pte", &p, &err) == XPACK_ERR_UNSUPPORTED &&
             strstr(err.message, "ET13") != NULL,
        "other schema version: %s", err.message);
  memcpy(f.b + 4, "ET12eh00", 8);
  put32(&f, 12, 16); /* header shorter than 24 */
  EXPECT_MSG(xpack_et_program_open_memory(f.b, 64, "h.pte", &p, &err) == XPACK_ERR_BAD_INPUT &&
             strstr(err.message, "eh00") != NULL,
        "short eh00: %s", err.message);
  put32(&f, 12, 24);
  put64(&f, 16, 48);
  put64(&f, 24, 4096); /* segment base past the end */
  EXPECT_MSG(xpack_et_program_open_memory(f.b, 64, "h.pte", &p, &err) == XPACK_ERR_BAD_INPUT &&
             strstr(err.message, "segment_base_offset") != NULL,
        "segment base: %s", err.message);
  EXPECT_MSG(xpack_et_program_open_memory(NULL, 0, "e.pte", &p, &err) == XPACK_ERR_BAD_INPUT, "empty program");
  EXPECT_MSG(xpack_et_program_open("/nonexistent/x.pte", &p, &err) == XPACK_ERR_IO, "missing file is IO");
  xpack_et_ptd* t;
  memcpy(f.b + 4, "FT01FH01", 8);
  put32(&f, 12, 40);
  put64(&f, 16, 48);
  put64(&f, 24, 8);
  put64(&f, 32, 56);
  put64(&f, 40, 1000); /* segment data past the end */
  EXPECT_MSG(xpack_et_ptd_open_memory(f.b, 64, "w.ptd", &t, &err) == XPACK_ERR_BAD_INPUT &&
             strstr(err.message, "truncated") != NULL,
        "ptd segment data: %s", err.message);
}

static void test_identity(void) {
  char out[XPACK_ET_IDENTITY_MAX];
  size_t n = 0;
  xpack_error err = {0};
  const uint8_t bytes[5] = {1, 2, 3, 4, 5};
  EXPECT_MSG(xpack_et_constant_identity(bytes, 5, NULL, 0, out, sizeof out, &n, &err) == XPACK_OK, "%s", err.message);
  EXPECT_MSG(strncmp(out, "xpack:xxh3-128:", 15) == 0 && strlen(out) == n && n == 15 + 32 + 2, "unnamed form: %s", out);
  EXPECT_MSG(strcmp(out + 15 + 32, ":5") == 0, "size suffix: %s", out);
  char again[XPACK_ET_IDENTITY_MAX];
  xpack_et_constant_identity(bytes, 5, NULL, 0, again, sizeof again, NULL, &err);
  EXPECT_MSG(strcmp(out, again) == 0, "stable");
  const uint8_t other[5] = {1, 2, 3, 4, 6};
  xpack_et_constant_identity(other, 5, NULL, 0, again, sizeof again, NULL, &err);
  EXPECT_MSG(strcmp(out, again) != 0, "content dependent");
  EXPECT_MSG(xpack_et_constant_identity(NULL, 0, NULL, 0, out, sizeof out, &n, &err) == XPACK_OK &&
             strcmp(out + n - 2, ":0") == 0,
        "empty constant: %s", out);
  /* Content-named keys (SHA-256 hex, optionally "scale_"-prefixed) verbatim, the bytes unread. */
  const char sha[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  EXPECT_MSG(xpack_et_constant_identity(NULL, 5, sha, 64, out, sizeof out, &n, &err) == XPACK_OK && n == 64 &&
             strcmp(out, sha) == 0,
        "content key verbatim: %s", err.message);
  char scale_sha[71];
  snprintf(scale_sha, sizeof scale_sha, "scale_%s", sha);
  EXPECT_MSG(xpack_et_constant_identity(NULL, 5, scale_sha, 70, out, sizeof out, &n, &err) == XPACK_OK && n == 70 &&
             strcmp(out, scale_sha) == 0,
        "scale_ content key verbatim: %s", err.message);
  EXPECT_MSG(xpack_et_constant_identity(bytes, 5, sha, 64, out, 64, &n, &err) == XPACK_ERR_ARG, "too small for key");
  /* Other keys name a tensor, not its bytes: the content hash joins them (embedded NULs kept). */
  const char key[] = "scale_ab\0cd";
  char big[XPACK_ET_IDENTITY_MAX + 16];
  EXPECT_MSG(xpack_et_constant_identity(bytes, 5, key, 11, big, sizeof big, &n, &err) == XPACK_OK, "%s", err.message);
  EXPECT_MSG(n == 11 + 10 + 32 + 2 && memcmp(big, key, 11) == 0 && memcmp(big + 11, "#xxh3-128:", 10) == 0 &&
             strcmp(big + n - 2, ":5") == 0,
        "name + content form");
  char unnamed[XPACK_ET_IDENTITY_MAX];
  xpack_et_constant_identity(bytes, 5, NULL, 0, unnamed, sizeof unnamed, NULL, &err);
  EXPECT_MSG(memcmp(big + 21, unnamed + 15, 32) == 0, "same content hash as the unnamed form");
  xpack_et_constant_identity(other, 5, key, 11, out, sizeof out, &n, &err);
  EXPECT_MSG(memcmp(out, big, n) != 0, "same name, other bytes: another identity");
  const char upper[] = "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef";
  EXPECT_MSG(xpack_et_constant_identity(bytes, 5, upper, 64, big, sizeof big, &n, &err) == XPACK_OK && n > 64,
        "upper-case hex is not ExecuTorch's content form");
  EXPECT_MSG(xpack_et_constant_identity(bytes, 5, key, 11, out, 30, &n, &err) == XPACK_ERR_ARG, "too small for name+hash");
  EXPECT_MSG(xpack_et_constant_identity(bytes, 5, NULL, 0, out, 20, &n, &err) == XPACK_ERR_ARG, "too small for hash");
}

static void test_names(void) {
  EXPECT_MSG(strcmp(xpack_et_xnn_node_type_name(2), "FullyConnected") == 0, "node 2");
  EXPECT_MSG(strcmp(xpack_et_xnn_node_type_name(47), "Cos") == 0, "node 47");
  EXPECT_MSG(strcmp(xpack_et_xnn_node_type_name(48), "unknown") == 0, "node 48");
  EXPECT_MSG(strcmp(xpack_et_xnn_datatype_name(6), "qcint8") == 0, "qcint8");
  EXPECT_MSG(strcmp(xpack_et_xnn_datatype_name(14), "bf16") == 0, "bf16");
  for (int t = 1; t <= XPACK_ET_XNN_NODE_TYPE_MAX; t++) {
    size_t n = 0;
    EXPECT_MSG(xpack_et_xnn_node_layout(t) != 0 && xpack_et_xnn_layout_fields(xpack_et_xnn_node_layout(t), &n) && n >= 3,
          "type %d has a layout", t);
  }
  size_t n;
  const xpack_et_xnn_field* conv = xpack_et_xnn_layout_fields(XPACK_ET_XNN_LAYOUT_CONV, &n);
  EXPECT_MSG(n == 20 && strcmp(conv[15].name, "input1_id") == 0 && strcmp(conv[19].name, "flags") == 0, "conv ids");
  const xpack_et_xnn_field* cat = xpack_et_xnn_layout_fields(XPACK_ET_XNN_LAYOUT_CONCATENATE, &n);
  EXPECT_MSG(n == 8 && strcmp(cat[7].name, "input5_id") == 0, "input5_id is field 7");
}

/* xpack_mapped_file_at names the file a libpack mapping holds, and the offset, until it is unmapped (a SIGBUS
 * handler's only way to name a truncated input). */
static void test_mapped_file_at(void) {
  char path[] = "/tmp/xpack-et-unit-XXXXXX";
  int fd = mkstemp(path);
  EXPECT_MSG(fd >= 0, "mkstemp");
  if (fd < 0) return;
  static const char bytes[10000] = {1};
  EXPECT_MSG(write(fd, bytes, sizeof bytes) == (ssize_t)sizeof bytes, "write");
  close(fd);
  xp_file_map map;
  xpack_error err;
  EXPECT_MSG(xp_map_file(path, &map, &err) == XPACK_OK, "map: %s", err.message);
  unsigned long long offset = 0;
  const char* named = xpack_mapped_file_at(map.data + 5000, &offset);
  EXPECT_MSG(named != NULL && strcmp(named, path) == 0 && offset == 5000, "inside: %s at %llu", named ? named : "NULL",
             offset);
  EXPECT_MSG(xpack_mapped_file_at(map.data + map.size, NULL) == NULL, "one past the end is in no file");
  EXPECT_MSG(xpack_mapped_file_at(bytes, NULL) == NULL, "a static array is in no file");
  const uint8_t* data = map.data;
  xp_unmap_file(&map);
  EXPECT_MSG(xpack_mapped_file_at(data, NULL) == NULL, "forgotten once unmapped");

  /* A range of the file (an archive's member) is mapped from its first page, but named and counted from its own
   * start: once, a report gave the offset in that page's mapping, neither the member's nor the archive's. */
  fd = open(path, O_RDONLY);
  uint64_t delta = 0;
  EXPECT_MSG(fd >= 0 && xp_map_range(fd, 4096 + 80, 2000, "a.zip!/m.pte", &map, &delta, &err) == XPACK_OK,
             "map a range: %s", err.message);
  if (fd >= 0) close(fd);
  if (map.data != NULL) {
    named = xpack_mapped_file_at(map.data + delta + 100, &offset);
    EXPECT_MSG(delta == 80 && named != NULL && strcmp(named, "a.zip!/m.pte") == 0 && offset == 100,
               "a range: %s at %llu (delta %llu)", named ? named : "NULL", offset, (unsigned long long)delta);
    xp_unmap_file(&map);
  }

  /* The readers' mappings (xp_et_map) too, every time: a stale record would name the wrong file for whatever is
   * mapped there next, and records that are never freed would fill the table after a few hundred opens. */
  for (int round = 0; round < 300; round++) {
    xp_et_map program;
    if (xp_et_map_file(path, &program, &err) != XPACK_OK) {
      EXPECT_MSG(0, "xp_et_map_file: %s", err.message);
      break;
    }
    named = xpack_mapped_file_at(program.data + 7, &offset);
    if (named == NULL || strcmp(named, path) != 0 || offset != 7) {
      EXPECT_MSG(0, "round %d: a reader's mapping named %s at %llu", round, named ? named : "NULL", offset);
      xp_et_map_release(&program);
      break;
    }
    data = program.data;
    xp_et_map_release(&program);
    if (xpack_mapped_file_at(data, NULL) != NULL) {
      EXPECT_MSG(0, "round %d: a reader's mapping still named once released", round);
      break;
    }
  }
  unlink(path);
}

int main(void) {
  test_mapped_file_at();
  test_scalars_and_defaults();
  test_malformed();
  test_paths();
  test_inline_size_is_not_a_bound();
  test_blob_header();
  test_program_front_matter();
  test_identity();
  test_names();
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("et unit tests ok\n");
  return 0;
}
