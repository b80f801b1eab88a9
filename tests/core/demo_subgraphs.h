/* Sample XNNPACK subgraphs built directly in C: one per packing family the cache must handle
 * (fully-connected fp32, qs8 x qc8w, qd8 x qc4w, convolution, depthwise convolution, deconvolution) plus
 * weights shared between subgraphs and identical weights under two identities. Deterministic. */
#ifndef XPACK_TESTS_DEMO_SUBGRAPHS_H
#define XPACK_TESTS_DEMO_SUBGRAPHS_H

#include <stddef.h>
#include <stdint.h>
#include <xnnpack.h>

#include "xpack_family.h"

#define DEMO_MAX_EXTERNALS 4
#define DEMO_MAX_FAMILIES 2

/* Binds a raw weight pointer to its identity (writer, loader, or nothing). */
typedef void (*demo_bind_fn)(void* context, const void* raw, const char* identity);

typedef struct demo_external {
  uint32_t id;
  size_t bytes;
  int is_float; /* inputs: fill with floats in [-1, 1) rather than random bytes */
} demo_external;

/* A static filter and the packing family of its node, for xpack_writer_bind_family. */
typedef struct demo_family {
  const void* kernel;
  xpack_family family;
} demo_family;

typedef struct demo_graph {
  const char* name;
  xnn_subgraph_t subgraph;
  size_t num_inputs, num_outputs;
  demo_external inputs[DEMO_MAX_EXTERNALS];
  demo_external outputs[DEMO_MAX_EXTERNALS];
  size_t num_families; /* one per node whose weights XNNPACK offers to a weights cache */
  demo_family families[DEMO_MAX_FAMILIES];
} demo_graph;

/* Number of sample graphs and their names. */
size_t demo_graph_count(void);
const char* demo_graph_name(size_t index);

/* Defines sample graph `index`, binding every static weight through bind. Weight buffers are created on
 * first use and live until demo_free_weights. Returns xnn_status_success or XNNPACK's error. */
enum xnn_status demo_define(size_t index, demo_bind_fn bind, void* context, demo_graph* out);

void demo_free_weights(void);

#endif
