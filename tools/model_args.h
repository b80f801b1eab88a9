/* `MODEL.pte ... [--data FILE.ptd ...]` on a command line, opened as a model set (xpack_pipeline.h). */
#ifndef XPACK_TOOLS_MODEL_ARGS_H
#define XPACK_TOOLS_MODEL_ARGS_H

#include "cli_common.h"
#include "xpack_pipeline.h"

/* Every argument that is not an option or an option's value is a program; `--data X` adds a .ptd (it must
 * be one of `options`). The command line is checked first (cli_check_options), so a usage error is found
 * before any file is opened; then each file is opened as it comes, so the first bad file is the one
 * reported. set_flags: XPACK_MODEL_SET_* (xpack_model_set_init). Returns an exit code (0 = ok) after printing any error;
 * the set is the caller's to close either way. */
int model_args_open(xpack_model_set* set, int argc, char** argv, const cli_options* options, unsigned set_flags);

/* The usage checks of model_args_open alone (options, at least one file), opening nothing: for a command
 * that opens something else first. Returns an exit code (0 = ok) after printing any error. */
int model_args_check(int argc, char** argv, const cli_options* options);

/* The programs' and data files' paths as given (in command-line order), at most max of them, opening nothing;
 * returns how many. */
size_t model_args_paths(int argc, char** argv, const cli_options* options, const char** paths, size_t max);

#endif
