/* Caches named on the command line, files or archive members: see cli_cache_source.h. */
#include "cli_cache_source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_common.h"

#define SEPARATOR "!/"
#define LISTED_MAX 8 /* members named in a hint */

static int is_regular_file(const char* path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Members of an archive picked for a hint, by name. */
typedef struct listing {
  char text[512];
  size_t count;
} listing;

static void list_member(listing* l, const char* name, size_t length, const char* remark) {
  if (l->count++ < LISTED_MAX) {
    const size_t used = strlen(l->text);
    snprintf(l->text + used, sizeof l->text - used, "%s%.*s%s", l->count == 1 ? "" : ", ", (int)(length < 80 ? length : 80),
             name, remark);
  }
}

static int ends_with(const char* name, size_t length, const char* suffix) {
  const size_t n = strlen(suffix);
  return length >= n && memcmp(name + length - n, suffix, n) == 0;
}

/* A member with an empty name, which Android's reader accepts, cannot be named as ARCHIVE!/MEMBER: not listed, though
 * its bytes may look like a cache's (list_model lists by name alone, which an empty one never matches). */
static int list_cache(void* context, const char* name, size_t length, const xpack_archive_member* m) {
  if (length == 0) return 0;
  if (m->looks_like_cache || ends_with(name, length, ".xpc")) {
    list_member(context, name, length, m->method == XPACK_ARCHIVE_STORED ? "" : " (compressed)");
  }
  return 0;
}

static int list_model(void* context, const char* name, size_t length, const xpack_archive_member* m) {
  if (ends_with(name, length, ".pte") || ends_with(name, length, ".ptd")) {
    list_member(context, name, length, m->method == XPACK_ARCHIVE_STORED ? "" : " (compressed)");
  }
  return 0;
}

/* Whether path is a zip archive this reads (a file given where a cache or a program is expected), with the
 * members `pick` lists in *l. */
static int is_archive(const char* path, xpack_archive_member_fn pick, listing* l) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return 0;
  uint8_t magic[4] = {0};
  const int zip = pread(fd, magic, sizeof magic, 0) == (ssize_t)sizeof magic && memcmp(magic, "PK\3\4", 4) == 0;
  xpack_error err;
  const int archive = zip && xpack_archive_each(fd, path, pick, l, &err) == XPACK_OK;
  close(fd);
  return archive; /* otherwise the command's own open says what the file is */
}

/* A zip archive (an APK) given where a cache is expected: name its caches. */
static int refuse_whole_archive(const char* command, const char* path) {
  listing l = {{0}, 0};
  if (!is_archive(path, list_cache, &l)) return 0;
  if (l.count == 0) {
    cli_error("%s: %s is a zip archive and holds no cache (no member named *.xpc or starting with a cache's magic)",
              command, path);
  } else {
    cli_error("%s: %s is a zip archive: name the cache inside it as %s!/MEMBER; it holds %zu %s: %s%s", command, path,
              path, l.count, l.count == 1 ? "member that looks like a cache" : "members that look like caches", l.text,
              l.count > LISTED_MAX ? ", ..." : "");
  }
  return XPACK_EXIT_BAD_INPUT;
}

/* A zip archive holding programs or weight files, given where one is expected: name them. One that holds none
 * (a TorchScript model, say) is left to the reader, which says what it looks like. */
static int refuse_archive_as_model(const char* command, const char* path) {
  listing l = {{0}, 0};
  if (!is_archive(path, list_model, &l) || l.count == 0) return 0;
  cli_error("%s: %s is a zip archive, not a program: name a program inside it as %s!/MEMBER; it holds %s%s", command,
            path, path, l.text, l.count > LISTED_MAX ? ", ..." : "");
  return XPACK_EXIT_BAD_INPUT;
}

/* arg as ARCHIVE!/MEMBER, when no file has its name. */
static int resolve_member(const char* command, const char* arg, cli_cache_source* out) {
  if (strstr(arg, SEPARATOR) == NULL) return 0; /* a missing file: the command's open says so */
  for (const char* at = strstr(arg, SEPARATOR); at != NULL; at = strstr(at + 1, SEPARATOR)) {
    char* archive = strndup(arg, (size_t)(at - arg));
    if (archive == NULL) {
      cli_error("%s: out of memory", command);
      return XPACK_EXIT_FAILED;
    }
    if (!is_regular_file(archive)) {
      free(archive);
      continue;
    }
    out->archive = archive;
    out->member = at + strlen(SEPARATOR);
    out->fd = open(archive, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY); /* a FIFO swapped in: no wait */
    if (out->fd < 0) {
      cli_error("%s: %s: cannot open: %s", command, archive, strerror(errno));
      return XPACK_EXIT_BAD_INPUT;
    }
    xpack_error err;
    xpack_status st = xpack_archive_find(out->fd, archive, out->member, &out->where, &err);
    if (st != XPACK_OK) {
      cli_error("%s: %s", command, err.message);
      return cli_exit_for_status(st);
    }
    return 0;
  }
  return 0; /* no prefix is a file: the open reports the path as missing */
}

int cli_cache_source_open(const char* command, const char* arg, cli_cache_source* out) {
  memset(out, 0, sizeof *out);
  out->arg = arg;
  out->fd = -1;
  if (is_regular_file(arg)) return refuse_whole_archive(command, arg);
  return resolve_member(command, arg, out);
}

int cli_model_source_open(const char* command, const char* arg, cli_cache_source* out) {
  memset(out, 0, sizeof *out);
  out->arg = arg;
  out->fd = -1;
  if (is_regular_file(arg)) return refuse_archive_as_model(command, arg);
  const int rc = resolve_member(command, arg, out);
  if (rc != 0 || out->archive == NULL || out->where.method == XPACK_ARCHIVE_STORED) return rc;
  cli_error("%s: %s: the member is stored compressed (zip method %u): xpack reads a program or weight file inside an "
            "archive only where it lies, stored as it is; extract it first (unzip -p '%s' '%s' > FILE)",
            command, arg, (unsigned)out->where.method, out->archive, out->member);
  return XPACK_EXIT_BAD_INPUT;
}

void cli_cache_source_close(cli_cache_source* s) {
  if (s->fd >= 0) close(s->fd);
  free(s->archive);
  memset(s, 0, sizeof *s);
  s->fd = -1;
}

const char* cli_cache_source_unusable(const cli_cache_source* s) {
  if (s->archive == NULL || s->where.method == XPACK_ARCHIVE_STORED) return NULL;
  return s->where.method == XPACK_ARCHIVE_DEFLATED
             ? "the member is stored deflated: Android gives no descriptor for a compressed asset "
               "(AAsset_openFileDescriptor64 fails) and no loader can map it; store it uncompressed "
               "(Gradle: androidResources { noCompress += \"xpc\" })"
             : "the member is stored compressed (a zip method other than stored): no descriptor or mapping reaches "
               "its bytes; store it uncompressed";
}

int cli_cache_source_mappable(const cli_cache_source* s, uint32_t alignment) {
  return s->archive == NULL || alignment == 0 || s->where.data_offset % alignment == 0;
}

xpack_status cli_cache_source_open_cache(const cli_cache_source* s, unsigned flags, xpack_cache** out,
                                         xpack_error* err) {
  if (s->archive == NULL) return xpack_cache_open(s->arg, flags, out, err);
  return xpack_cache_open_fd(s->fd, s->where.data_offset, s->where.stored_size, s->arg, flags, NULL, out, err);
}

xpack_status cli_cache_source_open_file(const cli_cache_source* s, xpack_file** out, xpack_error* err) {
  if (s->archive == NULL) return xpack_file_open(s->arg, out, err);
  return xpack_file_open_range(s->fd, s->where.data_offset, s->where.stored_size, s->arg, out, err);
}

xpack_status cli_cache_source_verify(const cli_cache_source* s, xpack_problem_fn fn, void* context,
                                     uint64_t* problem_count, xpack_error* err) {
  if (s->archive == NULL) return xpack_verify_file(s->arg, fn, context, problem_count, err);
  return xpack_verify_range(s->fd, s->where.data_offset, s->where.stored_size, s->arg, fn, context, problem_count, err);
}
