/*
 * The app half of the cmake_pipeline example: at start-up, open the cache that the build packed from the
 * model (xpack_add_cache in CMakeLists.txt) and check that it was packed from this very program. It links
 * the loader only (xpack::loader, or pkg-config xpack-loader): no zstd, no ExecuTorch readers.
 *
 *   model_app [MODEL.pte CACHE.xpc]    without arguments: the paths the build used (compiled in)
 *
 * Exit status 0 when the cache would be served for this program, 1 when not (the app would still run:
 * XNNPACK packs what the cache cannot give), 2 on a usage error.
 * A real app now hands xpack_cache_provider(cache) to XNNPACK; for ExecuTorch programs every weight is bound
 * to its named key first (docs/INTEGRATION.md).
 */
#include <stdio.h>
#include <stdlib.h>

#include "xpack_loader.h"

/* The whole file in memory (a real app has its program loaded already). NULL on failure, with a message. */
static void* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  void* bytes = NULL;
  long n = -1;
  if (f != NULL && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
    bytes = malloc(n > 0 ? (size_t)n : 1);
    if (bytes != NULL && fread(bytes, 1, (size_t)n, f) != (size_t)n) {
      free(bytes);
      bytes = NULL;
    }
  }
  if (f != NULL) fclose(f);
  if (bytes == NULL) fprintf(stderr, "%s: cannot read the program\n", path);
  *size = (size_t)n;
  return bytes;
}

int main(int argc, char** argv) {
#if defined(MODEL_APP_MODEL) && defined(MODEL_APP_CACHE)
  const char* model_path = MODEL_APP_MODEL;
  const char* cache_path = MODEL_APP_CACHE;
#else
  const char* model_path = NULL;
  const char* cache_path = NULL;
#endif
  if (argc == 3) {
    model_path = argv[1];
    cache_path = argv[2];
  }
  if ((argc != 1 && argc != 3) || model_path == NULL) {
    fprintf(stderr, "usage: model_app MODEL.pte CACHE.xpc\n");
    return 2;
  }

  xpack_cache* cache = NULL;
  xpack_error err;
  if (xpack_cache_open(cache_path, 0, &cache, &err) != XPACK_OK) {
    fprintf(stderr, "cache not used: %s\n", err.message);
    return 1;
  }
  int served = 1;
  if (xpack_cache_refusal(cache) != NULL) {
    printf("cache %s refused: %s\n", cache_path, xpack_cache_refusal(cache));
    served = 0;
  }
  size_t size = 0;
  void* program = read_file(model_path, &size);
  if (program == NULL) {
    served = 0;
  } else if (xpack_cache_check_program(cache, program, size, &err) != XPACK_OK) {
    printf("cache %s was not packed from %s: %s\n", cache_path, model_path, err.message);
    served = 0;
  } else {
    printf("cache %s: %llu entries, %llu bytes, packed from %s\n", cache_path,
           (unsigned long long)xpack_cache_entry_count(cache), (unsigned long long)xpack_cache_file_size(cache),
           model_path);
  }
  free(program);
  xpack_cache_close(cache);
  return served ? 0 : 1;
}
