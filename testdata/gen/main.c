/* xpack-genmodel: writes ExecuTorch .pte (and .ptd) fixtures in the real wire format, deterministically. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fb_builder.h"
#include "kinds.h"
#include "pte_writer.h"
#include "weights.h"

#define EXIT_USAGE 2

static void usage(FILE* f) {
  fprintf(f,
          "usage: xpack-genmodel KIND -o OUT.pte [--ptd OUT.ptd] [--size BYTES | --scale N] [--seed N]\n"
          "                      [--variant LETTER] [--alias-decode] [--group-size N] [--scale-keys prefixed|plain]\n"
          "                      [--name-keys [--key-length N]] [--delegates N] [--repeat-calls N] [--layers N] [--short-vtables] [--ptd-layout 2025-06|2025-04]\n"
          "       xpack-genmodel --list\n"
          "  --size BYTES   weight bytes of llm kinds, at most (suffix K, M or G = KiB, MiB, GiB): whole layers of a\n"
          "                 rounded width, so somewhat less (64M gives 49.2 MiB; the count is printed)\n"
          "  --scale N      width multiplier (other kinds) or size multiplier (llm kinds), default 1\n"
          "  --seed N       weights are a pure function of the seed (default 1)\n"
          "  --ptd PATH     put the named weights in a .ptd instead of the .pte (kind ptd: default OUT.ptd)\n"
          "  --variant L    llm kinds: a letter other than A changes only the head weights, so two programs\n"
          "                 share every layer's named keys\n"
          "  --alias-decode llm kinds: add method decode_alias whose delegate blob equals decode's\n"
          "  --group-size N llm-q4: qbint4 block size (default 32)\n"
          "  --scale-keys   named keys of quantization scales: \"scale_\"+sha256 (prefixed, default) or sha256\n"
          "  --name-keys    llm kinds: key weights by module path (layers.N.q.weight) instead of by content,\n"
          "                 so programs with other weights reuse the same keys\n"
          "  --key-length N with --name-keys: every key N bytes long (32..1100), a module path padded in front\n"
          "  --repeat-calls N llm kinds: decode calls its first delegate N times (2..504): N delegate entries\n"
          "                 naming one blob\n"
          "  --delegates N  llm kinds: N XNNPACK delegates per method (1..8), each a slice of the layers, the\n"
          "                 last with the head; no two delegates of a method share a weight\n"
          "  --layers N     llm kinds: N layers (1..1024; default from --size), width still from --size;\n"
          "                 conv: N more blocks (1x1 Conv2d, 3x3 DepthwiseConv2d) on 8x8 images: large graphs\n"
          "  --ptd-layout L FlatTensor layout of the .ptd: 2025-06 (segments, named_data; default) or 2025-04\n"
          "                 (tensor_alignment, empty tensors, segments, named_data as field 4: ExecuTorch 0.6)\n"
          "  --short-vtables\n"
          "                 every flatbuffer table (Program, XNNGraph, .ptd) declares an inline size 4 bytes\n"
          "                 past the start of its last field, too small for a last field of 8 bytes, as\n"
          "                 ExecuTorch's training export writes; the contents are as without it\n");
}

static int bad_usage(const char* msg, const char* arg) {
  fprintf(stderr, "xpack-genmodel: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
  usage(stderr);
  return EXIT_USAGE;
}

static int parse_u64(const char* s, uint64_t* out, int allow_suffix) {
  if (!s || !*s || *s == '-') return 0;
  errno = 0;
  char* end;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s) return 0;
  uint64_t mul = 1;
  if (allow_suffix && *end) {
    switch (*end) {
      case 'k': case 'K': mul = 1ull << 10; break;
      case 'm': case 'M': mul = 1ull << 20; break;
      case 'g': case 'G': mul = 1ull << 30; break;
      default: return 0;
    }
    end++;
    if (*end == 'i') end++;
    if (*end == 'B' || *end == 'b') end++;
  }
  if (*end) return 0;
  if (mul > 1 && v > UINT64_MAX / mul) return 0;
  *out = (uint64_t)v * mul;
  return 1;
}

static char* default_ptd_path(const char* pte) {
  size_t n = strlen(pte);
  char* s = malloc(n + 5);
  if (!s) return NULL;
  memcpy(s, pte, n + 1);
  char* dot = strrchr(s, '.');
  char* slash = strrchr(s, '/');
  if (dot && (!slash || dot > slash)) *dot = 0;
  strcat(s, ".ptd");
  return s;
}

int main(int argc, char** argv) {
  gen_options o = {0};
  o.seed = 1;
  o.variant = 'A';
  const char* out = NULL;
  const char* ptd = NULL;
  int have_size = 0, have_scale = 0;

  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    uint64_t n;
    if (!strcmp(a, "--list")) {
      int count;
      const kind_info* k = kind_list(&count);
      for (int j = 0; j < count; j++) printf("%-9s %s\n", k[j].name, k[j].summary);
      return 0;
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "-o")) {
      if (!v) return bad_usage("-o needs a path", NULL);
      out = v, i++;
    } else if (!strcmp(a, "--ptd")) {
      if (!v) return bad_usage("--ptd needs a path", NULL);
      ptd = v, i++;
    } else if (!strcmp(a, "--size")) {
      if (!parse_u64(v, &n, 1) || n == 0) return bad_usage("bad --size", v);
      o.size = n, have_size = 1, i++;
    } else if (!strcmp(a, "--scale")) {
      if (!parse_u64(v, &n, 0) || n == 0 || n > 64) return bad_usage("bad --scale (1..64)", v);
      o.scale = (uint32_t)n, have_scale = 1, i++;
    } else if (!strcmp(a, "--seed")) {
      if (!parse_u64(v, &n, 0)) return bad_usage("bad --seed", v);
      o.seed = n, i++;
    } else if (!strcmp(a, "--variant")) {
      if (!v || strlen(v) != 1 || !((v[0] >= 'A' && v[0] <= 'Z'))) return bad_usage("bad --variant (A-Z)", v);
      o.variant = v[0], i++;
    } else if (!strcmp(a, "--alias-decode")) {
      o.alias_decode = 1;
    } else if (!strcmp(a, "--short-vtables")) {
      fb_set_short_vtables(1);
    } else if (!strcmp(a, "--ptd-layout")) {
      if (v && !strcmp(v, "2025-06")) pte_set_ptd_layout(PTD_LAYOUT_2025_06);
      else if (v && !strcmp(v, "2025-04")) pte_set_ptd_layout(PTD_LAYOUT_2025_04);
      else return bad_usage("bad --ptd-layout (2025-06|2025-04)", v);
      i++;
    } else if (!strcmp(a, "--name-keys")) {
      o.name_keys = 1;
    } else if (!strcmp(a, "--delegates")) {
      if (!parse_u64(v, &n, 0) || n == 0 || n > 8) return bad_usage("bad --delegates (1..8)", v);
      o.delegates = (uint32_t)n, i++;
    } else if (!strcmp(a, "--layers")) {
      if (!parse_u64(v, &n, 0) || n == 0 || n > 1024) return bad_usage("bad --layers (1..1024)", v);
      o.layers = (uint32_t)n, i++;
    } else if (!strcmp(a, "--repeat-calls")) {
      if (!parse_u64(v, &n, 0) || n < 2 || n + 8 > PTE_MAX_CALLS) return bad_usage("bad --repeat-calls (2..504)", v);
      o.repeat_calls = (uint32_t)n, i++;
    } else if (!strcmp(a, "--key-length")) {
      if (!parse_u64(v, &n, 0) || n < 32 || n > 1100) return bad_usage("bad --key-length (32..1100)", v);
      o.key_length = (uint32_t)n, i++;
    } else if (!strcmp(a, "--group-size")) {
      if (!parse_u64(v, &n, 0) || n < 16 || n > 4096 || (n & (n - 1))) return bad_usage("bad --group-size", v);
      o.group_size = (uint32_t)n, i++;
    } else if (!strcmp(a, "--scale-keys")) {
      if (v && !strcmp(v, "plain")) weights_set_scale_prefix(0);
      else if (v && !strcmp(v, "prefixed")) weights_set_scale_prefix(1);
      else return bad_usage("bad --scale-keys (prefixed|plain)", v);
      i++;
    } else if (a[0] == '-') {
      return bad_usage("unknown option", a);
    } else if (!o.kind) {
      o.kind = a;
    } else {
      return bad_usage("unexpected argument", a);
    }
  }
  if (!o.kind) return bad_usage("missing KIND (see --list)", NULL);
  const kind_info* kind = kind_find(o.kind);
  if (!kind) return bad_usage("unknown KIND (see --list)", o.kind);
  if (!out) return bad_usage("missing -o OUT.pte", NULL);
  if (have_size && have_scale) return bad_usage("--size and --scale exclude each other", NULL);
  int is_llm = !strncmp(o.kind, "llm", 3);
  if (have_size && !is_llm) return bad_usage("--size applies to llm kinds only; use --scale", NULL);
  if (!is_llm && (o.variant != 'A' || o.alias_decode || o.name_keys || o.delegates || o.repeat_calls))
    return bad_usage("--variant/--alias-decode/--name-keys/--delegates/--repeat-calls: llm kinds only", NULL);
  if (o.group_size && strcmp(o.kind, "llm-q4")) return bad_usage("--group-size applies to llm-q4 only", NULL);
  if (o.layers && !is_llm && strcmp(o.kind, "conv")) return bad_usage("--layers applies to llm kinds and conv only", NULL);
  if (o.key_length && !o.name_keys) return bad_usage("--key-length applies with --name-keys only", NULL);

  char* derived_ptd = NULL;
  if (!ptd && !strcmp(o.kind, "ptd")) {
    derived_ptd = default_ptd_path(out);
    if (!derived_ptd) return 1;
    ptd = derived_ptd;
  }
  if (ptd && !strcmp(ptd, out)) return bad_usage("--ptd must differ from -o", NULL);

  weight_pool pool = {0};
  pte_program* p = malloc(sizeof *p);
  int ok = p != NULL;
  if (ok) {
    pte_init(p);
    ok = kind->build(&o, &pool, p);
    if (!ok) fprintf(stderr, "xpack-genmodel: cannot build %s with these options\n", o.kind);
  }
  if (ok) ok = pte_write(p, out, ptd);
  if (ok) {
    uint64_t total = 0;
    for (size_t i = 0; i < p->nnamed; i++) total += p->named[i]->nbytes;
    printf("%s: %d method(s), %zu named weight(s), %llu weight bytes%s%s\n", out, p->nmethods, p->nnamed,
           (unsigned long long)total, ptd ? " in " : "", ptd ? ptd : "");
  }
  if (p) pte_free(p);
  free(p);
  pool_free(&pool);
  free(derived_ptd);
  return ok ? 0 : 1;
}
