/* The text of a CPU description (xpack_describe_this_cpu, INFO "cpu" in docs/FORMAT.md 5.7) from any
 * /proc/cpuinfo, so that tests can give it the files of machines other than this one. */
#ifndef XPACK_INSPECT_CPU_DESCRIPTION_H
#define XPACK_INSPECT_CPU_DESCRIPTION_H

#include <stddef.h>
#include <stdio.h>

/* Describes the CPUs that `cpuinfo` (a /proc/cpuinfo read from its current position; NULL: none) lists, for the
 * architecture named `arch_name`, into out[0..size) as xpack_describe_this_cpu does. Returns out. */
const char* xp_describe_cpu(FILE* cpuinfo, const char* arch_name, char* out, size_t size);

#endif
