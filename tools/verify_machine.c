#include "verify_machine.h"

#include "cli_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xpack.h"

static void report_unchecked(const char* path, json* j, const xpack_error* err) {
  const char* message = err->status == XPACK_ERR_TRANSPORT
                            ? "the transport form is never served: inflate it, then verify the result on the target"
                            : err->message;
  if (j) {
    json_key(j, "machine"); json_object(j);
    json_key(j, "checked"); json_bool(j, 0);
    json_key(j, "message"); json_string(j, message);
    json_end_object(j);
  } else if (err->status == XPACK_ERR_TRANSPORT) {
    fprintf(cli_out(), "%s: %s\n", cli_name(path), cli_name(message));
  }
}

void verify_for_this_machine(const cli_cache_source* source, json* j, machine_verdict* out) {
  memset(out, 0, sizeof *out);
  const char* path = source->arg;
  xpack_cache* cache = NULL;
  xpack_file* file = NULL;
  xpack_error err = {XPACK_OK, ""};
  if (cli_cache_source_open_cache(source, 0, &cache, &err) != XPACK_OK ||
      cli_cache_source_open_file(source, &file, &err) != XPACK_OK) {
    /* Out of memory says nothing of the file: the caller fails the command rather than report a partial verdict. */
    if (err.status == XPACK_ERR_NOMEM) out->error = err;
    else report_unchecked(path, j, &err);
    xpack_file_close(file);
    xpack_cache_close(cache);
    return;
  }
  const uint32_t n = xpack_cache_family_count(cache);
  uint64_t* entries_of = calloc((size_t)n + 1, sizeof *entries_of); /* [n]: entries naming no family */
  xpack_cache_family_info* families = calloc((size_t)n + 1, sizeof *families);
  /* A family whose probe ran out of memory is refused here, and its reason says so. */
  for (uint32_t i = 0; families != NULL && entries_of != NULL && i < n; i++) {
    (void)xpack_cache_family(cache, i, &families[i], NULL);
  }
  if (families == NULL || entries_of == NULL) {
    out->error = (xpack_error){XPACK_ERR_NOMEM, ""};
    snprintf(out->error.message, sizeof out->error.message, "%s: out of memory checking it for this machine", path);
    free(families);
    free(entries_of);
    xpack_file_close(file);
    xpack_cache_close(cache);
    return;
  }
  out->checked = 1;
  xpack_file_info info;
  xpack_file_get_info(file, &info);
  out->entries = info.entry_count;
  const char* refusal = xpack_cache_refusal(cache);
  for (uint32_t i = 0; i < n; i++) {
    if (families[i].refusal != XPACK_FAMILY_SERVED) out->families_refused++;
  }
  /* Entries a served family holds that the loader's look-up refuses one by one; a file refused whole counts every
   * entry already. */
  uint64_t refused_alone = 0;
  for (uint64_t i = 0; i < info.entry_count; i++) {
    xpack_file_entry e;
    xpack_file_get_entry(file, i, &e);
    entries_of[e.family < n ? e.family : n]++;
    if (refusal == NULL && e.family < n && families[e.family].refusal == XPACK_FAMILY_SERVED &&
        !xpack_file_entry_servable(file, i)) {
      refused_alone++;
    }
  }
  const uint64_t without_family = entries_of[n];
  /* The loader's own count: the file refused whole, entries naming no family, those of refused families, and
   * those refused one by one (xpack_cache_entries_served leaves them out since 1f8a2b4). */
  out->entries_refused = info.entry_count - xpack_cache_entries_served(cache);
  if (j) {
    json_key(j, "machine"); json_object(j);
    json_key(j, "checked"); json_bool(j, 1);
    json_key(j, "file_refused"); json_string(j, refusal);
    json_key(j, "entries"); json_uint(j, info.entry_count);
    json_key(j, "entries_refused"); json_uint(j, out->entries_refused);
    json_key(j, "entries_without_family"); json_uint(j, without_family);
    json_key(j, "entries_refused_alone"); json_uint(j, refused_alone);
    json_key(j, "families"); json_array(j);
  } else if (out->entries_refused == 0) {
    fprintf(cli_out(), "%s: on this machine every entry is served\n", cli_name(path));
  } else {
    fprintf(cli_out(), "%s: on this machine %llu of %llu entries would be refused (XNNPACK packs them itself)\n", cli_name(path),
            (unsigned long long)out->entries_refused, (unsigned long long)info.entry_count);
    if (refusal) fprintf(cli_out(), "  the whole file is refused: %s\n", refusal);
    if (refused_alone) {
      fprintf(cli_out(), "  %llu entr%s of served families %s refused one by one: damaged, a key another entry has "
              "too, an identity that is no string (the problems above), or one no loader binds (empty, "
              "xpack:ambiguous, or longer than %u bytes: xpack dump marks them NOT SERVED)\n", (unsigned long long)refused_alone,
              refused_alone == 1 ? "y" : "ies", refused_alone == 1 ? "is" : "are", XPACK_IDENTITY_MAX_LEN);
    }
    if (without_family) {
      fprintf(cli_out(), "  %llu entr%s name no packing family (a format 1.0 cache: pack it again)\n",
              (unsigned long long)without_family, without_family == 1 ? "y" : "ies");
    }
  }
  for (uint32_t i = 0; i < n; i++) {
    const xpack_cache_family_info* f = &families[i];
    const int served = f->refusal == XPACK_FAMILY_SERVED;
    const uint64_t entries = entries_of[i];
    if (j) {
      json_object(j);
      json_key(j, "name"); json_string(j, f->name);
      json_key(j, "status"); json_string(j, served ? "served" : "refused");
      json_key(j, "reason"); json_string(j, served ? NULL : xpack_family_refusal_name(f->refusal));
      json_key(j, "message"); json_string(j, f->reason);
      json_key(j, "packed_probe"); json_hex64(j, f->packed_probe);
      json_key(j, "local_probe"); json_hex64(j, f->local_probe);
      json_key(j, "packed_keys"); json_hex64(j, f->packed_keys);
      json_key(j, "local_keys"); json_hex64(j, f->local_keys);
      json_key(j, "entries"); json_uint(j, entries);
      json_end_object(j);
    } else {
      fprintf(cli_out(), "  family %s: %s, %llu entr%s%s%s\n", cli_name(f->name),
              served ? "served" : xpack_family_refusal_name(f->refusal), (unsigned long long)entries,
              entries == 1 ? "y" : "ies", served ? "" : ": ", served ? "" : cli_name(f->reason));
    }
  }
  if (j) {
    json_end_array(j);
    json_end_object(j);
  }
  free(families);
  free(entries_of);
  xpack_file_close(file);
  xpack_cache_close(cache);
}
