/* xpack_pack_files in a process with a cache attached to the ExecuTorch adapter (a pipeline that packs in the app's
 * own process, or a test harness that serves one program and packs another): pack's runtimes are xpack's own, and
 * the adapter's wrapper of xnn_create_runtime_v4 must pass the writer's provider through. It once gave them the
 * attached cache, and the pack wrote nothing ("no weights that XNNPACK packs"; found by a review).
 *   adapter_pack PTE CACHE OUT: attaches CACHE for PTE, packs PTE into OUT, detaches; fails when nothing was
 *   written or the attached cache was asked anything. adapter_pack.sh compares OUT with the CLI's pack of PTE.
 * Linked with -Wl,--wrap=xnn_create_runtime_v4 (the adapter's wrapper). */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xpack_et_adapter.h"
#include "xpack_pipeline.h"

static int fail(const char* what, const char* message) {
  fprintf(stderr, "adapter_pack: %s: %s\n", what, message);
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 4) return fail("usage", "adapter_pack PTE CACHE OUT");
  if (xnn_initialize(NULL) != xnn_status_success) return fail("xnn_initialize", "failed");
  const int fd = open(argv[1], O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) return fail(argv[1], "cannot open");
  const void* pte = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (pte == MAP_FAILED) return fail(argv[1], "cannot map");
  xpack_error err;
  if (xpack_et_adapter_attach(argv[2], 0, pte, (size_t)st.st_size, NULL, NULL, 0, &err) != XPACK_OK) {
    return fail("attach", err.message);
  }
  const xpack_model_input input = {.path = argv[1], .kind = XPACK_MODEL_PROGRAM};
  const xpack_pack_options options = {.output_path = argv[3]};
  xpack_pack_report report;
  const xpack_status packed = xpack_pack_files(&input, 1, &options, &report, &err);
  xpack_stats attached;
  xpack_cache_stats(xpack_et_adapter_cache(), &attached);
  xpack_et_adapter_detach();
  if (packed != XPACK_OK) return fail("pack while attached", err.message);
  if (report.result != XPACK_PACK_WRITTEN) return fail("pack while attached wrote nothing", report.nothing_to_pack);
  printf("adapter_pack: %llu entries packed while attached; the attached cache was asked %llu look-ups\n",
         (unsigned long long)report.stats.entries, (unsigned long long)attached.lookups);
  return attached.lookups == 0 ? 0 : fail("pack while attached", "its runtimes were given the attached cache");
}
