/* pack-reverse OUT MODEL.pte ... [--data W.ptd ...]: xpack_pack_files with two workers taking the delegates
 * last first (XPACK_PACK_ORDER_REVERSE), so regions reach the writer out of file order and the writer's
 * re-ordering copy runs; parallel_pack.sh compares the file with `xpack pack --jobs 1`.
 * Exit 0 written or nothing to pack, 3 an input error, 4 any other error (as xpack pack). */
#include <stdio.h>
#include <string.h>

#include "xpack_pipeline.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: pack-reverse OUT MODEL.pte ... [--data W.ptd ...]\n");
    return 2;
  }
  xpack_model_input inputs[2 * XPACK_MODEL_SET_MAX_FILES];
  size_t count = 0;
  for (int i = 2; i < argc && count < sizeof inputs / sizeof inputs[0]; i++) {
    if (strcmp(argv[i], "--data") == 0 && i + 1 < argc) inputs[count++] = (xpack_model_input){.path = argv[++i], .kind = XPACK_MODEL_DATA};
    else inputs[count++] = (xpack_model_input){.path = argv[i], .kind = XPACK_MODEL_PROGRAM};
  }
  const xpack_pack_options options = {.output_path = argv[1], .jobs = 2, .order = XPACK_PACK_ORDER_REVERSE};
  xpack_pack_report report;
  xpack_error err;
  xpack_status st = xpack_pack_files(inputs, count, &options, &report, &err);
  if (st != XPACK_OK) {
    fprintf(stderr, "pack-reverse: %s\n", err.message);
    return report.failed_on_input ? 3 : 4;
  }
  if (report.result == XPACK_PACK_NOTHING) printf("nothing to pack: %s\n", report.nothing_to_pack);
  return 0;
}
