/* What every xpack command shares: exit codes, option parsing helpers, error reporting. */
#ifndef XPACK_TOOLS_CLI_COMMON_H
#define XPACK_TOOLS_CLI_COMMON_H

#include <stdint.h>

#include "xpack_pipeline.h"
#include "xpack_status.h"

/* Exit codes, documented in `xpack --help` and docs/CLI.md. */
#define XPACK_EXIT_OK 0
#define XPACK_EXIT_CHECK_FAILED 1 /* verify found a problem, run saw a mismatch */
#define XPACK_EXIT_USAGE 2        /* bad command line */
#define XPACK_EXIT_BAD_INPUT 3    /* an input file is missing, unreadable or malformed */
#define XPACK_EXIT_FAILED 4       /* could not complete: output I/O, XNNPACK error, out of memory */

extern const char* g_program; /* "xpack" */
extern int g_verbosity;       /* -q: -1, default 0, -v: 1 */

/* Prints "xpack: message" to stderr. */
void cli_error(const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* An xpack_message_fn for the pipeline's messages, on stderr: notes ("note: ...") unless -q, details only
 * with -v, warnings ("warning: ...") and errors ("xpack: ...") always. context is unused. */
void cli_message(void* context, xpack_message_kind kind, const char* text);

/* Maps a libpack status about an input file to an exit code. */
int cli_exit_for_status(xpack_status status);

/* Formats a byte count as "12.3 MiB" into buf. */
const char* cli_bytes(uint64_t bytes, char buf[32]);

#endif
