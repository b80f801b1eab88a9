/* A cache (or a program) named on the command line: a file, or a member of a zip archive (an APK's asset)
 * written as ARCHIVE!/MEMBER, the form Android's own tools use for a file inside an APK
 * ("base.apk!/assets/model.xpc"). verify, dump and run open caches through it, so that each opens an archive's
 * member where it lies, as an app does with xpack_cache_open_fd, rather than a copy; the commands that read
 * programs find them the same way (model_args.c). */
#ifndef XPACK_TOOLS_CLI_CACHE_SOURCE_H
#define XPACK_TOOLS_CLI_CACHE_SOURCE_H

#include <stdint.h>

#include "xpack.h"

typedef struct cli_cache_source {
  const char* arg;      /* as given: names the cache in reports and messages */
  char* archive;        /* the archive's path (owned), or NULL for a file */
  const char* member;   /* the member's name, inside arg; NULL for a file */
  int fd;               /* the archive, open for reading; -1 for a file */
  xpack_archive_member where; /* the member: where its bytes lie, how they are stored */
} cli_cache_source;

/* Resolves arg for `command` (in messages). A path naming a file is that file, "!/" in it or not. Otherwise
 * the shortest prefix ending before a "!/" that names a regular file is an archive, and the rest the member's
 * name. A file that is a zip archive itself is refused with the members that look like caches (name one).
 * Returns 0, or XPACK_EXIT_BAD_INPUT (XPACK_EXIT_FAILED out of memory) after printing why: an archive that
 * does not read as a zip archive, a member it does not hold. A member stored compressed is resolved
 * (cli_cache_source_unusable says why it cannot be opened). *out is always safe to close. */
int cli_cache_source_open(const char* command, const char* arg, cli_cache_source* out);
/* The same for a program or weight file (pack, run, inspect, verify --model): a file that is a zip archive
 * holding members named *.pte or *.ptd is refused naming them (XPACK_EXIT_BAD_INPUT); any other file is taken as
 * given (the reader says what it is); a member stored compressed is refused (XPACK_EXIT_BAD_INPUT, saying how to
 * extract it): the readers parse a member where it lies. */
int cli_model_source_open(const char* command, const char* arg, cli_cache_source* out);
void cli_cache_source_close(cli_cache_source* s);

/* Why no loader can open the member where it lies (stored compressed: no descriptor reaches its bytes), or
 * NULL. The text says what to change in the app's build. */
const char* cli_cache_source_unusable(const cli_cache_source* s);

/* Whether the member lies where the loader maps it in place: its offset is a multiple of `alignment` (the
 * cache's XNNPACK alignment). Otherwise the loader reads it into the app's memory. 1 for a file. */
int cli_cache_source_mappable(const cli_cache_source* s, uint32_t alignment);

/* The loader's and the inspection's opens, over the file or the member. */
xpack_status cli_cache_source_open_cache(const cli_cache_source* s, unsigned flags, xpack_cache** out,
                                         xpack_error* err);
xpack_status cli_cache_source_open_file(const cli_cache_source* s, xpack_file** out, xpack_error* err);
xpack_status cli_cache_source_verify(const cli_cache_source* s, xpack_problem_fn fn, void* context,
                                     uint64_t* problem_count, xpack_error* err);

#endif
