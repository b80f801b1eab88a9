/* xpack_describe_this_cpu (xpack.h): the CPU this process runs on, for people. A cache records it at pack time
 * (INFO key "cpu") so that a refusal on another machine can show both sides: XNNPACK chooses kernels, and so
 * packings, by CPU features and by the first core's microarchitecture, and a phone's cache packed for the
 * wrong class of CPU is refused family by family. Read from Linux's /proc/cpuinfo: aarch64 kernels give each
 * core's MIDR fields, x86 kernels a model name. Nothing decides from the text. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/target.h"
#include "inspect/cpu_description.h"
#include "xpack.h"

enum { MAX_KINDS = 8, NAME_SIZE = 96 };

typedef struct {
  char name[NAME_SIZE]; /* "MIDR 0x414fd0b1 (Cortex-A76)" or an x86 model name */
  unsigned count;
} core_kind;

typedef struct {
  core_kind kinds[MAX_KINDS];
  unsigned kind_count, cpus, other_kinds; /* other_kinds: cores of kinds past MAX_KINDS */
} core_kinds;

/* Part numbers of Arm Ltd's cores (implementer 0x41) that phones and boards use. */
static const char* arm_core_name(unsigned part) {
  switch (part) {
    case 0xd03: return "Cortex-A53";
    case 0xd04: return "Cortex-A35";
    case 0xd05: return "Cortex-A55";
    case 0xd07: return "Cortex-A57";
    case 0xd08: return "Cortex-A72";
    case 0xd09: return "Cortex-A73";
    case 0xd0a: return "Cortex-A75";
    case 0xd0b: return "Cortex-A76";
    case 0xd0c: return "Neoverse-N1";
    case 0xd0d: return "Cortex-A77";
    case 0xd41: return "Cortex-A78";
    case 0xd44: return "Cortex-X1";
    case 0xd46: return "Cortex-A510";
    case 0xd47: return "Cortex-A710";
    case 0xd48: return "Cortex-X2";
    default: return NULL;
  }
}

static void add_core(core_kinds* k, const char* name) {
  k->cpus++;
  for (unsigned i = 0; i < k->kind_count; i++) {
    if (strcmp(k->kinds[i].name, name) == 0) {
      k->kinds[i].count++;
      return;
    }
  }
  if (k->kind_count == MAX_KINDS) {
    k->other_kinds++;
    return;
  }
  snprintf(k->kinds[k->kind_count].name, NAME_SIZE, "%s", name);
  k->kinds[k->kind_count++].count = 1;
}

/* One core's fields as /proc/cpuinfo gives them; -1 where absent. */
typedef struct {
  long implementer, variant, part, revision;
  char model_name[NAME_SIZE];
  int seen;
} core_fields;

static const core_fields kNoCore = {.implementer = -1, .variant = -1, .part = -1, .revision = -1};

static void finish_core(core_kinds* k, core_fields* c) {
  if (!c->seen) return;
  char name[NAME_SIZE];
  if (c->implementer >= 0 && c->part >= 0) {
    const unsigned long midr = ((unsigned long)c->implementer & 0xff) << 24 |
                               ((unsigned long)(c->variant < 0 ? 0 : c->variant) & 0xf) << 20 | 0xful << 16 |
                               ((unsigned long)c->part & 0xfff) << 4 | ((unsigned long)(c->revision < 0 ? 0 : c->revision) & 0xf);
    const char* known = c->implementer == 0x41 ? arm_core_name((unsigned)c->part) : NULL;
    if (known) snprintf(name, sizeof name, "MIDR 0x%08lx (%s)", midr, known);
    else snprintf(name, sizeof name, "MIDR 0x%08lx", midr);
  } else if (c->model_name[0]) {
    snprintf(name, sizeof name, "%s", c->model_name);
  } else {
    snprintf(name, sizeof name, "a CPU /proc/cpuinfo does not name");
  }
  add_core(k, name);
  *c = kNoCore;
}

/* "key\t: value\n" -> key and value, both trimmed; 0 for other lines. */
static int split_line(char* line, char** key, char** value) {
  char* colon = strchr(line, ':');
  if (colon == NULL) return 0;
  char* end = colon;
  while (end > line && (end[-1] == ' ' || end[-1] == '\t')) end--;
  *end = 0;
  char* v = colon + 1;
  while (*v == ' ' || *v == '\t') v++;
  size_t n = strlen(v);
  while (n > 0 && (v[n - 1] == '\n' || v[n - 1] == ' ')) v[--n] = 0;
  *key = line;
  *value = v;
  return 1;
}

static void read_cpuinfo(FILE* f, core_kinds* k) {
  core_fields c = kNoCore;
  char line[512];
  while (fgets(line, sizeof line, f) != NULL) {
    if (strchr(line, '\n') == NULL) { /* a long line (x86 flags): its key is in this part; skip the rest */
      int ch;
      while ((ch = fgetc(f)) != EOF && ch != '\n') {
      }
    }
    char *key, *value;
    if (!split_line(line, &key, &value)) continue;
    if (strcmp(key, "processor") == 0) {
      finish_core(k, &c);
      c.seen = 1;
    } else if (strcmp(key, "CPU implementer") == 0) {
      c.implementer = strtol(value, NULL, 0);
    } else if (strcmp(key, "CPU variant") == 0) {
      c.variant = strtol(value, NULL, 0);
    } else if (strcmp(key, "CPU part") == 0) {
      c.part = strtol(value, NULL, 0);
    } else if (strcmp(key, "CPU revision") == 0) {
      c.revision = strtol(value, NULL, 0);
    } else if (strcmp(key, "model name") == 0) {
      snprintf(c.model_name, sizeof c.model_name, "%s", value);
    }
  }
  finish_core(k, &c);
}

/* Appends to out[*used..size), keeping it NUL-terminated and truncating at the end. */
static void append(char* out, size_t size, size_t* used, const char* format, ...) {
  if (*used + 1 >= size) return;
  va_list args;
  va_start(args, format);
  const int n = vsnprintf(out + *used, size - *used, format, args);
  va_end(args);
  if (n > 0) *used = *used + (size_t)n < size ? *used + (size_t)n : size - 1;
}

const char* xp_describe_cpu(FILE* cpuinfo, const char* arch_name, char* out, size_t size) {
  if (out == NULL || size == 0) return out;
  core_kinds k = {0};
  if (cpuinfo != NULL) read_cpuinfo(cpuinfo, &k);
  size_t used = 0;
  out[0] = 0;
  append(out, size, &used, "%s", arch_name);
  if (k.cpus == 0) {
    append(out, size, &used, ", CPUs not described (no /proc/cpuinfo)");
    return out;
  }
  append(out, size, &used, ", %u CPU%s:", k.cpus, k.cpus == 1 ? "" : "s");
  for (unsigned i = 0; i < k.kind_count; i++) {
    append(out, size, &used, "%s %u x %s", i ? "," : "", k.kinds[i].count, k.kinds[i].name);
  }
  if (k.other_kinds) append(out, size, &used, ", %u of other kinds", k.other_kinds);
  return out;
}

const char* xpack_describe_this_cpu(char* out, size_t size) {
  FILE* f = fopen("/proc/cpuinfo", "r");
  xp_describe_cpu(f, xp_arch_name(xp_target_arch()), out, size);
  if (f != NULL) fclose(f);
  return out;
}
