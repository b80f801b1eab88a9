/* Finding the members of a zip archive: see xpack_archive.h. The layout (PKWARE's APPNOTE.TXT, 4.3): each
 * member's local header and bytes, then the central directory (a record per member), then the end record,
 * which a Zip64 archive precedes with its Zip64 end record and a locator pointing at it. Every read is bounded
 * by what the records before it proved, and every record is read with the little-endian helpers. */
#include "xpack_archive.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "common/le.h"
#include "xpc_format.h"

enum {
  LOCAL_SIGNATURE = 0x04034b50,
  CENTRAL_SIGNATURE = 0x02014b50,
  END_SIGNATURE = 0x06054b50,
  ZIP64_LOCATOR_SIGNATURE = 0x07064b50,
  ZIP64_END_SIGNATURE = 0x06064b50,
  LOCAL_SIZE = 30,
  CENTRAL_SIZE = 46,
  END_SIZE = 22,
  ZIP64_LOCATOR_SIZE = 20,
  ZIP64_END_SIZE = 56,
  MAX_COMMENT = 65535,
  ZIP64_EXTRA_ID = 0x0001,
  FLAG_ENCRYPTED = 0x0001,
  FLAG_DATA_DESCRIPTOR = 0x0008,
};
#define ZIP64_MARK32 0xffffffffu
#define ZIP64_MARK16 0xffffu
/* No app bundle's central directory comes near this (about 100 bytes per member, so 600,000 members); a larger
 * one is refused rather than read into memory and indexed. */
#define MAX_CENTRAL_BYTES ((uint64_t)64 << 20)
#define NAME_IN_MESSAGE 200 /* bytes of a member's name quoted in a message */

typedef struct archive {
  int fd;
  const char* name;
  uint64_t size;
  uint8_t* central; /* the whole central directory, read once */
  uint64_t central_offset, central_size, count;
} archive;

/* One record of the central directory, with its Zip64 values resolved. */
typedef struct central_record {
  uint64_t at; /* its offset in the archive */
  const char* name;
  uint16_t name_length, flags, method;
  uint32_t crc;
  uint64_t stored_size, size, local_offset;
} central_record;

static xpack_status read_at(const archive* a, uint64_t offset, void* out, size_t n, const char* what,
                            xpack_error* err) {
  uint8_t* p = out;
  size_t done = 0;
  while (done < n) {
    const ssize_t got = pread(a->fd, p + done, n - done, (off_t)(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      return xp_fail(err, XPACK_ERR_IO, "%s: reading %s at offset %llu: %s", a->name, what,
                     (unsigned long long)(offset + done), strerror(errno));
    }
    if (got == 0) { /* the bounds were checked against the size fstat gave: the file shrank since */
      return xp_fail(err, XPACK_ERR_IO, "%s: reading %s at offset %llu: the file ended (it changed while read)",
                     a->name, what, (unsigned long long)(offset + done));
    }
    done += (size_t)got;
  }
  return XPACK_OK;
}

/* The end record: the last signature within the last END_SIZE + MAX_COMMENT bytes, which with its comment must
 * end the file, as Android's reader requires (taking an earlier record whose comment fits would read another
 * archive than other readers do: one hidden in a member's bytes); then, when a locator precedes it, the Zip64
 * end record it points at. Leaves a->central_* and a->count. */
static xpack_status read_end(archive* a, xpack_error* err) {
  if (a->size < END_SIZE) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: %llu bytes: not a zip archive (too short for its end record, %d bytes)",
                   a->name, (unsigned long long)a->size, END_SIZE);
  }
  const size_t tail_size = a->size < END_SIZE + MAX_COMMENT ? (size_t)a->size : END_SIZE + MAX_COMMENT;
  const uint64_t tail_at = a->size - tail_size;
  uint8_t* tail = malloc(tail_size);
  if (tail == NULL) return xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", a->name);
  xpack_status st = read_at(a, tail_at, tail, tail_size, "the end of the archive", err);
  size_t end = tail_size; /* not found */
  for (size_t i = tail_size - END_SIZE + 1; st == XPACK_OK && i-- > 0;) {
    if (xp_le32(tail + i) == END_SIGNATURE) {
      end = i;
      break;
    }
  }
  if (st == XPACK_OK && end != tail_size && end + END_SIZE + xp_le16(tail + end + 20) != tail_size) {
    const uint64_t end_at = tail_at + end, comment = xp_le16(tail + end + 20);
    free(tail);
    return xp_fail(err, XPACK_ERR_BAD_INPUT,
                   "%s: the last end of central directory record (offset %llu) and its %llu-byte comment end at offset "
                   "%llu, not at the file's end (%llu): readers would disagree on the archive (Android's refuses it)",
                   a->name, (unsigned long long)end_at, (unsigned long long)comment,
                   (unsigned long long)(end_at + END_SIZE + comment), (unsigned long long)a->size);
  }
  if (st != XPACK_OK || end == tail_size) {
    free(tail);
    if (st != XPACK_OK) return st;
    return xp_fail(err, XPACK_ERR_BAD_INPUT,
                   "%s: not a zip archive: no end of central directory record (signature PK\\5\\6) in its last %zu bytes",
                   a->name, tail_size);
  }
  const uint8_t* e = tail + end;
  const uint64_t end_at = tail_at + end;
  const uint16_t disk = xp_le16(e + 4), central_disk = xp_le16(e + 6);
  const uint16_t disk_count = xp_le16(e + 8), count = xp_le16(e + 10);
  const uint32_t central_size = xp_le32(e + 12), central_offset = xp_le32(e + 16);
  /* The Zip64 locator right before the end record: in the tail read, or (behind a comment of nearly 64 KiB)
   * read on its own. */
  uint8_t locator[ZIP64_LOCATOR_SIZE] = {0};
  if (end >= ZIP64_LOCATOR_SIZE) {
    memcpy(locator, tail + end - ZIP64_LOCATOR_SIZE, ZIP64_LOCATOR_SIZE);
  } else if (end_at >= ZIP64_LOCATOR_SIZE) {
    st = read_at(a, end_at - ZIP64_LOCATOR_SIZE, locator, sizeof locator, "the bytes before the end record", err);
  }
  free(tail);
  if (st != XPACK_OK) return st;
  const int has_locator = xp_le32(locator) == ZIP64_LOCATOR_SIGNATURE;
  const uint64_t locator_z64_end = xp_le64(locator + 8);
  const uint32_t locator_disks = xp_le32(locator + 16);
  uint64_t limit = end_at; /* the central directory lies before this */
  if (!has_locator) {
    if (count == ZIP64_MARK16 || central_size == ZIP64_MARK32 || central_offset == ZIP64_MARK32) {
      return xp_fail(err, XPACK_ERR_BAD_INPUT,
                     "%s: end record at offset %llu: its fields say Zip64 (0xffff or 0xffffffff) but no Zip64 locator "
                     "precedes it",
                     a->name, (unsigned long long)end_at);
    }
    if (disk != 0 || central_disk != 0 || disk_count != count) {
      return xp_fail(err, XPACK_ERR_UNSUPPORTED, "%s: end record at offset %llu: an archive split over several disks",
                     a->name, (unsigned long long)end_at);
    }
    a->count = count;
    a->central_size = central_size;
    a->central_offset = central_offset;
  } else {
    const uint64_t locator_at = end_at - ZIP64_LOCATOR_SIZE;
    if (locator_disks > 1 || locator_z64_end > locator_at || locator_at - locator_z64_end < ZIP64_END_SIZE) {
      return xp_fail(err, XPACK_ERR_BAD_INPUT,
                     "%s: Zip64 locator at offset %llu: Zip64 end record at %llu over %u disks; expected one disk and "
                     "a %d-byte record before the locator",
                     a->name, (unsigned long long)locator_at, (unsigned long long)locator_z64_end, locator_disks,
                     ZIP64_END_SIZE);
    }
    uint8_t z[ZIP64_END_SIZE];
    st = read_at(a, locator_z64_end, z, sizeof z, "the Zip64 end record", err);
    if (st != XPACK_OK) return st;
    if (xp_le32(z) != ZIP64_END_SIGNATURE) {
      return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: offset %llu (from the Zip64 locator): no Zip64 end record signature",
                     a->name, (unsigned long long)locator_z64_end);
    }
    if (xp_le32(z + 16) != 0 || xp_le32(z + 20) != 0 || xp_le64(z + 24) != xp_le64(z + 32)) {
      return xp_fail(err, XPACK_ERR_UNSUPPORTED, "%s: Zip64 end record at offset %llu: an archive split over several disks",
                     a->name, (unsigned long long)locator_z64_end);
    }
    a->count = xp_le64(z + 32);
    a->central_size = xp_le64(z + 40);
    a->central_offset = xp_le64(z + 48);
    limit = locator_z64_end;
  }
  if (a->central_offset > limit || a->central_size > limit - a->central_offset) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT,
                   "%s: the central directory (%llu bytes at offset %llu) runs past its end records (at %llu)", a->name,
                   (unsigned long long)a->central_size, (unsigned long long)a->central_offset,
                   (unsigned long long)limit);
  }
  if (a->count > a->central_size / CENTRAL_SIZE) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT,
                   "%s: the end record counts %llu members, more than the central directory's %llu bytes hold (%d each at least)",
                   a->name, (unsigned long long)a->count, (unsigned long long)a->central_size, CENTRAL_SIZE);
  }
  if (a->central_size > MAX_CENTRAL_BYTES) {
    return xp_fail(err, XPACK_ERR_UNSUPPORTED, "%s: a central directory of %llu bytes (more than %llu): refused", a->name,
                   (unsigned long long)a->central_size, (unsigned long long)MAX_CENTRAL_BYTES);
  }
  return XPACK_OK;
}

/* The Zip64 extra field of a record: each of its values that the record's own field marks 0xffffffff, in the
 * order size, stored size, local header offset (APPNOTE 4.5.3). */
static xpack_status resolve_zip64(const archive* a, central_record* r, const uint8_t* extra, uint16_t extra_length,
                                  uint32_t size32, uint32_t stored32, uint32_t local32, xpack_error* err) {
  uint64_t* targets[3] = {&r->size, &r->stored_size, &r->local_offset};
  const int marked[3] = {size32 == ZIP64_MARK32, stored32 == ZIP64_MARK32, local32 == ZIP64_MARK32};
  if (!marked[0] && !marked[1] && !marked[2]) return XPACK_OK;
  for (uint32_t q = 0; q + 4 <= extra_length;) {
    const uint16_t id = xp_le16(extra + q), length = xp_le16(extra + q + 2);
    if (length > extra_length - q - 4) break; /* reported below */
    if (id == ZIP64_EXTRA_ID) {
      uint32_t at = 0;
      for (int k = 0; k < 3; k++) {
        if (!marked[k]) continue;
        if (at + 8 > length) {
          return xp_fail(err, XPACK_ERR_BAD_INPUT,
                         "%s: central directory record at offset %llu: its Zip64 extra field (%u bytes) lacks a value its "
                         "record marks 0xffffffff",
                         a->name, (unsigned long long)r->at, length);
        }
        *targets[k] = xp_le64(extra + q + 4 + at);
        at += 8;
      }
      return XPACK_OK;
    }
    q += 4u + length;
  }
  return xp_fail(err, XPACK_ERR_BAD_INPUT,
                 "%s: central directory record at offset %llu: a size or offset is 0xffffffff and no Zip64 extra field "
                 "gives its value",
                 a->name, (unsigned long long)r->at);
}

/* Record `index` of the central directory, at *cursor (an offset in it), which is advanced past it. */
static xpack_status next_record(const archive* a, uint64_t index, uint64_t* cursor, central_record* r, xpack_error* err) {
  const uint64_t p = *cursor;
  memset(r, 0, sizeof *r);
  r->at = a->central_offset + p;
  if (p > a->central_size || a->central_size - p < CENTRAL_SIZE || xp_le32(a->central + p) != CENTRAL_SIGNATURE) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT,
                   "%s: offset %llu: expected a central directory record (signature PK\\1\\2, %d bytes at least) for "
                   "member %llu (from 0) of %llu",
                   a->name, (unsigned long long)r->at, CENTRAL_SIZE, (unsigned long long)index,
                   (unsigned long long)a->count);
  }
  const uint8_t* c = a->central + p;
  const uint16_t name_length = xp_le16(c + 28), extra_length = xp_le16(c + 30), comment_length = xp_le16(c + 32);
  const uint64_t record_size = (uint64_t)CENTRAL_SIZE + name_length + extra_length + comment_length;
  if (record_size > a->central_size - p) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT,
                   "%s: central directory record at offset %llu: its name, extra field and comment (%llu bytes) run past "
                   "the central directory's end",
                   a->name, (unsigned long long)r->at, (unsigned long long)(record_size - CENTRAL_SIZE));
  }
  r->name = (const char*)c + CENTRAL_SIZE;
  r->name_length = name_length;
  r->flags = xp_le16(c + 8);
  r->method = xp_le16(c + 10);
  r->crc = xp_le32(c + 16);
  const uint32_t stored32 = xp_le32(c + 20), size32 = xp_le32(c + 24), local32 = xp_le32(c + 42);
  r->stored_size = stored32;
  r->size = size32;
  r->local_offset = local32;
  xpack_status st = resolve_zip64(a, r, c + CENTRAL_SIZE + name_length, extra_length, size32, stored32, local32, err);
  if (st != XPACK_OK) return st;
  if (xp_le16(c + 34) != 0 && xp_le16(c + 34) != ZIP64_MARK16) {
    return xp_fail(err, XPACK_ERR_UNSUPPORTED, "%s: central directory record at offset %llu: a member on another disk",
                   a->name, (unsigned long long)r->at);
  }
  *cursor = p + record_size;
  return XPACK_OK;
}

/* A member's name and record, for sorting. */
typedef struct named_record {
  const char* name;
  uint16_t name_length;
  uint64_t at;
} named_record;

static int by_name(const void* x, const void* y) {
  const named_record *a = x, *b = y;
  if (a->name_length != b->name_length) return a->name_length < b->name_length ? -1 : 1;
  const int c = memcmp(a->name, b->name, a->name_length);
  if (c != 0) return c;
  return a->at < b->at ? -1 : a->at > b->at; /* the earlier record first, in messages */
}

/* Whether a member's name is one Android's reader accepts: no zero byte, and UTF-8 in form (a lead byte and
 * its continuation bytes). */
static int name_is_valid(const uint8_t* name, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const uint8_t b = name[i];
    if (b == 0) return 0;
    if (b < 0x80) continue;
    const size_t more = (b & 0xE0) == 0xC0 ? 1 : (b & 0xF0) == 0xE0 ? 2 : (b & 0xF8) == 0xF0 ? 3 : 0;
    if (more == 0 || more > n - 1 - i) return 0;
    for (size_t k = 1; k <= more; k++) {
      if ((name[i + k] & 0xC0) != 0x80) return 0;
    }
    i += more;
  }
  return 1;
}

/* Every record read once (each must be sound before any member is used), with a name Android's reader accepts,
 * and no two naming one member: Android's reader refuses such an archive, since two readers could take
 * different members for the name. */
static xpack_status check_names_unique(const archive* a, xpack_error* err) {
  named_record* names = malloc((size_t)(a->count ? a->count : 1) * sizeof *names);
  if (names == NULL) return xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", a->name);
  uint64_t cursor = 0;
  xpack_status st = XPACK_OK;
  for (uint64_t i = 0; st == XPACK_OK && i < a->count; i++) {
    central_record r;
    st = next_record(a, i, &cursor, &r, err);
    names[i] = (named_record){r.name, r.name_length, r.at};
    if (st == XPACK_OK && !name_is_valid((const uint8_t*)r.name, r.name_length)) {
      st = xp_fail(err, XPACK_ERR_BAD_INPUT,
                   "%s: central directory record at offset %llu: a member name with a zero byte or bytes that are not "
                   "UTF-8 (Android's reader refuses the archive)", a->name, (unsigned long long)r.at);
    }
  }
  if (st == XPACK_OK && a->count > 1) {
    qsort(names, (size_t)a->count, sizeof *names, by_name);
    for (uint64_t i = 1; i < a->count; i++) {
      const named_record *p = &names[i - 1], *q = &names[i];
      if (p->name_length != q->name_length || memcmp(p->name, q->name, p->name_length) != 0) continue;
      st = xp_fail(err, XPACK_ERR_BAD_INPUT,
                   "%s: two members named \"%.*s\" (central directory records at offsets %llu and %llu): readers could "
                   "disagree on which one the archive holds",
                   a->name, p->name_length < NAME_IN_MESSAGE ? p->name_length : NAME_IN_MESSAGE, p->name,
                   (unsigned long long)p->at, (unsigned long long)q->at);
      break;
    }
  }
  free(names);
  return st;
}

static xpack_status archive_open(archive* a, int fd, const char* name, xpack_error* err) {
  memset(a, 0, sizeof *a);
  a->fd = fd;
  a->name = name;
  struct stat st;
  if (fstat(fd, &st) != 0) return xp_fail(err, XPACK_ERR_IO, "%s: fstat: %s", name, strerror(errno));
  if (!S_ISREG(st.st_mode)) return xp_fail(err, XPACK_ERR_IO, "%s: not a regular file", name);
  a->size = (uint64_t)st.st_size;
  xpack_status s = read_end(a, err);
  if (s != XPACK_OK) return s;
  a->central = malloc(a->central_size ? (size_t)a->central_size : 1);
  if (a->central == NULL) return xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", name);
  s = read_at(a, a->central_offset, a->central, (size_t)a->central_size, "the central directory", err);
  if (s == XPACK_OK && a->count > 0) { /* bytes before the first member: Android's reader refuses them */
    uint8_t first[4];
    s = read_at(a, 0, first, sizeof first, "the first local header", err);
    if (s == XPACK_OK && xp_le32(first) != LOCAL_SIGNATURE) {
      s = xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: offset 0: expected the first member's local header (PK\\3\\4): "
                  "an archive with bytes before its first member is refused (as Android's reader does)", name);
    }
  }
  return s == XPACK_OK ? check_names_unique(a, err) : s;
}

static void archive_close(archive* a) {
  free(a->central);
  a->central = NULL;
}


/* What xpack_archive_find says of the member r: its local header read and checked against r. */
static xpack_status member_of(const archive* a, const central_record* r, xpack_archive_member* out, xpack_error* err) {
  memset(out, 0, sizeof *out);
  const int name_shown = r->name_length < NAME_IN_MESSAGE ? r->name_length : NAME_IN_MESSAGE;
  if (r->flags & FLAG_ENCRYPTED) {
    return xp_fail(err, XPACK_ERR_UNSUPPORTED, "%s: member \"%.*s\" (central directory record at offset %llu) is encrypted",
                   a->name, name_shown, r->name, (unsigned long long)r->at);
  }
  if (r->method == XPACK_ARCHIVE_STORED && r->stored_size != r->size) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT,
                   "%s: member \"%.*s\" (central directory record at offset %llu): stored, yet %llu bytes in the archive "
                   "and %llu extracted",
                   a->name, name_shown, r->name, (unsigned long long)r->at, (unsigned long long)r->stored_size,
                   (unsigned long long)r->size);
  }
  /* Members lie before the central directory. */
  const uint64_t limit = a->central_offset;
  if (r->local_offset > limit || limit - r->local_offset < LOCAL_SIZE) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT,
                   "%s: member \"%.*s\": its local header offset %llu (central directory record at %llu) leaves no room "
                   "for a %d-byte header before the central directory at %llu",
                   a->name, name_shown, r->name, (unsigned long long)r->local_offset, (unsigned long long)r->at,
                   LOCAL_SIZE, (unsigned long long)limit);
  }
  uint8_t local[LOCAL_SIZE];
  xpack_status st = read_at(a, r->local_offset, local, sizeof local, "a local header", err);
  if (st != XPACK_OK) return st;
  const uint16_t local_name_length = xp_le16(local + 26), local_extra_length = xp_le16(local + 28);
  if (xp_le32(local) != LOCAL_SIGNATURE || xp_le16(local + 8) != r->method || local_name_length != r->name_length) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT,
                   "%s: member \"%.*s\": the local header at offset %llu %s the central directory record at %llu says",
                   a->name, name_shown, r->name, (unsigned long long)r->local_offset,
                   xp_le32(local) != LOCAL_SIGNATURE ? "has no signature (PK\\3\\4) where"
                   : xp_le16(local + 8) != r->method ? "gives another method than"
                                                     : "gives a name of another length than",
                   (unsigned long long)r->at);
  }
  const uint64_t data = r->local_offset + LOCAL_SIZE + local_name_length + local_extra_length;
  if (data > limit || r->stored_size > limit - data) {
    return xp_fail(err, XPACK_ERR_BAD_INPUT,
                   "%s: member \"%.*s\": its %llu bytes at offset %llu run past the central directory at %llu", a->name,
                   name_shown, r->name, (unsigned long long)r->stored_size, (unsigned long long)data,
                   (unsigned long long)limit);
  }
  if (local_name_length > 0) {
    char* name = malloc(local_name_length);
    if (name == NULL) return xp_fail(err, XPACK_ERR_NOMEM, "%s: out of memory", a->name);
    st = read_at(a, r->local_offset + LOCAL_SIZE, name, local_name_length, "a local header's name", err);
    const int same = st == XPACK_OK && memcmp(name, r->name, local_name_length) == 0;
    free(name);
    if (st != XPACK_OK) return st;
    if (!same) {
      return xp_fail(err, XPACK_ERR_BAD_INPUT,
                     "%s: member \"%.*s\": the local header at offset %llu names another member than the central "
                     "directory record at %llu",
                     a->name, name_shown, r->name, (unsigned long long)r->local_offset, (unsigned long long)r->at);
    }
  }
  /* Without a data descriptor (flag bit 3) the local header repeats CRC and sizes (sizes 0xffffffff: in its Zip64
   * field); Android's reader refuses a member whose two records disagree, so an asset passing here would not
   * open on the device. */
  if (!(r->flags & FLAG_DATA_DESCRIPTOR)) {
    const uint32_t crc = xp_le32(local + 14), stored32 = xp_le32(local + 18), size32 = xp_le32(local + 22);
    const int zip64 = stored32 == ZIP64_MARK32 && size32 == ZIP64_MARK32;
    if (crc != r->crc || (!zip64 && (stored32 != r->stored_size || size32 != r->size))) {
      return xp_fail(err, XPACK_ERR_BAD_INPUT,
                     "%s: member \"%.*s\": the local header at offset %llu gives CRC %08x and sizes %u and %u, the "
                     "central directory record at %llu CRC %08x and sizes %llu and %llu",
                     a->name, name_shown, r->name, (unsigned long long)r->local_offset, crc, stored32, size32,
                     (unsigned long long)r->at, r->crc, (unsigned long long)r->stored_size,
                     (unsigned long long)r->size);
    }
  }
  out->data_offset = data;
  out->stored_size = r->stored_size;
  out->size = r->size;
  out->method = r->method;
  if (r->method == XPACK_ARCHIVE_STORED && r->stored_size >= XPC_HEADER_MAGIC_SIZE) {
    uint8_t magic[XPC_HEADER_MAGIC_SIZE];
    st = read_at(a, data, magic, sizeof magic, "a member's first bytes", err);
    if (st != XPACK_OK) return st;
    out->looks_like_cache = memcmp(magic, XPC_HEADER_MAGIC, XPC_HEADER_MAGIC_SIZE) == 0;
  }
  return XPACK_OK;
}

xpack_status xpack_archive_find(int fd, const char* archive_name, const char* member, xpack_archive_member* out,
                                xpack_error* err) {
  if (fd < 0 || archive_name == NULL || member == NULL || out == NULL) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_archive_find: negative fd, or NULL name, member or output");
  }
  memset(out, 0, sizeof *out);
  if (member[0] == '\0') {
    return xp_fail(err, XPACK_ERR_BAD_INPUT, "%s!/: an empty member name (expected ARCHIVE!/MEMBER)", archive_name);
  }
  archive a;
  xpack_status st = archive_open(&a, fd, archive_name, err);
  const size_t wanted = strlen(member);
  central_record found = {0}, r;
  int matched = 0;
  uint64_t cursor = 0;
  for (uint64_t i = 0; st == XPACK_OK && !matched && i < a.count; i++) {
    st = next_record(&a, i, &cursor, &r, err);
    if (st == XPACK_OK && r.name_length == wanted && memcmp(r.name, member, wanted) == 0) {
      found = r;
      matched = 1;
    }
  }
  if (st == XPACK_OK && !matched) {
    st = xp_fail(err, XPACK_ERR_BAD_INPUT, "%s: no member named \"%.*s\" (%llu members)", archive_name, NAME_IN_MESSAGE,
                 member, (unsigned long long)a.count);
  }
  if (st == XPACK_OK) st = member_of(&a, &found, out, err);
  archive_close(&a);
  return st;
}

xpack_status xpack_archive_each(int fd, const char* archive_name, xpack_archive_member_fn fn, void* context,
                                xpack_error* err) {
  if (fd < 0 || archive_name == NULL || fn == NULL) {
    return xp_fail(err, XPACK_ERR_ARG, "xpack_archive_each: negative fd, or NULL name or function");
  }
  archive a;
  xpack_status st = archive_open(&a, fd, archive_name, err);
  uint64_t cursor = 0;
  for (uint64_t i = 0; st == XPACK_OK && i < a.count; i++) {
    central_record r;
    xpack_archive_member m;
    st = next_record(&a, i, &cursor, &r, err);
    if (st == XPACK_OK) st = member_of(&a, &r, &m, err);
    if (st == XPACK_OK && fn(context, r.name, r.name_length, &m) != 0) break;
  }
  archive_close(&a);
  return st;
}
