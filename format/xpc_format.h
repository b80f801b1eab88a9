/*
 * xpc_format.h - the on-disk layout of an xpack cache file (.xpc), format version 1.
 *
 * docs/FORMAT.md is the normative description; this header restates its numbers for the code.
 * Every integer is little-endian and is read and written through libpack/common/le.h, never by
 * casting a struct over file bytes, so only offsets and sizes are defined here.
 *
 * File = header (64 bytes at offset 0) | data area (packed-weight regions) |
 *        metadata area (tables, then the table directory) | footer (80 bytes at the very end).
 */
#ifndef XPACK_FORMAT_XPC_H
#define XPACK_FORMAT_XPC_H

/* ---- versions ---- */
#define XPC_VERSION_MAJOR 1 /* a reader refuses any other major */
#define XPC_VERSION_MINOR 3 /* a reader accepts any minor of its major; 1.1 fills FAMI, 1.2 adds INFO "cpu",
                               1.3 FAMI probe keys */

/* ---- header, at offset 0 ---- */
#define XPC_HEADER_SIZE 64
#define XPC_HEADER_MAGIC "\x89XPC\r\n\x1a\n" /* 8 bytes, PNG-style: catches 7-bit and newline mangling */
#define XPC_HEADER_MAGIC_SIZE 8
#define XPC_H_MAGIC 0           /* 8 bytes */
#define XPC_H_MAJOR 8           /* u16 */
#define XPC_H_MINOR 10          /* u16 */
#define XPC_H_HEADER_SIZE 12    /* u32, 64 */
#define XPC_H_FLAGS 16          /* u32, XPC_FLAG_* */
#define XPC_H_PAGE_ALIGNMENT 20 /* u32, alignment of large regions: a power of two, 4096 to XPC_MAX_PAGE_ALIGNMENT
                                   (xpack writes 4096 or 16384) */
#define XPC_H_XNN_ALIGNMENT 24  /* u32, XNN_ALLOCATION_ALIGNMENT of the packing build (64 on x86-64) */
#define XPC_H_ARCH 28           /* u16, ELF e_machine of the packing CPU (62 x86-64, 183 AArch64, 40 ARM) */
#define XPC_H_RESERVED0 30      /* u16, 0 */
#define XPC_H_DATA_OFFSET 32    /* u64, first byte of the data area */
#define XPC_H_DATA_SIZE 40      /* u64, bytes of the data area */
#define XPC_H_RESERVED1 48      /* u64, 0 */
#define XPC_H_CHECKSUM 56       /* u64, XXH3-64 (seed 0) of header bytes [0, 56) */

/* header and footer flags */
#define XPC_FLAG_TRANSPORT 0x1u /* regions are zstd frames (transport form): inflate before mapping */
#define XPC_FLAGS_KNOWN XPC_FLAG_TRANSPORT

/* ---- footer, the last 80 bytes ---- */
#define XPC_FOOTER_SIZE 80
#define XPC_FOOTER_MAGIC "XPACKEND"
#define XPC_FOOTER_MAGIC_SIZE 8
#define XPC_F_METADATA_OFFSET 0 /* u64, first byte of the metadata area */
#define XPC_F_METADATA_SIZE 8   /* u64, bytes from metadata_offset to the footer */
#define XPC_F_DIR_OFFSET 16     /* u64, first byte of the table directory */
#define XPC_F_DIR_COUNT 24      /* u32, directory entries */
#define XPC_F_FOOTER_SIZE 28    /* u32, 80 */
#define XPC_F_FILE_SIZE 32      /* u64, total file size */
#define XPC_F_METADATA_HASH 40  /* u64, XXH3-64 of the whole metadata area */
#define XPC_F_DIR_HASH 48       /* u64, XXH3-64 of the directory */
#define XPC_F_MAJOR 56          /* u16 */
#define XPC_F_MINOR 58          /* u16 */
#define XPC_F_FLAGS 60          /* u32, equal to the header's flags */
#define XPC_F_CHECKSUM 64       /* u64, XXH3-64 of footer bytes [0, 64) */
#define XPC_F_MAGIC 72          /* 8 bytes "XPACKEND" */

/* ---- table directory: entries of 32 bytes ---- */
#define XPC_DIR_ENTRY_SIZE 32
#define XPC_D_TAG 0         /* u32, four ASCII bytes */
#define XPC_D_RECORD_SIZE 4 /* u32, stride of the table's records (1 for byte tables) */
#define XPC_D_OFFSET 8      /* u64, absolute file offset, 8-aligned */
#define XPC_D_COUNT 16      /* u64, number of records */
#define XPC_D_HASH 24       /* u64, XXH3-64 of the table's count * record_size bytes */

#define XPC_TAG(a, b, c, d) ((unsigned)(a) | ((unsigned)(b) << 8) | ((unsigned)(c) << 16) | ((unsigned)(d) << 24))
#define XPC_TAG_REGIONS XPC_TAG('R', 'E', 'G', 'N')
#define XPC_TAG_ENTRIES XPC_TAG('E', 'N', 'T', 'R')
#define XPC_TAG_STRINGS XPC_TAG('S', 'T', 'R', 'S')
#define XPC_TAG_PROVENANCE XPC_TAG('P', 'R', 'O', 'V')
#define XPC_TAG_BUILD_ID XPC_TAG('B', 'L', 'D', 'I')
#define XPC_TAG_INFO XPC_TAG('I', 'N', 'F', 'O')
#define XPC_TAG_FAMILIES XPC_TAG('F', 'A', 'M', 'I')

/* ---- REGN: one record per stored packed-weight region, ascending by offset ---- */
#define XPC_REGION_SIZE 32
#define XPC_R_OFFSET 0      /* u64, absolute offset in the file, inside the data area */
#define XPC_R_STORED_SIZE 8 /* u64, bytes stored in the file (== size unless XPC_FLAG_TRANSPORT) */
#define XPC_R_SIZE 16       /* u64, bytes handed to XNNPACK */
#define XPC_R_HASH 24       /* u64, XXH3-64 of the size bytes handed to XNNPACK */

/* ---- ENTR: one record per cache key, ascending by key_hash ---- */
#define XPC_ENTRY_SIZE 40
#define XPC_E_KEY_HASH 0 /* u64, see xpc key hash in docs/FORMAT.md */
#define XPC_E_SEED 8     /* u32, XNNPACK's cache seed */
#define XPC_E_KERNEL 12  /* u32, STRS offset of the kernel identity */
#define XPC_E_BIAS 16    /* u32, STRS offset of the bias identity, or XPC_NONE */
#define XPC_E_REGION 20  /* u32, REGN index */
#define XPC_E_FAMILY 24  /* u32, FAMI index, or XPC_NONE */
#define XPC_E_FLAGS 28   /* u32, XPC_ENTRY_* */
#define XPC_E_CHECK 32   /* u64, XXH3-64 of entry bytes [0, 32) followed by its 32-byte region record */
#define XPC_ENTRY_PACKED_ON_INSERT 0x1u /* XNNPACK packed this weight without a look-up first */
#define XPC_ENTRY_FLAGS_KNOWN XPC_ENTRY_PACKED_ON_INSERT
/* The identity of a weight packed in more than one way (docs/FORMAT.md 6): it names nothing, and no entry holds
 * it. xpack_loader.h's XPACK_IDENTITY_AMBIGUOUS, the same bytes (tests/core/status_promises.c). */
#define XPC_IDENTITY_AMBIGUOUS "xpack:ambiguous"

#define XPC_NONE 0xFFFFFFFFu

/* ---- STRS: strings, each u32 length, the bytes, one NUL; referenced by byte offset ---- */

/* ---- PROV: one record per input file the cache was built from ---- */
#define XPC_PROVENANCE_SIZE 40
#define XPC_P_NAME 0          /* u32, STRS offset of the file's base name */
#define XPC_P_KIND 4          /* u32, XPC_INPUT_* */
#define XPC_P_FILE_SIZE 8     /* u64 */
#define XPC_P_FILE_HASH 16    /* u64, XXH3-64 of the whole file */
#define XPC_P_PROGRAM_SIZE 24 /* u64, bytes of the program flatbuffer region (0 if none) */
#define XPC_P_PROGRAM_HASH 32 /* u64, XXH3-64 of the program flatbuffer region (0 if none) */
#define XPC_INPUT_PTE 1
#define XPC_INPUT_PTD 2
#define XPC_INPUT_OTHER 3

/* ---- BLDI: XNNPACK's build identifier bytes (record size 1) ---- */

/* ---- INFO: key/value string pairs ---- */
#define XPC_INFO_SIZE 8
#define XPC_I_KEY 0   /* u32, STRS offset */
#define XPC_I_VALUE 4 /* u32, STRS offset */

/* ---- FAMI: packing families and their probe hashes ---- */
#define XPC_FAMILY_SIZE 24
#define XPC_M_NAME 0       /* u32, STRS offset of the family name */
#define XPC_M_FLAGS 4      /* u32, 0 */
#define XPC_M_PROBE_HASH 8 /* u64, XXH3-64 of the family's canonical probe packed at pack time */
#define XPC_M_PROBE_KEYS 16 /* u64, XXH3-64 of the probe's key seeds at pack time (1.3); 0 in files of 1.2 and older */
#define XPC_PROBE_KEYS_FIRST_MINOR 3
#define XPC_MAX_FAMILIES 4096 /* a reader refuses a file whose FAMI table has more records */

/* ---- region placement ---- */
#define XPC_MIN_REGION_ALIGNMENT 64 /* at least XNN_ALLOCATION_ALIGNMENT on every target */
#define XPC_DEFAULT_PAGE_ALIGNMENT 4096
#define XPC_APPLE_PAGE_ALIGNMENT 16384
#define XPC_MAX_PAGE_ALIGNMENT 65536 /* the largest page of any target; bounds the padding a header can ask for */

#endif /* XPACK_FORMAT_XPC_H */
