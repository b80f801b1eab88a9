/* The writer's packing families: which family each kernel pointer belongs to, and the FAMI records
 * (name and this process's probe) of the families that recorded entries use. */
#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "loader/probe.h"
#include "writer/writer_internal.h"
#include "xpc_format.h"

/* Markers bound instead of a name: the pointer's entries are not recorded (counted as no_family). */
#define WR_NO_FAMILY_CONFLICT "!two families"
#define WR_NO_FAMILY_UNPROBEABLE "!unprobeable"

/* Marks kernel as recording nothing. A failed mark could leave an earlier family bound, so the failure is the
 * caller's: NOMEM rather than status. */
static xpack_status exclude(xp_writer_session* s, const void* kernel, const char* marker, xpack_status status) {
  return xp_bindings_set(&s->family_bindings, kernel, marker, strlen(marker)) == XPACK_OK ? status : XPACK_ERR_NOMEM;
}

xpack_status xpack_writer_bind_family(xpack_writer* w, const void* kernel, const xpack_family* family,
                                      xpack_error* err) {
  if (w == NULL || kernel == NULL || family == NULL) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_writer_bind_family: NULL argument");
  }
  xp_writer_session* s = xp_writer_session_get(w);
  if (s == NULL) return xp_fail(err, XPACK_ERR_NOMEM, "out of memory");
  char name[XPACK_FAMILY_NAME_MAX];
  size_t len = 0;
  xpack_status st = xpack_family_format(family, name, sizeof name, &len, NULL);
  if (st == XPACK_ERR_UNSUPPORTED) {
    st = exclude(s, kernel, WR_NO_FAMILY_UNPROBEABLE, st);
    if (st == XPACK_ERR_NOMEM) return xp_fail(err, st, "out of memory");
    return xp_fail(err, st, "%s: not a packing family this xpack can probe; its weights are not recorded", name);
  }
  if (st != XPACK_OK) return xp_fail(err, st, "xpack_writer_bind_family: cannot name the family");
  xp_probe_result probe;
  xpack_error probe_err;
  st = xp_probe_family(name, len, &probe, &probe_err);
  if (st != XPACK_OK) {
    st = exclude(s, kernel, WR_NO_FAMILY_UNPROBEABLE, st);
    if (st == XPACK_ERR_NOMEM) return xp_fail(err, st, "out of memory");
    return xp_fail(err, st, "%s; its weights are not recorded", probe_err.message);
  }
  char bound[XPACK_FAMILY_NAME_MAX];
  size_t bound_len = xp_bindings_get(&s->family_bindings, kernel, bound, sizeof bound);
  if (bound_len != (size_t)-1 && bound[0] == '!') {
    /* Excluded before, as unprobeable or as used by two families: this family is another one all the same. */
    return xp_fail(err, XPACK_ERR_MISMATCH, "one weight is used by %s and by a family %s; its entries are not recorded",
                   name, strcmp(bound, WR_NO_FAMILY_CONFLICT) == 0 ? "two others" : "xpack cannot probe");
  }
  if (bound_len != (size_t)-1 && !(bound_len == len && memcmp(bound, name, len) == 0)) {
    st = exclude(s, kernel, WR_NO_FAMILY_CONFLICT, XPACK_ERR_MISMATCH);
    if (st == XPACK_ERR_NOMEM) return xp_fail(err, st, "out of memory");
    return xp_fail(err, st, "one weight is used by two packing families (%.*s and %s); its entries are not recorded",
                   (int)bound_len, bound, name);
  }
  st = xp_bindings_set(&s->family_bindings, kernel, name, len);
  return st == XPACK_OK ? XPACK_OK : xp_fail(err, st, "out of memory binding the family %s", name);
}

uint32_t xp_writer_entry_family(xpack_writer* w, xp_writer_session* session, const void* kernel) {
  char name[XPACK_FAMILY_NAME_MAX];
  if (session == NULL) return XPC_NONE;
  size_t len = xp_bindings_get(&session->family_bindings, kernel, name, sizeof name);
  if (len == (size_t)-1 || len >= sizeof name || name[0] == '!') return XPC_NONE;
  uint32_t s = xp_writer_intern(w, name, len);
  if (s == XPC_NONE) {
    xp_writer_fail_nomem(w, "recording a packing family's name");
    return XPC_NONE;
  }
  for (size_t i = 0; i < w->family_count; i++) {
    if (w->families[i].name == s) return (uint32_t)i;
  }
  xp_probe_result probe;
  if (xp_probe_family(name, len, &probe, NULL) != XPACK_OK) return XPC_NONE; /* remembered from the bind */
  if (w->family_count >= XPC_MAX_FAMILIES) return XPC_NONE;
  if (xp_writer_reserve((void**)&w->families, &w->family_cap, w->family_count + 1, sizeof *w->families) != 0) {
    xp_writer_fail_nomem(w, "recording a packing family");
    return XPC_NONE;
  }
  w->families[w->family_count] = (xp_writer_family){s, probe.hash, probe.keys};
  return (uint32_t)w->family_count++;
}
