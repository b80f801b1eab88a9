/* xpack inspect: being written. */
#include "cli_common.h"
#include "commands.h"

int cmd_inspect(int argc, char** argv) {
  cli_error("inspect: not implemented yet");
  return XPACK_EXIT_FAILED;
}
