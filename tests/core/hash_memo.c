/* The content-hash memo of an open program or .ptd (libpack/et/hash_memo.c): every answer is XXH3-128 of the
 * bytes asked about, computed here independently, for thousands of constants (the table grows several times),
 * for the same address with other sizes, for an empty constant, and with four threads asking about the same
 * constants at once, each constant twice. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "et/hash_memo.h"
#include "expect.h"

#define CONSTANTS 3000
#define SLICE 37

static uint8_t bytes[CONSTANTS * SLICE + 4096];
static xp_et_hash_memo memo;

static int same(XXH128_hash_t a, XXH128_hash_t b) { return a.low64 == b.low64 && a.high64 == b.high64; }

static int ask_all(void) {
  int wrong = 0;
  for (int round = 0; round < 2; round++) {
    for (size_t i = 0; i < CONSTANTS; i++) {
      const uint8_t* p = bytes + i * SLICE;
      const size_t n = SLICE + i % 7; /* neighbours overlap: only the address and size tell them apart */
      if (!same(xp_et_memo_hash(&memo, p, n), XXH3_128bits(p, n))) wrong++;
    }
  }
  return wrong;
}

static void* thread_main(void* arg) {
  *(int*)arg = ask_all();
  return NULL;
}

int main(void) {
  for (size_t i = 0; i < sizeof bytes; i++) bytes[i] = (uint8_t)(i * 131 + (i >> 9));
  xp_et_memo_init(&memo);
  EXPECT_MSG(ask_all() == 0, "one thread: wrong hashes");
  EXPECT(same(xp_et_memo_hash(&memo, bytes, 1), XXH3_128bits(bytes, 1)));
  EXPECT(same(xp_et_memo_hash(&memo, bytes, 4096), XXH3_128bits(bytes, 4096)));
  EXPECT(same(xp_et_memo_hash(&memo, bytes, 0), XXH3_128bits(bytes, 0)));
  EXPECT(same(xp_et_memo_hash(&memo, NULL, 0), XXH3_128bits(bytes, 0)));
  xp_et_memo_free(&memo);

  xp_et_memo_init(&memo);
  pthread_t threads[4];
  int wrong[4] = {0};
  for (int t = 0; t < 4; t++) EXPECT(pthread_create(&threads[t], NULL, thread_main, &wrong[t]) == 0);
  for (int t = 0; t < 4; t++) {
    pthread_join(threads[t], NULL);
    EXPECT_MSG(wrong[t] == 0, "thread %d: %d wrong hashes", t, wrong[t]);
  }
  EXPECT_MSG(memo.count == CONSTANTS, "%zu constants remembered, %d asked about", memo.count, CONSTANTS);
  xp_et_memo_free(&memo);
  xp_et_hash_memo zeroed;
  memset(&zeroed, 0, sizeof zeroed);
  xp_et_memo_free(&zeroed); /* a program whose open failed before its memo was made */
  return failures != 0;
}
