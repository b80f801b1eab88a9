/* The file-to-file frame shared by compress and inflate: map the input, check its form, convert it into a
 * safely written output file (common/safe_write.h), commit or abort. */
#include "cachefile/cache_open.h"
#include "common/error.h"
#include "common/output_check.h"
#include "common/safe_write.h"
#include "transport/transport.h"
#include "xpc_format.h"

/* The conversion of the open input `in` (named `name`) into out_path, which the caller has checked. */
static xpack_status convert_open(xp_file* in, const char* name, const char* out_path, int input_is_transport,
                                 const char* wrong_form, xp_transport_convert_fn convert, void* context,
                                 xpack_transport_stats* stats, xpack_error* err) {
  xpack_status st = XPACK_OK;
  if (((in->view.flags & XPC_FLAG_TRANSPORT) != 0) != (input_is_transport != 0)) {
    st = xp_fail(err, XPACK_ERR_ARG, "%s: %s", name, wrong_form);
  }
  xp_safe_file out;
  if (st == XPACK_OK) st = xp_safe_create(&out, out_path, err);
  if (st == XPACK_OK) {
    xp_transport_sink sink = xp_transport_safe_file_sink(&out);
    uint64_t file_size = 0;
    st = convert(context, &in->view, name, xp_file_is_mapped(in), &sink, &file_size, stats, err);
    if (st == XPACK_OK) st = xp_safe_commit(&out, file_size, err);
    else xp_safe_abort(&out);
  }
  xp_file_close(in);
  return st;
}

xpack_status xp_transport_convert_file(const char* in_path, const char* out_path, int input_is_transport,
                                       const char* wrong_form, xp_transport_convert_fn convert, void* context,
                                       xpack_transport_stats* stats, xpack_error* err) {
  xpack_status st = xp_check_output(out_path, &in_path, 1, err); /* before anything is read or written */
  if (st != XPACK_OK) return st;
  xp_file in;
  st = xp_file_open(&in, in_path, 1, err);
  if (st != XPACK_OK) return st;
  return convert_open(&in, in_path, out_path, input_is_transport, wrong_form, convert, context, stats, err);
}

xpack_status xp_transport_convert_range(int fd, uint64_t offset, uint64_t size, const char* name, const char* out_path,
                                        int input_is_transport, const char* wrong_form, xp_transport_convert_fn convert,
                                        void* context, xpack_transport_stats* stats, xpack_error* err) {
  xpack_status st = xp_check_output_not_fd(out_path, fd, name, err); /* before anything is read or written */
  if (st != XPACK_OK) return st;
  xp_file in;
  st = xp_file_open_range(&in, fd, offset, size, name, 1, err);
  if (st != XPACK_OK) return st;
  return convert_open(&in, name, out_path, input_is_transport, wrong_form, convert, context, stats, err);
}

static xpack_status write_at(void* context, const uint8_t* bytes, size_t n, uint64_t offset, xpack_error* err) {
  return xp_safe_write_at(context, bytes, n, offset, err);
}

static xpack_status room_for(void* context, uint64_t file_size, xpack_error* err) {
  return xp_safe_check_room(context, file_size, err);
}

xp_transport_sink xp_transport_safe_file_sink(xp_safe_file* f) { return (xp_transport_sink){write_at, f, room_for}; }
