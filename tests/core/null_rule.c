/* The NULL rule of xpack_status.h, for every public function that takes a handle (issue 14: "NULL checks
 * differ between sibling functions"): with a NULL handle or a NULL required pointer a status function
 * returns XPACK_ERR_ARG (and fills err), a void function does nothing, a getter zeroes its output and
 * does nothing for a NULL output, and a function returning a pointer, a count or an index returns NULL, 0
 * or -1. A function that crashes ends the test. Getters with a NULL output are also called on a real
 * handle (a cache and a writer), since a NULL handle would hide a missing output check. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xnnpack.h>

#include "expect.h"
#include "xpack.h"
#include "xpack_et_adapter.h"
#include "xpack_executorch.h"
#include "xpack_family.h"
#include "xpack_loader.h"
#include "xpack_pipeline.h"
#include "xpack_replay.h"
#include "xpack_transport.h"

/* A status call refused as a caller error, with a message; `call` passes the macro's xpack_error, e_. */
#define EXPECT_ARG(call)                                                                            \
  do {                                                                                              \
    xpack_error e_;                                                                                 \
    memset(&e_, 0, sizeof e_);                                                                      \
    const xpack_status st_ = (call);                                                                \
    EXPECT_MSG(st_ == XPACK_ERR_ARG && e_.status == XPACK_ERR_ARG && e_.message[0] != 0,            \
               "%s: status %s, err %s \"%s\"", #call, xpack_status_name(st_), xpack_status_name(e_.status), \
               e_.message);                                                                         \
  } while (0)

/* Whether n bytes at p are all zero. */
static int zeroed(const void* p, size_t n) {
  const unsigned char* b = p;
  for (size_t i = 0; i < n; i++) {
    if (b[i] != 0) return 0;
  }
  return 1;
}

/* An output filled with 0xA5, for checking that a getter zeroes it. */
#define POISONED(type, name) \
  type name;                 \
  memset(&name, 0xA5, sizeof name)

static void writer_functions(const char* folder) {
  static float raw[4];
  const xpack_family family = {XPACK_OP_FULLY_CONNECTED, xnn_datatype_fp32, xnn_datatype_fp32, xnn_datatype_fp32,
                               xnn_datatype_fp32, 0, 0};
  xpack_writer* w = NULL;
  EXPECT_ARG(xpack_writer_create(NULL, NULL, &w, &e_));
  EXPECT_ARG(xpack_writer_create("x.xpc", NULL, NULL, &e_));
  EXPECT_ARG(xpack_writer_create_unnamed(folder, NULL, NULL, &e_));
  EXPECT_ARG(xpack_writer_bind(NULL, raw, "a", 1, &e_));
  EXPECT_ARG(xpack_writer_bind_family(NULL, raw, &family, &e_));
  EXPECT_ARG(xpack_writer_begin_delegate(NULL, 0, &e_));
  EXPECT_ARG(xpack_writer_end_delegate(NULL, &e_));
  EXPECT_ARG(xpack_writer_add_input(NULL, "m.pte", XPACK_INPUT_PTE, 0, 0, 0, 0, &e_));
  EXPECT_ARG(xpack_writer_add_info(NULL, "k", "v", &e_));
  EXPECT_ARG(xpack_writer_check(NULL, &e_));
  EXPECT_ARG(xpack_writer_finish(NULL, &e_));
  int fd = 7;
  EXPECT_ARG(xpack_writer_finish_fd(NULL, &fd, &e_));
  EXPECT(xpack_writer_provider(NULL) == NULL);
  POISONED(xpack_writer_stats, stats);
  xpack_writer_stats_get(NULL, &stats);
  EXPECT(zeroed(&stats, sizeof stats));
  xpack_writer_stats_get(NULL, NULL);
  xpack_writer_unbind_all(NULL);
  xpack_writer_abort(NULL);

  /* A real writer: NULL required pointers. */
  char path[4096];
  snprintf(path, sizeof path, "%s/null_rule.xpc", folder);
  EXPECT(xpack_writer_create(path, NULL, &w, NULL) == XPACK_OK && w != NULL);
  EXPECT_ARG(xpack_writer_bind(w, NULL, "a", 1, &e_));
  EXPECT_ARG(xpack_writer_bind(w, raw, NULL, 1, &e_));
  EXPECT_ARG(xpack_writer_bind(w, raw, "a\0b", 3, &e_)); /* a zero byte inside: no cache string holds one */
  EXPECT_ARG(xpack_writer_bind_family(w, NULL, &family, &e_));
  EXPECT_ARG(xpack_writer_bind_family(w, raw, NULL, &e_));
  EXPECT_ARG(xpack_writer_add_input(w, NULL, XPACK_INPUT_PTE, 0, 0, 0, 0, &e_));
  EXPECT_ARG(xpack_writer_add_info(w, NULL, "v", &e_));
  EXPECT_ARG(xpack_writer_add_info(w, "k", NULL, &e_));
  xpack_writer_stats_get(w, NULL);
  xpack_writer_abort(w);
  EXPECT(access(path, F_OK) != 0);
}

static void count_problem(void* context, const char* where, const char* what) {
  (void)where, (void)what;
  ++*(int*)context;
}

static void file_functions(void) {
  /* A file that cannot be read has no problem to report: the status says it (xpack_verify_file). */
  int reported = 0;
  uint64_t problems = 7;
  xpack_error io;
  EXPECT(xpack_verify_file("/nonexistent/x.xpc", count_problem, &reported, &problems, &io) == XPACK_ERR_IO &&
         reported == 0 && problems == 0 && io.message[0] != 0);
  xpack_file* f = NULL;
  EXPECT_ARG(xpack_file_open(NULL, &f, &e_));
  EXPECT_ARG(xpack_file_open("x.xpc", NULL, &e_));
  EXPECT_ARG(xpack_file_open_fd(0, NULL, &e_));
  xpack_file_close(NULL);
  POISONED(xpack_file_info, info);
  xpack_file_get_info(NULL, &info);
  EXPECT(zeroed(&info, sizeof info));
  xpack_file_get_info(NULL, NULL);
  POISONED(xpack_file_region, region);
  xpack_file_get_region(NULL, 0, &region);
  EXPECT(zeroed(&region, sizeof region));
  xpack_file_get_region(NULL, 0, NULL);
  EXPECT(xpack_file_region_bytes(NULL, 0) == NULL);
  POISONED(xpack_file_entry, entry);
  xpack_file_get_entry(NULL, 0, &entry);
  EXPECT(zeroed(&entry, sizeof entry));
  xpack_file_get_entry(NULL, 0, NULL);
  EXPECT(!xpack_file_entry_servable(NULL, 0));
  EXPECT(xpack_file_find(NULL, 0, "k", NULL) == -1);
  POISONED(xpack_file_family, family);
  xpack_file_get_family(NULL, 0, &family);
  EXPECT(zeroed(&family, sizeof family));
  xpack_file_get_family(NULL, 0, NULL);
  POISONED(xpack_file_input, input);
  xpack_file_get_input(NULL, 0, &input);
  EXPECT(zeroed(&input, sizeof input));
  xpack_file_get_input(NULL, 0, NULL);
  const char* key = "x";
  const char* value = "y";
  xpack_file_get_info_pair(NULL, 0, &key, &value);
  EXPECT(key == NULL && value == NULL);
  xpack_file_get_info_pair(NULL, 0, NULL, NULL);
  EXPECT_ARG(xpack_verify_file(NULL, NULL, NULL, NULL, &e_));
  EXPECT_ARG(xpack_export_executorch(NULL, "out.bin", NULL, NULL, NULL, &e_));
  EXPECT_ARG(xpack_export_executorch("in.xpc", NULL, NULL, NULL, NULL, &e_));
  EXPECT_ARG(xpack_compress_file(NULL, "out.xpc", XPACK_ZSTD_LEVEL_DEFAULT, NULL, &e_));
  EXPECT_ARG(xpack_compress_file("in.xpc", NULL, XPACK_ZSTD_LEVEL_DEFAULT, NULL, &e_));
  EXPECT_ARG(xpack_inflate_file(NULL, "out.xpc", NULL, &e_));
  EXPECT_ARG(xpack_inflate_file("in.xpc", NULL, NULL, &e_));
}

static void executorch_functions(void) {
  xpack_et_program* program = NULL;
  EXPECT_ARG(xpack_et_program_open(NULL, &program, &e_));
  EXPECT_ARG(xpack_et_program_open("m.pte", NULL, &e_));
  EXPECT_ARG(xpack_et_program_open_flags(NULL, 0, &program, &e_));
  EXPECT_ARG(xpack_et_program_open_memory(NULL, 8, "m", &program, &e_));
  EXPECT_ARG(xpack_et_program_open_memory("12345678", 8, "m", NULL, &e_));
  xpack_et_program_read_weights_ahead(NULL);
  xpack_et_program_close(NULL);
  EXPECT(xpack_et_program_get_info(NULL) == NULL);
  size_t size = 5;
  EXPECT(xpack_et_program_bytes(NULL, &size) == NULL && size == 0);
  EXPECT(xpack_et_program_bytes(NULL, NULL) == NULL);
  EXPECT(xpack_et_program_find_named(NULL, "k", 1) == NULL);
  const uint8_t* data = (const uint8_t*)1;
  EXPECT_ARG(xpack_et_program_legacy_constant(NULL, 0, &data, &size, &e_));

  xpack_et_ptd* ptd = NULL;
  EXPECT_ARG(xpack_et_ptd_open(NULL, &ptd, &e_));
  EXPECT_ARG(xpack_et_ptd_open("w.ptd", NULL, &e_));
  EXPECT_ARG(xpack_et_ptd_open_flags(NULL, 0, &ptd, &e_));
  EXPECT_ARG(xpack_et_ptd_open_memory(NULL, 8, "w", &ptd, &e_));
  EXPECT_ARG(xpack_et_ptd_open_memory("12345678", 8, "w", NULL, &e_));
  xpack_et_ptd_read_weights_ahead(NULL);
  xpack_et_ptd_close(NULL);
  EXPECT(xpack_et_ptd_get_info(NULL) == NULL);
  size = 5;
  EXPECT(xpack_et_ptd_bytes(NULL, &size) == NULL && size == 0);
  EXPECT(xpack_et_ptd_find(NULL, "k", 1) == NULL);

  xpack_et_xnn_graph* graph = NULL;
  EXPECT_ARG(xpack_et_xnn_graph_parse(NULL, 64, "g", &graph, &e_));
  EXPECT_ARG(xpack_et_xnn_graph_parse("12345678", 8, "g", NULL, &e_));
  EXPECT_ARG(xpack_et_xnn_graph_open(NULL, 0, 0, &graph, &e_));
  xpack_et_xnn_graph_free(NULL);
  EXPECT(xpack_et_xnn_graph_find_value(NULL, 0) == NULL);
  xpack_et_constant constant;
  EXPECT_ARG(xpack_et_xnn_resolve_constant(NULL, 1, NULL, &constant, &e_));
  char identity[XPACK_ET_IDENTITY_MAX];
  size_t identity_len = 0;
  EXPECT_ARG(xpack_et_constant_identity((const uint8_t*)"abcd", 4, NULL, 0, NULL, sizeof identity, &identity_len, &e_));

  xpack_et_summary* summary = NULL;
  EXPECT_ARG(xpack_et_summarize(NULL, NULL, &summary, &e_));
  xpack_et_summary_free(NULL);
  xpack_et_delegate_summary d;
  EXPECT_ARG(xpack_et_summarize_graph(NULL, NULL, &d, &e_));
  xpack_et_delegate_summary_clear(NULL);
  EXPECT_ARG(xpack_et_summary_print(NULL, NULL, false, stdout, &e_));
}

static void loader_functions(const char* cache_path) {
  static float raw[4];
  xpack_cache* c = NULL;
  EXPECT_ARG(xpack_cache_open(NULL, 0, &c, &e_));
  EXPECT_ARG(xpack_cache_open(cache_path, 0, NULL, &e_));
  xpack_cache_close(NULL);
  EXPECT_ARG(xpack_cache_bind(NULL, raw, "a", 1, &e_));
  const struct xnn_weights_cache_look_up_key key = {.seed = 1, .kernel = raw, .bias = NULL};
  EXPECT_ARG(xpack_cache_bind_size(NULL, &key, 64, &e_));
  xpack_cache_unbind_all(NULL);
  xpack_cache_warm_up(NULL);
  xpack_cache_prefetch(NULL);
  EXPECT(xpack_cache_provider(NULL) == NULL);
  EXPECT(xpack_cache_refusal(NULL) == NULL);
  POISONED(xpack_stats, stats);
  xpack_cache_stats(NULL, &stats);
  EXPECT(zeroed(&stats, sizeof stats));
  xpack_cache_stats(NULL, NULL);
  EXPECT_ARG(xpack_cache_check_program(NULL, "12345678", 8, &e_));
  EXPECT(xpack_cache_family_count(NULL) == 0);
  xpack_cache_family_info family;
  EXPECT_ARG(xpack_cache_family(NULL, 0, &family, &e_));
  EXPECT(xpack_cache_entry_count(NULL) == 0);
  EXPECT(xpack_cache_file_size(NULL) == 0);

  /* A real cache: NULL required pointers. */
  EXPECT(xpack_cache_open(cache_path, 0, &c, NULL) == XPACK_OK && c != NULL);
  EXPECT_ARG(xpack_cache_bind(c, NULL, "a", 1, &e_));
  EXPECT_ARG(xpack_cache_bind(c, raw, NULL, 1, &e_));
  EXPECT_ARG(xpack_cache_bind(c, raw, "a\0b", 3, &e_));
  EXPECT_ARG(xpack_cache_bind_size(c, NULL, 64, &e_));
  EXPECT_ARG(xpack_cache_check_program(c, NULL, 8, &e_));
  EXPECT_ARG(xpack_cache_family(c, 0, NULL, &e_));
  xpack_cache_stats(c, NULL);
  xpack_cache_close(c);

  xpack_family f;
  char name[256];
  size_t len = 0;
  EXPECT_ARG(xpack_family_format(NULL, name, sizeof name, &len, &e_));
  EXPECT_ARG(xpack_family_parse(NULL, 4, &f, &e_));
  EXPECT_ARG(xpack_family_parse("name", 4, NULL, &e_));
}

/* Lines of this process's mappings that name path: the cache's mapping while it is open. */
static int mappings_of(const char* path) {
  FILE* maps = fopen("/proc/self/maps", "r");
  if (maps == NULL) return -1;
  char line[8192];
  int n = 0;
  while (fgets(line, sizeof line, maps)) n += strstr(line, path) != NULL;
  fclose(maps);
  return n;
}

/* The adapter owns a cache handed to attach_cache, also when the call is refused for its other arguments. */
static void adapter_functions(const char* cache_path) {
  static const uint8_t pte[16];
  EXPECT_ARG(xpack_et_adapter_attach_cache(NULL, pte, sizeof pte, NULL, NULL, 0, &e_));
  xpack_cache* c = NULL;
  EXPECT(xpack_cache_open(cache_path, 0, &c, NULL) == XPACK_OK && mappings_of(cache_path) > 0);
  EXPECT_ARG(xpack_et_adapter_attach_cache(c, NULL, 0, NULL, NULL, 0, &e_));
  EXPECT_MSG(mappings_of(cache_path) == 0, "the refused attach left the cache open");
  EXPECT(xpack_cache_open(cache_path, 0, &c, NULL) == XPACK_OK);
  EXPECT_ARG(xpack_et_adapter_attach_cache(c, pte, sizeof pte, NULL, NULL, 1, &e_));
  EXPECT_MSG(mappings_of(cache_path) == 0, "the refused attach left the cache open");
  EXPECT(xpack_et_adapter_cache() == NULL && xpack_et_adapter_provider() == NULL);
}

static void replay_and_pipeline_functions(const char* folder) {
  xpack_replay_subgraph replay;
  EXPECT_ARG(xpack_replay_define(NULL, NULL, NULL, NULL, &replay, &e_));
  EXPECT_ARG(xpack_replay_check_externals(NULL, NULL, &e_));
  EXPECT_ARG(xpack_replay_size_weights(NULL, NULL, xpack_replay_size_to_cache, NULL, &e_));
  EXPECT_ARG(xpack_replay_size_weights_for_cache(NULL, NULL, NULL, &e_));
  static float raw[4];
  const struct xnn_weights_cache_look_up_key key = {.seed = 1, .kernel = raw, .bias = NULL};
  xpack_replay_bind_to_cache(NULL, raw, "a", 1); /* the cache's NULL rule: nothing happens */
  xpack_replay_size_to_cache(NULL, &key, 64);
  xpack_replay_drop_definition(NULL);
  xpack_replay_release(NULL);

  const xpack_model_input input = {.path = "m.pte", .kind = XPACK_MODEL_PROGRAM};
  xpack_model_set set;
  xpack_model_set_init(&set, 0);
  EXPECT_ARG(xpack_model_set_add(NULL, &input, NULL, NULL, &e_));
  EXPECT_ARG(xpack_model_set_add(&set, NULL, NULL, NULL, &e_));
  xpack_model_set_read_weights_ahead(NULL);
  xpack_model_set_close(NULL);
  xpack_model_set_close(&set);
  xpack_delegate_ref ref;
  memset(&ref, 0, sizeof ref);
  const xpack_bind_target none = {XPACK_BIND_NONE, NULL, NULL, NULL, NULL};
  xpack_run_result result;
  EXPECT_ARG(xpack_run_delegate(NULL, &ref, &none, false, &result, &e_));
  xpack_model_set_init(&set, 0);
  ref.program = 1; /* the set holds no program */
  EXPECT_ARG(xpack_run_delegate(&set, &ref, &none, false, &result, &e_));
  xpack_model_set_close(&set);
  EXPECT(xpack_for_each_delegate(NULL, NULL, NULL, NULL) == 0);
  EXPECT(xpack_model_base_name(NULL) == NULL);
  const xpack_et_named_sources no_sources = xpack_model_set_sources(NULL, 0);
  EXPECT(no_sources.program == NULL && no_sources.ptd_count == 0);
  ref.program = 0;
  EXPECT_ARG(xpack_execute_runtime(NULL, NULL, &ref, &result, &e_));
  xpack_pack_report report;
  char out[4096];
  snprintf(out, sizeof out, "%s/pack.xpc", folder);
  const xpack_pack_options options = {.output_path = out};
  EXPECT_ARG(xpack_pack_set(NULL, &options, &report, &e_));
  EXPECT_ARG(xpack_pack_files(NULL, 1, &options, &report, &e_));
  EXPECT_ARG(xpack_pack_into_writer(NULL, NULL, &options, &report, &e_));
}

/* A small cache with one entry, for the calls on a real handle. */
static int make_cache(const char* path) {
  static const float kernel[16];
  xpack_writer* w = NULL;
  if (xpack_writer_create(path, NULL, &w, NULL) != XPACK_OK) return -1;
  const xpack_family family = {XPACK_OP_FULLY_CONNECTED, xnn_datatype_fp32, xnn_datatype_fp32, xnn_datatype_fp32,
                               xnn_datatype_fp32, 0, 0};
  if (xpack_writer_bind(w, kernel, "k", 1, NULL) != XPACK_OK ||
      xpack_writer_bind_family(w, kernel, &family, NULL) != XPACK_OK) {
    xpack_writer_abort(w);
    return -1;
  }
  struct xnn_weights_cache_provider* p = xpack_writer_provider(w);
  struct xnn_weights_cache_look_up_key key = {.seed = 1, .kernel = kernel, .bias = NULL};
  void* space = p->reserve_space(p->context, 64);
  if (space == NULL) {
    xpack_writer_abort(w);
    return -1;
  }
  memset(space, 1, 64);
  if (p->look_up_or_insert(p->context, &key, space, 64) == SIZE_MAX) {
    xpack_writer_abort(w);
    return -1;
  }
  return xpack_writer_finish(w, NULL) == XPACK_OK ? 0 : -1;
}

int main(void) {
  if (xnn_initialize(NULL) != xnn_status_success) return 1;
  char folder[] = "/tmp/xpack-null-rule-XXXXXX";
  if (mkdtemp(folder) == NULL) return 1;
  char cache_path[4096];
  snprintf(cache_path, sizeof cache_path, "%s/one.xpc", folder);
  EXPECT(make_cache(cache_path) == 0);
  writer_functions(folder);
  file_functions();
  executorch_functions();
  loader_functions(cache_path);
  adapter_functions(cache_path);
  replay_and_pipeline_functions(folder);
  unlink(cache_path);
  EXPECT(rmdir(folder) == 0);
  printf("null_rule: %s\n", failures ? "FAILED" : "ok");
  return failures != 0;
}
