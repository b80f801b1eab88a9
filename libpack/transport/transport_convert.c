/* The file-to-file frame shared by compress and inflate: map the input, check its form, convert it into an
 * atomic output file, commit or abort. */
#include "common/error.h"
#include "common/file_map.h"
#include "transport/transport.h"
#include "xpc_format.h"

xpack_status xt_convert_file(const char* in_path, const char* out_path, int input_is_transport,
                             const char* wrong_form, xt_convert_fn convert, void* context,
                             xpack_transport_stats* stats, xpack_error* err) {
  xp_file_map map;
  xpack_status st = xp_map_file(in_path, &map, err);
  if (st != XPACK_OK) return st;
  static const uint8_t kEmpty[1];
  xpc_view v;
  st = xpc_view_open(&v, map.data ? map.data : kEmpty, map.size, in_path, 1, err);
  if (st == XPACK_OK && ((v.flags & XPC_FLAG_TRANSPORT) != 0) != (input_is_transport != 0)) {
    st = xpack_fail(err, XPACK_ERR_ARG, "%s: %s", in_path, wrong_form);
  }
  xt_output out;
  if (st == XPACK_OK) st = xt_output_create(&out, out_path, err);
  if (st == XPACK_OK) {
    xt_sink sink = xt_output_sink(&out);
    uint64_t file_size = 0;
    st = convert(context, &v, in_path, map.data != NULL, &sink, &file_size, stats, err);
    if (st == XPACK_OK) st = xt_output_commit(&out, file_size, err);
    else xt_output_abort(&out);
  }
  xp_unmap_file(&map);
  return st;
}
