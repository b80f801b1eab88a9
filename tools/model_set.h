/* The ExecuTorch files a command works on: programs (.pte) and weight files (.ptd), opened and hashed. */
#ifndef XPACK_TOOLS_MODEL_SET_H
#define XPACK_TOOLS_MODEL_SET_H

#include <stddef.h>
#include <stdint.h>

#include "xpack_executorch.h"

#define MODEL_SET_MAX_FILES 64

typedef struct model_file {
  const char* path;
  uint64_t size;
  uint64_t program_size, program_hash; /* .pte: the program flatbuffer region */
} model_file;

typedef struct model_set {
  size_t program_count, ptd_count;
  xpack_et_program* programs[MODEL_SET_MAX_FILES];
  xpack_et_ptd* ptds[MODEL_SET_MAX_FILES];
  model_file program_files[MODEL_SET_MAX_FILES];
  model_file ptd_files[MODEL_SET_MAX_FILES];
} model_set;

/* Parses `MODEL.pte ... [--data FILE.ptd ...]` style arguments: every non-option argument that is not
 * consumed by another option is a program; `--data X` adds a .ptd. Other options are left to the
 * caller: `is_option_with_value` says which take a value (so their value is skipped). Returns an exit
 * code (0 = ok) after printing any error. */
int model_set_open(model_set* set, int argc, char** argv, int (*is_option_with_value)(const char* arg),
                   int (*is_flag)(const char* arg));
void model_set_close(model_set* set);

/* The named-key sources for program i: the .ptd files, then the program. */
xpack_et_named_sources model_set_sources(const model_set* set, size_t program);

/* XXH3-64 of the whole of program i (ptd == 0) or .ptd file i, as mapped: provenance in a cache. Reads
 * every byte: only pack asks for it. */
uint64_t model_set_file_hash(const model_set* set, int ptd, size_t i);

/* A short name for messages: the path's base name. */
const char* model_base_name(const char* path);

#endif
