/* The CPU description of INFO "cpu" (docs/FORMAT.md 5.7) from the /proc/cpuinfo of machines other than this
 * one: a phone with three kinds of cores in clusters, a core of an implementer without names, an x86 machine
 * whose flags line is longer than any line buffer, no processors at all, more kinds than the description
 * lists, and a buffer too small for the text (truncated, terminated, nothing written past it). */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "inspect/cpu_description.h"

static int failures;

static void expect(const char* cpuinfo, const char* arch, const char* expected) {
  char out[512];
  FILE* f = cpuinfo ? fmemopen((void*)cpuinfo, strlen(cpuinfo), "r") : NULL;
  xp_describe_cpu(f, arch, out, sizeof out);
  if (f) fclose(f);
  if (strcmp(out, expected) != 0) {
    fprintf(stderr, "FAIL: expected \"%s\"\n      got      \"%s\"\n", expected, out);
    failures++;
  } else {
    printf("ok: %s\n", out);
  }
}

static void arm_core(char* text, size_t size, int processor, const char* implementer, const char* variant,
                     const char* part, int revision) {
  const size_t used = strlen(text);
  snprintf(text + used, size - used,
           "processor\t: %d\nBogoMIPS\t: 38.40\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics\n"
           "CPU implementer\t: %s\nCPU architecture: 8\nCPU variant\t: %s\nCPU part\t: %s\nCPU revision\t: %d\n\n",
           processor, implementer, variant, part, revision);
}

int main(void) {
  char phone[8192] = "";
  for (int i = 0; i < 4; i++) arm_core(phone, sizeof phone, i, "0x41", "0x2", "0xd05", 0);
  for (int i = 4; i < 7; i++) arm_core(phone, sizeof phone, i, "0x41", "0x4", "0xd0b", 1);
  arm_core(phone, sizeof phone, 7, "0x41", "0x1", "0xd44", 0);
  strcat(phone, "Hardware\t: Qualcomm Technologies, Inc SM8350\n");
  expect(phone, "aarch64",
         "aarch64, 8 CPUs: 4 x MIDR 0x412fd050 (Cortex-A55), 3 x MIDR 0x414fd0b1 (Cortex-A76), "
         "1 x MIDR 0x411fd440 (Cortex-X1)");

  char kryo[1024] = "";
  arm_core(kryo, sizeof kryo, 0, "0x51", "0xa", "0x801", 4);
  expect(kryo, "aarch64", "aarch64, 1 CPU: 1 x MIDR 0x51af8014");

  char x86[8192];
  char flags[3000] = "";
  while (strlen(flags) + 8 < sizeof flags) strcat(flags, " avx512f");
  snprintf(x86, sizeof x86,
           "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\nflags\t\t:%s\nbugs\t\t: sysret_ss_attrs\n\n"
           "processor\t: 1\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\nflags\t\t:%s : x\n\n",
           flags, flags);
  expect(x86, "x86-64", "x86-64, 2 CPUs: 2 x AMD EPYC 7B13");

  expect("", "aarch64", "aarch64, CPUs not described (no /proc/cpuinfo)");
  expect(NULL, "riscv64", "riscv64, CPUs not described (no /proc/cpuinfo)");
  expect("processor\t: 0\n", "aarch64", "aarch64, 1 CPU: 1 x a CPU /proc/cpuinfo does not name");

  char many[16384] = "";
  static const char* parts[] = {"0xd03", "0xd04", "0xd05", "0xd07", "0xd08", "0xd09", "0xd0a", "0xd0b", "0xd0c", "0xd0d"};
  for (int i = 0; i < 10; i++) arm_core(many, sizeof many, i, "0x41", "0x0", parts[i], 0);
  expect(many, "aarch64",
         "aarch64, 10 CPUs: 1 x MIDR 0x410fd030 (Cortex-A53), 1 x MIDR 0x410fd040 (Cortex-A35), "
         "1 x MIDR 0x410fd050 (Cortex-A55), 1 x MIDR 0x410fd070 (Cortex-A57), 1 x MIDR 0x410fd080 (Cortex-A72), "
         "1 x MIDR 0x410fd090 (Cortex-A73), 1 x MIDR 0x410fd0a0 (Cortex-A75), 1 x MIDR 0x410fd0b0 (Cortex-A76), "
         "2 of other kinds");

  char small[24];
  memset(small, 'z', sizeof small);
  FILE* f = fmemopen(phone, strlen(phone), "r");
  xp_describe_cpu(f, "aarch64", small, 16);
  fclose(f);
  if (strcmp(small, "aarch64, 8 CPUs") != 0 || small[16] != 'z') {
    fprintf(stderr, "FAIL: a 16-byte buffer holds \"%.16s\" (terminated: %d), byte 16 is '%c'\n", small,
            memchr(small, 0, 16) != NULL, small[16]);
    failures++;
  } else {
    printf("ok: truncated to \"%s\"\n", small);
  }
  return failures ? 1 : 0;
}
