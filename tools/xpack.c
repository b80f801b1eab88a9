/* xpack: pack XNNPACK weights ahead of time, and debug the caches. Dispatches to one command per file. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <xnnpack.h>

#include "cli_common.h"
#include "commands.h"
#include "json.h"
#include "xpack.h"

typedef struct command {
  const char* name;
  int (*run)(int argc, char** argv);
  const char* usage;
  const char* help;
} command;

static const command kCommands[] = {
    {"pack", cmd_pack, "xpack pack MODEL.pte [MODEL2.pte ...] [--data FILE.ptd ...] [-o OUT.xpc] [--page-size N] [--zstd[=LEVEL]] [--jobs N] [--json]",
     "Replays every XNNPACK delegate of every method of every program through one recording weights cache and\n"
     "writes each packed weight once into OUT (default: the first model with .xpc). Weights shared by methods or\n"
     "programs are packed and stored once. Non-XNNPACK delegates are skipped with a note; a delegate xpack cannot\n"
     "replay is reported and the others are still packed. With nothing to pack, exits 0 and writes nothing.\n"
     "--page-size 16384 aligns large regions for Apple targets.\n"
     "--zstd[=LEVEL] writes the transport form for downloads and app bundles instead: every region one zstd frame\n"
     "(LEVEL 1 to 19, default 19), the index unchanged. The loader refuses it; `xpack inflate` makes it mappable.\n"
     "A program or .ptd inside an APK or zip is named ARCHIVE!/MEMBER (app.apk!/assets/model.pte), as in run,\n"
     "inspect and verify --model: read where it lies (stored, not compressed)."},
    {"run", cmd_run, "xpack run MODEL.pte [--data FILE.ptd ...] [--cache FILE ... [--read] [--check-regions] [--skip-small]\n"
     "          [--skip-cold]] [--method NAME] [--json]",
     "Builds and runs every XNNPACK delegate with seeded pseudo-random inputs and prints, per delegate, the\n"
     "create-runtime and first-inference times, look-ups, hits, misses, heap-fallback bytes and the XXH3-64 of\n"
     "every output. With --cache the weights come from the cache; outputs must be bit-identical to a run without.\n"
     "--read reads the cache into memory instead of mapping it (XPACK_OPEN_READ). --check-regions checks each\n"
     "region's XXH3 before serving it (XPACK_OPEN_CHECK_REGIONS): a damaged region is refused, not served.\n"
     "--skip-small does what an app passing XPACK_OPEN_SKIP_SMALL gets: a cache file under 128 KiB is skipped\n"
     "unread and XNNPACK packs everything, as without a cache. --skip-cold does what XPACK_OPEN_SKIP_COLD gets:\n"
     "a cache file under 1 MiB that is not wholly in the page cache is skipped unread the same way, and read\n"
     "into the page cache in the background once the run is over, for the next one.\n"
     "A cache, program or .ptd inside an APK or zip is named ARCHIVE!/MEMBER (app.apk!/assets/model.xpc) and read\n"
     "where it lies."},
    {"inspect", cmd_inspect, "xpack inspect MODEL.pte [MODEL2.pte ...] [--data FILE.ptd ...] [--json]",
     "Methods, delegates (backend, location, size), XNNPACK node counts by type, datatypes, constants (identity,\n"
     "size, where they live), and what xpack can and cannot replay."},
    {"dump", cmd_dump, "xpack dump FILE [--json]",
     "Prints every field of a cache file: format version, target, XNNPACK build identifier, the input files it was\n"
     "built from, every region (offset, size, XXH3-64) and every entry (seed, kernel and bias identities, region),\n"
     "with totals and the bytes deduplication saved. FILE may be ARCHIVE!/MEMBER, a cache inside an APK or zip."},
    {"verify", cmd_verify, "xpack verify FILE [--model MODEL.pte ... [--data FILE.ptd ...]] [--json]",
     "Checks structure, bounds and every checksum (metadata, each table, each region, each entry).\n"
     "With --model, also re-packs the model with this machine's XNNPACK and compares every packed weight with the\n"
     "cache byte for byte, then runs every delegate with and without the cache comparing outputs bit for bit.\n"
     "Prints one line per problem naming where it is; exit 0 when the file is sound and this machine would serve\n"
     "every entry, 1 otherwise (also a sound cache packed for another architecture, XNNPACK build or CPU: its\n"
     "`sound` in --json says which).\n"
     "FILE may be ARCHIVE!/MEMBER (app.apk!/assets/model.xpc): a cache inside an APK or zip, checked where it lies,\n"
     "with whether it is stored uncompressed (else no app can open it) and whether the loader maps it in place."},
    {"bench", cmd_bench,
     "xpack bench MODEL.pte [MODEL2.pte ...] [--data FILE.ptd ...] [--reps N] [--cache FILE] [--readahead]\n"
     "            [--variants LIST] [--serve-small] [--serve-cold] [--probe-late]\n"
     "            [--no-prefetch] [--keep] [--json]",
     "Measures what the cache saves. Packs the models into a temporary cache (`xpack pack` in a child, N times:\n"
     "wall time, peak RSS) unless --cache is given, then runs each variant N times (default 5), each in a fresh process:\n"
     "nocache (XNNPACK packs), cache_warm (the loader, files in the page cache), cache_cold and nocache_cold (after\n"
     "POSIX_FADV_DONTNEED on the cache and model files, checked with mincore), ideal (every packed weight already\n"
     "in heap: the floor). Per variant, medians of: open, create-runtime and first-inference times, time to first\n"
     "inference, RSS and Private_Dirty after it, peak RSS, page faults; then ratios against nocache and the targets\n"
     "met or missed. --readahead adds cache_cold_seq and cache_cold_willneed (the mapping advised MADV_SEQUENTIAL\n"
     "or MADV_WILLNEED). The cache variants open the cache as docs/INTEGRATION.md advises apps to\n"
     "(XPACK_OPEN_PROBE_EARLY | XPACK_OPEN_SKIP_SMALL | XPACK_OPEN_SKIP_COLD, then xpack_cache_prefetch): a cache\n"
     "file under 128 KiB is skipped unread, and so is one under 1 MiB in the cold variants; --serve-small and\n"
     "--serve-cold measure them served instead, --probe-late without the probe thread, --no-prefetch without the\n"
     "prefetch. Load + TTFI of each cache variant minus its baseline\n"
     "is also given within each repetition: the median of those differences and an interval for it (sign test).\n"
     "Outputs must be bit-identical in every variant and repetition, else exit 1."},
    {"inflate", cmd_inflate, "xpack inflate IN OUT [--json]",
     "Turns a transport-form cache (written by `xpack pack --zstd`: every region one zstd frame) into the mappable\n"
     "form the loader needs, laid out exactly as `xpack pack` without --zstd lays it out. Checks every frame, every\n"
     "region's XXH3-64 and all metadata checksums; streams one region at a time; writes OUT atomically (never a\n"
     "partial file). Prints the sizes and the throughput (MB/s of OUT written). IN may be ARCHIVE!/MEMBER (a cache\n"
     "inside an APK or zip, inflated where it lies). An IN already mappable is a usage error (exit 2), nothing written."},
    {"export", cmd_export, "xpack export --executorch CACHE OUT [--json]",
     "Writes CACHE as ExecuTorch's file-backed packed-weights cache (XPWC version 2): set the XNNPACK backend's\n"
     "packed_cache_path option to OUT and the app starts with every exported weight already packed. Entries are\n"
     "named as ExecuTorch names them (kernel named key + bias named key); entries it cannot name (unnamed constants,\n"
     "C API identities, names shared by other seeds or bytes) are skipped and counted. OUT is valid only when the\n"
     "app's XNNPACK packs like the one that packed CACHE (same build, same CPU kernel choice): ExecuTorch checks\n"
     "only seeds. Check with `xpack verify CACHE [--model MODEL.pte]` on the target. A damaged cache is refused;\n"
     "a transport-form cache needs `xpack inflate` first. With nothing to export, exits 0 and writes nothing."},
};
static const size_t kCommandCount = sizeof kCommands / sizeof kCommands[0];

static void print_version(int as_json) {
  const uint8_t* id = xnn_experimental_get_build_identifier_data();
  size_t n = xnn_experimental_get_build_identifier_size();
  char hex[2 * 64 + 1] = "";
  for (size_t i = 0; i < n && i < 64; i++) snprintf(hex + 2 * i, 3, "%02x", id[i]);
  if (as_json) {
    json j;
    json_init(&j, stdout);
    json_object(&j);
    json_key(&j, "xpack_version"); json_string(&j, XPACK_VERSION_STRING);
    json_key(&j, "xnnpack_version"); json_string(&j, XPACK_XNNPACK_VERSION);
    json_key(&j, "xnnpack_build_identifier"); json_string(&j, hex);
    json_end_object(&j);
    json_finish(&j);
    return;
  }
  printf("xpack %s\nXNNPACK %s, build identifier %s\n", XPACK_VERSION_STRING, XPACK_XNNPACK_VERSION, hex);
}

/* To stdout when asked for (--help, help); to stderr with exit 2 when the command is missing. */
static void print_help(FILE* out) {
  fprintf(out, "usage: xpack [-q|-v] COMMAND [ARGS] [-q|-v]\n\n"
          "Packs XNNPACK weights of ExecuTorch programs ahead of time into a cache file that the xpack loader\n"
          "serves to XNNPACK, so that creating a runtime packs nothing.\n\ncommands:\n");
  for (size_t i = 0; i < kCommandCount; i++) fprintf(out, "  %s\n", kCommands[i].usage);
  fprintf(out, "  xpack help COMMAND          (or xpack COMMAND --help)\n  xpack --version [--json]\n\n"
          "options of every command:\n"
          "  -q, --quiet    no notes, warnings or summaries (errors still go to stderr)\n"
         "  -v, --verbose  more detail on stderr (e.g. one line per delegate packed)\n"
         "  --json         one JSON document on stdout instead of text\n"
         "  -h, --help     this command's help\n\n"
         "exit codes:\n"
         "  0  success\n"
         "  1  a check failed (verify found a problem or an entry this machine would refuse; bench saw outputs differ)\n"
         "  2  usage error\n"
         "  3  an input file is missing, unreadable or malformed\n"
         "  4  could not complete (output I/O error, XNNPACK error, out of memory)\n");
}

static const command* find_command(const char* name) {
  for (size_t i = 0; i < kCommandCount; i++) {
    if (strcmp(kCommands[i].name, name) == 0) return &kCommands[i];
  }
  return NULL;
}

static void print_command_help(const command* c) { printf("usage: %s\n\n%s\n", c->usage, c->help); }

/* The exit of a command that only prints (help, version): 0 once what it printed reached stdout. */
static int printed(void) {
  if (fflush(stdout) != 0 || ferror(stdout)) {
    cli_error("cannot write to stdout: %s", strerror(errno));
    return XPACK_EXIT_FAILED;
  }
  return XPACK_EXIT_OK;
}

static int is_quiet(const char* a) { return strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0; }
static int is_verbose(const char* a) { return strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0; }
static int is_help(const char* a) { return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0; }

/* -q/-v are accepted before and after the command name (`xpack pack -q M.pte`): they are taken out of the
 * command's arguments here, so no command parses them. Returns the new argument count. */
static int take_global_options(int argc, char** argv) {
  int kept = 0;
  for (int i = 0; i < argc; i++) {
    if (is_quiet(argv[i])) g_verbosity = -1;
    else if (is_verbose(argv[i])) g_verbosity = 1;
    else argv[kept++] = argv[i];
  }
  argv[kept] = NULL;
  return kept;
}

/* A standard descriptor closed by whoever started xpack (`2>&-`) would be the next file xpack opens, and
 * its messages would go into that file: once `pack -v 2>&-` wrote its per-delegate lines into the cache it
 * was writing (exit 0, a damaged file). Each closed one is taken by /dev/null opened read-only, so that
 * writes to it still fail as they would on a closed descriptor (a report that cannot reach stdout stays
 * exit 4). */
static void hold_standard_descriptors(void) {
  for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int held = open("/dev/null", O_RDONLY | O_NOCTTY); /* the lowest free descriptor: fd */
    if (held != fd) {
      if (held >= 0) close(held);
      _exit(XPACK_EXIT_FAILED); /* nowhere safe to write even this */
    }
  }
}

int main(int argc, char** argv) {
  hold_standard_descriptors();
  /* A reader that closes the pipe early (`xpack dump F | head -1`) makes the write of the report fail with
   * EPIPE, reported as exit 4 (docs/CLI.md), instead of killing xpack with SIGPIPE (exit 141). */
  signal(SIGPIPE, SIG_IGN);
  /* Likewise a write past the file-size limit (ulimit -f) fails with EFBIG, reported with the file's name, instead
   * of killing xpack with SIGXFSZ (exit 153, no message). */
  signal(SIGXFSZ, SIG_IGN);
  int i = 1;
  int version = 0, version_json = 0;
  for (; i < argc && argv[i][0] == '-'; i++) {
    if (is_quiet(argv[i])) g_verbosity = -1;
    else if (is_verbose(argv[i])) g_verbosity = 1;
    else if (strcmp(argv[i], "--version") == 0) version = 1;
    else if (strcmp(argv[i], "--json") == 0) version_json = 1;
    else if (is_help(argv[i])) {
      print_help(stdout);
      return printed();
    } else {
      cli_error("unknown option %s (see xpack --help)", argv[i]);
      return XPACK_EXIT_USAGE;
    }
  }
  if (version) {
    if (i < argc) {
      cli_error("--version takes no command (see xpack --help)");
      return XPACK_EXIT_USAGE;
    }
    print_version(version_json);
    return printed();
  }
  if (version_json) {
    cli_error("--json goes after the command: xpack COMMAND ... --json (or xpack --version --json)");
    return XPACK_EXIT_USAGE;
  }
  if (i >= argc) {
    print_help(stderr);
    return XPACK_EXIT_USAGE;
  }
  if (strcmp(argv[i], "help") == 0) {
    if (i + 1 >= argc) {
      print_help(stdout);
      return printed();
    }
    const command* c = find_command(argv[i + 1]);
    if (c == NULL) {
      cli_error("no command '%s' (see xpack --help)", argv[i + 1]);
      return XPACK_EXIT_USAGE;
    }
    print_command_help(c);
    return printed();
  }
  const command* c = find_command(argv[i]);
  if (c == NULL) {
    cli_error("no command '%s' (see xpack --help)", argv[i]);
    return XPACK_EXIT_USAGE;
  }
  int cmd_argc = take_global_options(argc - i - 1, argv + i + 1);
  for (int k = 0; k < cmd_argc; k++) {
    if (is_help(argv[i + 1 + k])) {
      print_command_help(c);
      return printed();
    }
  }
  xpack_error err = {0};
  if (xpack_initialize_xnnpack(&err) != XPACK_OK) {
    cli_error("%s", err.message);
    return XPACK_EXIT_FAILED;
  }
  cli_catch_truncated_inputs();
  cli_remove_temporaries_on_interrupt();
  int rc = cli_out_begin();
  if (rc != 0) return rc;
  return cli_out_end(c->run(cmd_argc, argv + i + 1));
}
