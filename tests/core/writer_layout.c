/* The writer's layout when delegates are packed on several threads and finish in any order
 * (writer_layout.c, writer_order.c): the file must be the bytes of a serial run.
 *
 * Four scripted delegates (the provider is driven the way XNNPACK drives it; no operator is created) are
 * recorded once serially, then in orders that send regions to the spool, bring them back when earlier
 * delegates end, map a spooled region while it waits, store in a later delegate bytes that an earlier one
 * then needs (the spool cannot foresee that: the final re-ordering copy runs), and never end a delegate.
 * Every file is compared byte for byte with the serial one. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "expect.h"
#include "xpack.h"


/* A weight: its identity, packed size and the byte its packed form is filled with. */
typedef struct weight {
  const char* name;
  size_t size;
  unsigned char fill;
} weight;

#define DELEGATES 4
#define MAX_WEIGHTS 3
/* Sizes around the 4 KiB page alignment: regions of a page or more start on a page. D3's second weight packs
 * to the bytes of D1's first (same fill and size) under another name. */
static const weight script[DELEGATES][MAX_WEIGHTS] = {
    {{"d0.a", 9000, 0x10}, {"d0.b", 100, 0x11}, {"d0.c", 70000, 0x12}},
    {{"d1.a", 5000, 0x20}, {"d1.b", 4096, 0x21}, {NULL, 0, 0}},
    {{"d2.a", 300, 0x30}, {"d2.b", 20000, 0x31}, {"d2.c", 64, 0x32}},
    {{"d3.a", 12288, 0x40}, {"d3.same_as_d1.a", 5000, 0x20}, {NULL, 0, 0}},
};
static char raw[DELEGATES][MAX_WEIGHTS][64]; /* the raw weights' addresses: the keys' kernel pointers */

static xpack_writer* writer;
static struct xnn_weights_cache_provider* provider;
static const xpack_family fc = {XPACK_OP_FULLY_CONNECTED, xnn_datatype_fp32, xnn_datatype_fp32, xnn_datatype_fp32,
                                xnn_datatype_fp32, 0, 0};

static void begin(int d) {
  EXPECT(xpack_writer_begin_delegate(writer, (uint32_t)d, NULL) == XPACK_OK);
  xpack_error err;
  for (int i = 0; i < MAX_WEIGHTS && script[d][i].name; i++) {
    EXPECT(xpack_writer_bind(writer, raw[d][i], script[d][i].name, strlen(script[d][i].name), NULL) == XPACK_OK);
    EXPECT(xpack_writer_bind_family(writer, raw[d][i], &fc, &err) == XPACK_OK);
  }
}

/* Packs weight i of delegate d as XNNPACK does (look up, miss, reserve, pack, insert); returns the answer. */
static size_t pack(int d, int i) {
  struct xnn_weights_cache_look_up_key key = {.seed = 1, .kernel = raw[d][i], .bias = NULL};
  size_t answer = provider->look_up(provider->context, &key);
  EXPECT(answer == SIZE_MAX);
  unsigned char* block = provider->reserve_space(provider->context, script[d][i].size);
  EXPECT(block != NULL);
  if (block == NULL) return SIZE_MAX;
  memset(block, script[d][i].fill, script[d][i].size);
  answer = provider->look_up_or_insert(provider->context, &key, block, script[d][i].size);
  EXPECT(answer != SIZE_MAX);
  return answer;
}

static void pack_range(int d, int from, int to) {
  for (int i = from; i < to && i < MAX_WEIGHTS && script[d][i].name; i++) pack(d, i);
}

static void whole_delegate(int d, int end) {
  begin(d);
  pack_range(d, 0, MAX_WEIGHTS);
  if (end) EXPECT(xpack_writer_end_delegate(writer, NULL) == XPACK_OK);
}

static void start(const char* path) {
  xpack_error err;
  EXPECT(xpack_writer_create(path, NULL, &writer, &err) == XPACK_OK);
  provider = xpack_writer_provider(writer);
}

static void finish(void) {
  xpack_error err;
  xpack_status st = xpack_writer_finish(writer, &err);
  if (st != XPACK_OK) fprintf(stderr, "writer_layout: finish: %s\n", err.message);
  EXPECT(st == XPACK_OK);
}

/* Runs fn(arg) on a thread of its own (a session of its own in the writer) and waits for it. */
typedef struct job {
  void (*fn)(int);
  int arg;
} job;
static void* run_job(void* p) {
  job* j = p;
  j->fn(j->arg);
  return NULL;
}
static void on_thread(void (*fn)(int), int arg) {
  job j = {fn, arg};
  pthread_t t;
  if (pthread_create(&t, NULL, run_job, &j) != 0) {
    EXPECT(!"pthread_create");
    return;
  }
  pthread_join(t, NULL);
}

static void whole_and_end(int d) { whole_delegate(d, 1); }
static void whole_no_end(int d) { whole_delegate(d, 0); }
static void d1_then_d2(int unused) {
  (void)unused;
  whole_delegate(1, 1);
  whole_delegate(2, 1);
}

/* D1's first weight, mapped through offset_to_addr while it waits in the spool. */
static const unsigned char* mapped_d1a;
static void d1_mapped(int unused) {
  (void)unused;
  begin(1);
  size_t answer = pack(1, 0);
  mapped_d1a = provider->offset_to_addr(provider->context, answer);
  EXPECT(mapped_d1a != NULL && mapped_d1a[0] == 0x20 && mapped_d1a[4999] == 0x20);
  pack_range(1, 1, MAX_WEIGHTS);
  EXPECT(xpack_writer_end_delegate(writer, NULL) == XPACK_OK);
}

static int same_file(const char* a, const char* b) {
  FILE* fa = fopen(a, "rb");
  FILE* fb = fopen(b, "rb");
  int same = fa != NULL && fb != NULL;
  while (same) {
    int ca = fgetc(fa), cb = fgetc(fb);
    same = ca == cb;
    if (ca == EOF) break;
  }
  if (fa) fclose(fa);
  if (fb) fclose(fb);
  return same;
}

int main(void) {
  if (xnn_initialize(NULL) != xnn_status_success) return 1;
  char dir[] = "/tmp/xpack-layout-XXXXXX";
  if (mkdtemp(dir) == NULL) return 1;
  char serial[256], path[256];
  snprintf(serial, sizeof serial, "%s/serial.xpc", dir);
  snprintf(path, sizeof path, "%s/parallel.xpc", dir);

  start(serial);
  for (int d = 0; d < DELEGATES; d++) whole_delegate(d, 1);
  finish();

  /* Later delegates end first: D1 and D2 spooled while D0 runs, moved in when D0 ends. */
  start(path);
  begin(0);
  on_thread(d1_then_d2, 0);
  pack_range(0, 0, MAX_WEIGHTS);
  EXPECT(xpack_writer_end_delegate(writer, NULL) == XPACK_OK);
  on_thread(whole_and_end, 3);
  finish();
  EXPECT(same_file(serial, path));

  /* Interleaved: D0 stores, D1 runs whole, D0 stores again; D3 ends before D2 begins. */
  start(path);
  begin(0);
  pack_range(0, 0, 1);
  on_thread(whole_and_end, 1);
  pack_range(0, 1, MAX_WEIGHTS);
  on_thread(whole_and_end, 3);
  whole_delegate(2, 1); /* beginning D2 ended D0 */
  finish();
  EXPECT(same_file(serial, path));

  /* A region mapped while it waits in the spool still reads its bytes after it was moved in. */
  start(path);
  begin(0);
  on_thread(d1_mapped, 0);
  pack_range(0, 0, MAX_WEIGHTS);
  EXPECT(xpack_writer_end_delegate(writer, NULL) == XPACK_OK);
  EXPECT(mapped_d1a != NULL && mapped_d1a[0] == 0x20 && mapped_d1a[4999] == 0x20);
  on_thread(whole_and_end, 2);
  on_thread(whole_and_end, 3);
  finish();
  EXPECT(same_file(serial, path));

  /* D3 stores the bytes D1 then needs: in a serial run they sit where D1 is, so the end re-orders. */
  start(path);
  begin(0);
  on_thread(whole_and_end, 3);
  on_thread(whole_and_end, 2);
  on_thread(whole_and_end, 1);
  pack_range(0, 0, MAX_WEIGHTS);
  finish();
  EXPECT(same_file(serial, path));

  /* Nobody ends a delegate and threads exit in them: finish brings everything in. */
  start(path);
  begin(0);
  on_thread(whole_no_end, 2);
  on_thread(whole_no_end, 1);
  on_thread(whole_no_end, 3);
  pack_range(0, 0, MAX_WEIGHTS);
  finish();
  EXPECT(same_file(serial, path));

  unlink(serial);
  unlink(path);
  rmdir(dir);
  printf("writer_layout: %d failure(s)\n", failures);
  return failures ? 1 : 0;
}
