/* The command line's shape, checked before any file is opened: options, their values, numbers. */
#include <stdio.h>
#include <string.h>

#include "cli_common.h"

int cli_is_option(const char* arg) { return arg[0] == '-' && arg[1] != 0; }

const cli_option* cli_option_of(const cli_options* options, const char* arg) {
  for (size_t i = 0; i < options->count; i++) {
    const cli_option* o = &options->list[i];
    const size_t n = strlen(o->name);
    if (strncmp(arg, o->name, n) != 0) continue;
    if (arg[n] == 0 || (arg[n] == '=' && o->equals_value)) return o;
  }
  return NULL;
}

int cli_check_options(const cli_options* options, int argc, char** argv) {
  const cli_option* given[64];
  size_t given_count = 0;
  for (int i = 0; i < argc; i++) {
    if (!cli_is_option(argv[i])) continue;
    const cli_option* o = cli_option_of(options, argv[i]);
    if (o == NULL) {
      cli_error("%s: unknown option %s (see xpack help %s)", options->command, argv[i], options->command);
      return XPACK_EXIT_USAGE;
    }
    /* `-o a.xpc ... -o b.xpc` once wrote b.xpc alone: which value was meant is for the caller to say. */
    if ((o->takes_value || o->equals_value) && !o->repeats) {
      for (size_t k = 0; k < given_count; k++) {
        if (given[k] == o) {
          cli_error("%s: %s given twice: it takes one value (see xpack help %s)", options->command, o->name,
                    options->command);
          return XPACK_EXIT_USAGE;
        }
      }
      if (given_count < sizeof given / sizeof given[0]) given[given_count++] = o;
    }
    if (!o->takes_value || strchr(argv[i], '=') != NULL) continue;
    /* A next argument that is one of the command's options is not a value: `-o --json` lost its value. */
    if (i + 1 >= argc || cli_option_of(options, argv[i + 1]) != NULL) {
      cli_error("%s: %s needs a value (see xpack help %s)", options->command, argv[i], options->command);
      return XPACK_EXIT_USAGE;
    }
    i++;
  }
  return 0;
}

int cli_bad_value(const char* command, const char* option, const char* text, const char* accepted) {
  const size_t n = strlen(option); /* "--zstd=" is followed by its value, "--jobs" by a space */
  cli_error("%s: %s%s%s: expected %s", command, option, n && option[n - 1] == '=' ? "" : " ", text, accepted);
  return XPACK_EXIT_USAGE;
}

int cli_parse_number(const char* command, const char* option, const char* text, uint64_t min, uint64_t max,
                     const char* accepted, uint64_t* value) {
  char range[96];
  if (accepted == NULL) {
    snprintf(range, sizeof range, "a whole number from %llu to %llu", (unsigned long long)min,
             (unsigned long long)max);
    accepted = range;
  }
  uint64_t v = 0;
  const char* p = text;
  for (; *p >= '0' && *p <= '9'; p++) {
    const unsigned digit = (unsigned)(*p - '0');
    if (v > (UINT64_MAX - digit) / 10) return cli_bad_value(command, option, text, accepted);
    v = v * 10 + digit;
  }
  if (p == text || *p != 0 || v < min || v > max) return cli_bad_value(command, option, text, accepted);
  *value = v;
  return 0;
}
