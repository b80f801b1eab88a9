/* `MODEL.pte ... [--data FILE.ptd ...]` on a command line, opened as a model set (xpack_pipeline.h). */
#ifndef XPACK_TOOLS_MODEL_ARGS_H
#define XPACK_TOOLS_MODEL_ARGS_H

#include "xpack_pipeline.h"

/* Every non-option argument that is not consumed by another option is a program; `--data X` adds a .ptd;
 * each is opened as it comes, so the first bad argument or file is the one reported. Other options are
 * left to the caller: `is_option_with_value` says which take a value (so their value is skipped), `is_flag`
 * which take none; both may be NULL. hash_programs: as xpack_model_set_init. Returns an exit code (0 = ok) after printing any error; the set is
 * the caller's to close either way. */
int model_args_open(xpack_model_set* set, int argc, char** argv, int (*is_option_with_value)(const char* arg),
                    int (*is_flag)(const char* arg), int hash_programs);

#endif
