#include "loader/cache_families.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xnnpack.h>

#include "loader/probe.h"
#include "common/quiet_thread.h"
#include "xpc_format.h"

int xp_families_init(xp_cache_families* f, uint32_t count) {
  memset(f, 0, sizeof *f);
  if (count > 0 && (f->slots = calloc(count, sizeof *f->slots)) == NULL) return -1;
  f->count = count;
  pthread_mutex_init(&f->lock, NULL);
  return 0;
}

void xp_families_destroy(xp_cache_families* f) {
  if (f->prober_running) {
    atomic_store_explicit(&f->stop_probing, 1, memory_order_relaxed);
    pthread_join(f->prober, NULL);
  }
  free(f->slots);
  pthread_mutex_destroy(&f->lock);
  memset(f, 0, sizeof *f);
}

static void decide(xp_family_slot* slot, const xp_view* view, const char* file_refusal, uint32_t index) {
  slot->local_probe = 0;
  slot->local_keys = 0;
  if (file_refusal != NULL) {
    slot->refusal = XPACK_FAMILY_FILE_REFUSED;
    snprintf(slot->reason, sizeof slot->reason, "the whole file is refused: %s", file_refusal);
    return;
  }
  xp_family record;
  xp_view_family(view, index, &record);
  const char* name;
  uint32_t len;
  if (xp_view_string(view, record.name, &name, &len) != 0) {
    slot->refusal = XPACK_FAMILY_UNKNOWN;
    snprintf(slot->reason, sizeof slot->reason, "family record %u: name offset %u is not a string of STRS", index,
             record.name);
    return;
  }
  if (record.flags != 0) {
    slot->refusal = XPACK_FAMILY_UNKNOWN;
    snprintf(slot->reason, sizeof slot->reason, "family record %u: flags %#x that this xpack does not know", index,
             record.flags);
    return;
  }
  if (record.probe_keys == 0 && view->minor >= XPC_PROBE_KEYS_FIRST_MINOR) {
    slot->refusal = XPACK_FAMILY_UNKNOWN;
    snprintf(slot->reason, sizeof slot->reason,
             "family record %u: probe keys 0, which a writer of version 1.3 or later never records", index);
    return;
  }
  xpack_error err;
  xp_probe_result probe = {0, 0};
  xpack_status st = xp_probe_family(name, len, &probe, &err);
  slot->local_probe = probe.hash;
  slot->local_keys = probe.keys;
  if (st == XPACK_ERR_UNSUPPORTED) {
    slot->refusal = XPACK_FAMILY_UNKNOWN;
    snprintf(slot->reason, sizeof slot->reason, "not a packing family this xpack knows");
  } else if (st != XPACK_OK) {
    slot->refusal = XPACK_FAMILY_PROBE_FAILED;
    snprintf(slot->reason, sizeof slot->reason, "the probe cannot run here: %.580s", err.message);
  } else if (slot->local_probe != record.probe_hash) {
    slot->refusal = XPACK_FAMILY_PROBE_DIFFERS;
    snprintf(slot->reason, sizeof slot->reason,
             "this machine packs the family's probe differently (probe %016llx when packed, %016llx here): "
             "XNNPACK chose other kernels on this CPU",
             (unsigned long long)record.probe_hash, (unsigned long long)slot->local_probe);
  } else if (record.probe_keys != 0 && slot->local_keys != record.probe_keys) {
    /* Alike bytes under other keys: XNNPACK would ask for every weight of the family with a seed no entry has. */
    slot->refusal = XPACK_FAMILY_KEYS_DIFFER;
    snprintf(slot->reason, sizeof slot->reason,
             "this machine packs the family's probe alike but keys it with other seeds (keys %016llx when packed, "
             "%016llx here): XNNPACK chose another tiling or kernel type on this CPU, and would find no entry",
             (unsigned long long)record.probe_keys, (unsigned long long)slot->local_keys);
  } else {
    slot->refusal = XPACK_FAMILY_SERVED;
    slot->reason[0] = 0;
  }
}

xp_family_slot* xp_families_decide(xp_cache_families* f, const xp_view* view, const char* file_refusal,
                                   uint32_t index) {
  xp_family_slot* slot = &f->slots[index];
  if (atomic_load_explicit(&slot->decided, memory_order_acquire)) return slot;
  pthread_mutex_lock(&f->lock);
  if (!atomic_load_explicit(&slot->decided, memory_order_relaxed)) {
    decide(slot, view, file_refusal, index);
    atomic_store_explicit(&slot->decided, 1, memory_order_release);
  }
  pthread_mutex_unlock(&f->lock);
  return slot;
}

static void* probe_every_family(void* arg) {
  xp_cache_families* f = arg;
  /* The caller may open before initializing XNNPACK; initializing is idempotent and thread safe, and a
   * failure leaves the families to be decided on first need, inside runtime creation, as without the flag. */
  if (xnn_initialize(NULL) != xnn_status_success) return NULL;
  for (uint32_t i = 0; i < f->count && !atomic_load_explicit(&f->stop_probing, memory_order_relaxed); i++) {
    xp_families_decide(f, f->view, NULL, i);
  }
  return NULL;
}

int xp_families_probe_early(xp_cache_families* f, const xp_view* view) {
  if (f->count == 0) return 0;
  f->view = view;
  if (xp_thread_create_quiet(&f->prober, probe_every_family, f) != 0) return -1;
  f->prober_running = 1;
  return 0;
}
