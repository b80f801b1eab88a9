/* What every xpack command shares: exit codes, option parsing helpers, error reporting. */
#ifndef XPACK_TOOLS_CLI_COMMON_H
#define XPACK_TOOLS_CLI_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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

/* Prints "xpack: message" to stderr, as one line (cli_line). */
void cli_error(const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Prints one line to `out`: the printf-formatted text, with every control character written as '?'
 * (cli_neutralize_controls, line breaks included), then a newline. For text that may hold names taken from
 * files. */
void cli_line(FILE* out, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Names in reports and messages come from files (method, backend and family names, keys, identities): a
 * crafted one could send escape sequences to the terminal (retitle it, move the cursor, rewrite what was
 * printed) or start a line of its own. Replaces, in place, each control character of the n bytes at s by '?',
 * as ls does: C0 (but '\n' and '\t' when keep_line_breaks), DEL, and C1 in its UTF-8 form (U+0080..U+009F,
 * which some terminals obey) as "??". */
void cli_neutralize_controls(char* s, size_t n, int keep_line_breaks);
/* A name from a file as a report may print it inside one of its own lines: s itself when it holds no control
 * character, else a copy with each one written as '?' (line breaks and tabs too: a key holding "\n" once started
 * a line of its own in `dump`'s report, which cli_neutralize_controls over the whole report keeps). The copy lives
 * until 8 more are made. NULL for NULL. */
const char* cli_name(const char* s);

/* An xpack_message_fn for the pipeline's messages, on stderr: notes ("note: ...") unless -q, details only
 * with -v, warnings ("warning: ...") and errors ("xpack: ...") always. context is unused. */
void cli_message(void* context, xpack_message_kind kind, const char* text);

/* Maps a libpack status about an input file to an exit code. */
int cli_exit_for_status(xpack_status status);

/* An option of a command: its name ("--jobs"), whether it takes a value (the next argument), and whether
 * it also takes one after '=' in the same argument ("--zstd=3"; then the value is optional). */
typedef struct cli_option {
  const char* name;
  int takes_value;
  int equals_value;
  int repeats; /* may be given more than once (--data FILE ...); any other option with a value only once */
} cli_option;

/* A command's options; `command` ("pack") starts its messages. */
typedef struct cli_options {
  const char* command;
  const cli_option* list;
  size_t count;
} cli_options;

/* The option of `options` that `arg` is ("--zstd=3" is "--zstd" when that takes an '=' value), or NULL. */
const cli_option* cli_option_of(const cli_options* options, const char* arg);

/* Whether `arg` has the form of an option ("-x", "--x"); "-" alone does not. */
int cli_is_option(const char* arg);

/* Checks a whole command line before anything is opened: every argument of the form of an option is one of
 * the command's, and every option that takes a value has one (a next argument that is not one of the
 * command's options). Returns 0, or XPACK_EXIT_USAGE after printing "COMMAND: unknown option X" or
 * "COMMAND: X needs a value". */
int cli_check_options(const cli_options* options, int argc, char** argv);

/* Parses `text`, the value of `option`, as a whole decimal number from min to max: digits only (no sign,
 * space, suffix or base prefix), no overflow. Returns 0 with *value set, or XPACK_EXIT_USAGE after printing
 * (cli_bad_value) what is accepted: `accepted`, or "a whole number from MIN to MAX" when NULL. */
int cli_parse_number(const char* command, const char* option, const char* text, uint64_t min, uint64_t max,
                     const char* accepted, uint64_t* value);

/* Prints "COMMAND: OPTION TEXT: expected ACCEPTED" and returns XPACK_EXIT_USAGE. */
int cli_bad_value(const char* command, const char* option, const char* text, const char* accepted);

/* Where a command prints its report, text or --json. Between cli_out_begin and cli_out_end it is held in
 * memory, and reaches stdout only when the command ends with exit 0 or 1: a command that fails (exit 2, 3
 * or 4) leaves stdout empty, whenever it finds out (docs/CLI.md). stdout outside those calls. */
FILE* cli_out(void);

/* From here on, an input file truncated while it is mapped (SIGBUS) ends the process with a message naming
 * the file and the offset and exit 3, writing nothing (cli_sigbus.c). */
void cli_catch_truncated_inputs(void);

/* From here on, SIGINT, SIGTERM and SIGHUP first remove the temporary files libpack has named for outputs
 * (xpack_remove_temporary_files), then end the process as they would have (cli_interrupt.c). */
void cli_remove_temporaries_on_interrupt(void);

/* Starts holding the report. Returns 0, or XPACK_EXIT_FAILED after printing why (out of memory). */
int cli_out_begin(void);

/* Ends holding: with exit_code 0 or 1 writes the held report to stdout, else drops it. Returns exit_code,
 * or XPACK_EXIT_FAILED after printing why when stdout cannot be written. */
int cli_out_end(int exit_code);

/* What a file was when a command first looked at it by name. verify and export open their input by name
 * more than once (verify: the whole-file check, the model comparison, this machine's loader; export: the
 * export, then its report), so a file renamed into place or rewritten between two opens would be reported
 * on as one file when it was two. */
typedef struct cli_file_identity {
  int known; /* 0 when the first look failed: the command's own open reports that */
  uint64_t device, inode, size;
  int64_t modified_s, modified_ns;
} cli_file_identity;

/* Takes path's identity (device, inode, size, modification time) now. */
void cli_file_identity_take(const char* path, cli_file_identity* identity);

/* 1 when path still names the file `identity` was taken of, with the same size and modification time (or
 * when the first look had failed), else 0 after printing "xpack: PATH changed while COMMAND read it
 * (replaced or rewritten): CONSEQUENCE; run COMMAND again". */
int cli_file_identity_still(const char* path, const cli_file_identity* identity, const char* command,
                            const char* consequence);

/* Formats a byte count as "12.3 MiB" into buf. */
const char* cli_bytes(uint64_t bytes, char buf[32]);

#endif
