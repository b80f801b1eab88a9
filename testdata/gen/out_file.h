/* Outputs are written to a temporary file beside the destination and renamed into place only when
 * complete, so a failed or interrupted run never leaves a partial file under the requested name. */
#ifndef XPACK_GEN_OUT_FILE_H
#define XPACK_GEN_OUT_FILE_H

#include <stdint.h>
#include <stdio.h>

typedef struct out_file {
  FILE* f;
  char* final_path;
  char* temp_path;
  uint64_t written;
  int failed;
} out_file;

int out_open(out_file* o, const char* path);
void out_write(out_file* o, const void* p, size_t n);
void out_zeros(out_file* o, uint64_t n);
/* Pads with zeros up to absolute offset `at`. */
void out_pad_to(out_file* o, uint64_t at);
/* Flushes and closes; returns 1 if everything was written. Does not rename yet. */
int out_close(out_file* o);
/* Renames a successfully closed file into place. */
int out_commit(out_file* o);
/* Removes the temporary file (after any failure). */
void out_discard(out_file* o);

#endif
