#include "xpack_status.h"

const char* xpack_status_name(xpack_status status) {
  switch (status) {
    case XPACK_OK: return "ok";
    case XPACK_ERR_IO: return "io";
    case XPACK_ERR_NOT_XPACK: return "not_xpack";
    case XPACK_ERR_VERSION: return "version";
    case XPACK_ERR_TRUNCATED: return "truncated";
    case XPACK_ERR_CORRUPT: return "corrupt";
    case XPACK_ERR_INCOMPATIBLE: return "incompatible";
    case XPACK_ERR_TRANSPORT: return "transport";
    case XPACK_ERR_NOMEM: return "nomem";
    case XPACK_ERR_ARG: return "arg";
    case XPACK_ERR_XNNPACK: return "xnnpack";
    case XPACK_ERR_BAD_INPUT: return "bad_input";
    case XPACK_ERR_UNSUPPORTED: return "unsupported";
    case XPACK_ERR_MISMATCH: return "mismatch";
  }
  return "unknown";
}
