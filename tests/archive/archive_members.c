/* archive_members ARCHIVE [MEMBER]: every member of a zip archive as xpack_archive_each sees it, one line each
 * ("NAME METHOD DATA_OFFSET STORED_SIZE SIZE LOOKS_LIKE_CACHE"), or with MEMBER the line xpack_archive_find
 * gives for it; for tests/archive/archive.sh to compare with what Python's zipfile wrote. Exit 0, or 3 with
 * the library's message on stderr.
 * archive_members --api ARCHIVE MEMBER: the promises of xpack_archive.h and of the range opens of xpack.h
 * (xpack_file_open_range, xpack_verify_range) and of xpack_inflate_range for bad arguments and ranges; MEMBER
 * must be a sound cache in the mappable form. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "xpack.h"

static void print_member(const char* name, size_t length, const xpack_archive_member* m) {
  printf("%.*s %u %llu %llu %llu %u\n", (int)length, name, m->method, (unsigned long long)m->data_offset,
         (unsigned long long)m->stored_size, (unsigned long long)m->size, m->looks_like_cache);
}

static int print_each(void* context, const char* name, size_t length, const xpack_archive_member* m) {
  (void)context;
  print_member(name, length, m);
  return 0;
}

static int g_failures;
#define EXPECT(cond)                                             \
  do {                                                           \
    if (!(cond)) {                                               \
      fprintf(stderr, "FAIL line %d: %s\n", __LINE__, #cond);    \
      g_failures++;                                              \
    }                                                            \
  } while (0)

static void count_problem(void* context, const char* where, const char* what) {
  (void)where;
  (void)what;
  ++*(int*)context;
}

static int no_member(void* context, const char* name, size_t length, const xpack_archive_member* m) {
  (void)name;
  (void)length;
  (void)m;
  return ++*(int*)context >= 1; /* stop at the first */
}

static int api_checks(const char* archive, const char* member) {
  const int fd = open(archive, O_RDONLY | O_CLOEXEC);
  EXPECT(fd >= 0);
  xpack_error err;
  xpack_archive_member m;
  EXPECT(xpack_archive_find(-1, archive, member, &m, &err) == XPACK_ERR_ARG);
  EXPECT(xpack_archive_find(fd, archive, NULL, &m, &err) == XPACK_ERR_ARG);
  EXPECT(xpack_archive_find(fd, NULL, member, &m, &err) == XPACK_ERR_ARG);
  EXPECT(xpack_archive_find(fd, archive, member, NULL, &err) == XPACK_ERR_ARG);
  EXPECT(xpack_archive_each(fd, archive, NULL, NULL, &err) == XPACK_ERR_ARG);
  int visited = 0;
  EXPECT(xpack_archive_each(fd, archive, no_member, &visited, &err) == XPACK_OK && visited == 1); /* fn stops it */
  EXPECT(xpack_archive_find(fd, archive, member, &m, &err) == XPACK_OK && m.looks_like_cache);
  /* The folder holding the archive is no archive. */
  const int folder = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  EXPECT(xpack_archive_find(folder, ".", member, &m, &err) == XPACK_ERR_IO);
  xpack_archive_member found;
  EXPECT(xpack_archive_find(fd, archive, member, &found, &err) == XPACK_OK);

  xpack_file* f = NULL;
  EXPECT(xpack_file_open_range(fd, found.data_offset, found.stored_size, "member", &f, &err) == XPACK_OK);
  xpack_file_info info;
  xpack_file_get_info(f, &info);
  EXPECT(info.file_size == found.stored_size && info.entry_count > 0);
  xpack_file_close(f);
  f = NULL;
  EXPECT(xpack_file_open_range(fd, found.data_offset, UINT64_MAX, "member", &f, &err) == XPACK_ERR_TRUNCATED && !f);
  EXPECT(xpack_file_open_range(folder, 0, 64, "folder", &f, &err) == XPACK_ERR_IO && !f);
  EXPECT(xpack_file_open_range(-1, 0, 64, "member", &f, &err) == XPACK_ERR_ARG);
  /* A range one byte short is a cache cut short: opened and refused as the file's fault. */
  EXPECT(xpack_file_open_range(fd, found.data_offset, found.stored_size - 1, "member", &f, &err) != XPACK_OK && !f);

  int problems = 0;
  uint64_t count = 99;
  EXPECT(xpack_verify_range(fd, found.data_offset, found.stored_size, "member", count_problem, &problems, &count, &err) ==
         XPACK_OK);
  EXPECT(problems == 0 && count == 0);
  /* A range past the file: the caller's error, no problem reported. */
  const off_t archive_size = lseek(fd, 0, SEEK_END);
  EXPECT(xpack_verify_range(fd, (uint64_t)archive_size - found.stored_size + 1, found.stored_size, "member",
                            count_problem, &problems, &count, &err) == XPACK_ERR_TRUNCATED);
  EXPECT(problems == 0 && count == 0);
  /* A range that starts one byte late: the bytes there are no cache, reported as the one problem. */
  EXPECT(xpack_verify_range(fd, found.data_offset + 1, found.stored_size - 1, "member", count_problem, &problems, &count,
                            &err) != XPACK_OK);
  EXPECT(problems == 1 && count == 1);
  EXPECT(xpack_verify_range(-1, 0, 0, "member", NULL, NULL, NULL, &err) == XPACK_ERR_ARG);
  EXPECT(xpack_inflate_range(-1, 0, 0, "member", "out.xpc", NULL, &err) == XPACK_ERR_ARG);
  EXPECT(xpack_inflate_range(fd, 0, 0, NULL, "out.xpc", NULL, &err) == XPACK_ERR_ARG);
  /* The member is in the mappable form: nothing to inflate, nothing written. */
  EXPECT(xpack_inflate_range(fd, found.data_offset, found.stored_size, "member", "never.xpc", NULL, &err) ==
             XPACK_ERR_ARG &&
         access("never.xpc", F_OK) != 0);
  EXPECT(xpack_inflate_range(fd, (uint64_t)archive_size, 64, "member", "never.xpc", NULL, &err) == XPACK_ERR_TRUNCATED);
  close(folder);
  close(fd);
  if (g_failures == 0) printf("api: every promise kept\n");
  return g_failures ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc == 4 && strcmp(argv[1], "--api") == 0) return api_checks(argv[2], argv[3]);
  if (argc != 2 && argc != 3) {
    fprintf(stderr, "usage: archive_members ARCHIVE [MEMBER]\n");
    return 2;
  }
  const int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    perror(argv[1]);
    return 3;
  }
  xpack_error err;
  xpack_status st;
  if (argc == 3) {
    xpack_archive_member m;
    st = xpack_archive_find(fd, argv[1], argv[2], &m, &err);
    if (st == XPACK_OK) print_member(argv[2], strlen(argv[2]), &m);
  } else {
    st = xpack_archive_each(fd, argv[1], print_each, NULL, &err);
  }
  close(fd);
  if (st != XPACK_OK) {
    fprintf(stderr, "%s\n", err.message);
    return 3;
  }
  return 0;
}
