/* Whether an input is still the file a command first looked at: see cli_file_identity in cli_common.h. */
#include <sys/stat.h>

#include "cli_common.h"

static int take(const char* path, cli_file_identity* identity) {
  struct stat st;
  if (stat(path, &st) != 0) return 0;
  identity->device = (uint64_t)st.st_dev;
  identity->inode = (uint64_t)st.st_ino;
  identity->size = (uint64_t)st.st_size;
  identity->modified_s = (int64_t)st.st_mtim.tv_sec;
  identity->modified_ns = (int64_t)st.st_mtim.tv_nsec;
  return 1;
}

void cli_file_identity_take(const char* path, cli_file_identity* identity) {
  *identity = (cli_file_identity){0};
  identity->known = take(path, identity);
}

int cli_file_identity_still(const char* path, const cli_file_identity* identity, const char* command,
                            const char* consequence) {
  if (!identity->known) return 1;
  cli_file_identity now = {0};
  if (take(path, &now) && now.device == identity->device && now.inode == identity->inode &&
      now.size == identity->size && now.modified_s == identity->modified_s &&
      now.modified_ns == identity->modified_ns) {
    return 1;
  }
  cli_error("%s changed while %s read it (replaced or rewritten): %s; run %s again", path, command, consequence,
            command);
  return 0;
}
