/* Two-byte changes to generated programs that once crashed pack or run while the reader called them
 * replayable (issue 16): each is made to the parsed graph, and the replay must now refuse it with
 * XPACK_ERR_BAD_INPUT before XNNPACK packs or writes anything.
 * Usage: hostile_graphs CONV.pte DECONV.pte */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xnnpack.h>

#include "xpack.h"
#include "xpack_executorch.h"
#include "xpack_replay.h"
#include "expect.h"


typedef struct opened {
  xpack_et_program* program;
  xpack_et_xnn_graph* graph;
} opened;

static int open_graph(const char* path, opened* o) {
  xpack_error err;
  if (xpack_et_program_open(path, &o->program, &err) != XPACK_OK ||
      xpack_et_xnn_graph_open(o->program, 0, 0, &o->graph, &err) != XPACK_OK) {
    fprintf(stderr, "%s\n", err.message);
    return -1;
  }
  return 0;
}

static void close_graph(opened* o) {
  xpack_et_xnn_graph_free(o->graph);
  xpack_et_program_close(o->program);
}

static xpack_status define(opened* o, xpack_replay_subgraph* replay, xpack_error* err) {
  xpack_et_named_sources none;
  memset(&none, 0, sizeof none);
  none.program = o->program;
  return xpack_replay_define(o->graph, &none, NULL, NULL, replay, err);
}

/* The changed graph must be refused at definition, with `needle` in the message. */
static void expect_refused(opened* o, const char* needle, const char* what) {
  xpack_replay_subgraph replay;
  xpack_error err;
  xpack_status st = define(o, &replay, &err);
  EXPECT_MSG(st == XPACK_ERR_BAD_INPUT && strstr(err.message, needle) != NULL, "%s: %s %s", what, xpack_status_name(st),
        st ? err.message : "defined");
  if (st == XPACK_OK) xpack_replay_release(&replay);
}

/* group_output_channels 1 -> 3516 on the depthwise convolution: XNNPACK packed 3516x the filter. */
static void depthwise_channels(const char* path) {
  opened o;
  if (open_graph(path, &o) != 0) { failures++; return; }
  xpack_et_xnn_node* dw = NULL;
  for (size_t i = 0; i < o.graph->node_count; i++) {
    if (o.graph->nodes[i].type == XPACK_ET_XNN_DEPTHWISE_CONV2D) dw = (xpack_et_xnn_node*)&o.graph->nodes[i];
  }
  EXPECT_MSG(dw != NULL, "%s: no depthwise convolution", path);
  if (dw) {
    dw->u.conv.group_output_channels = 3516;
    expect_refused(&o, "filter value", "depthwise group_output_channels 3516");
  }
  close_graph(&o);
}

/* The graph's last external output, writable: the tests change the parsed graph in place. */
static xpack_et_xnn_value* external_output(opened* o) {
  xpack_et_xnn_value* out = NULL;
  for (size_t i = 0; i < o->graph->value_count; i++) {
    if (o->graph->values[i].flags == XPACK_ET_XNN_VALUE_FLAG_EXTERNAL_OUTPUT) out = (xpack_et_xnn_value*)&o->graph->values[i];
  }
  return out;
}

/* A value's flags 2 -> 8: an output that is no longer external made XNNPACK's fusion abort. */
static void value_flags(const char* path) {
  opened o;
  if (open_graph(path, &o) != 0) { failures++; return; }
  xpack_et_xnn_value* out = external_output(&o);
  EXPECT_MSG(out != NULL, "%s: no external output", path);
  if (out) {
    out->flags = 8;
    expect_refused(&o, "flags 0x8", "value flags 8");
  }
  close_graph(&o);
}

/* An output's declared dims 16 -> 1: run sized the buffer from them and XNNPACK wrote past it. */
static void output_dims(const char* path) {
  opened o;
  if (open_graph(path, &o) != 0) { failures++; return; }
  xpack_et_xnn_value* out = external_output(&o);
  uint32_t dims[8];
  uint32_t changed = 0;
  for (uint32_t d = 0; out && d < out->num_dims && d < 8; d++) {
    dims[d] = out->dims[d];
    if (!changed && dims[d] > 1) changed = dims[d], dims[d] = 1;
  }
  EXPECT_MSG(out != NULL && changed > 1, "%s: no external output with a dim above 1", path);
  if (out && changed > 1) {
    out->dims = dims;
    xpack_replay_subgraph replay;
    xpack_error err;
    xpack_status st = define(&o, &replay, &err);
    xnn_runtime_t runtime = NULL;
    if (st == XPACK_OK && xnn_create_runtime_v4(replay.subgraph, NULL, NULL, NULL, 0, &runtime) == xnn_status_success) {
      if (xnn_reshape_runtime(runtime) == xnn_status_success) {
        st = xpack_replay_check_externals(runtime, &replay, &err);
        EXPECT_MSG(st == XPACK_ERR_BAD_INPUT && strstr(err.message, "reshape gives") != NULL, "dims %u -> 1: %s %s",
              (unsigned)changed, xpack_status_name(st), st ? err.message : "accepted");
      }
      xnn_delete_runtime(runtime);
    }
    if (replay.subgraph || replay.externals) xpack_replay_release(&replay);
  }
  close_graph(&o);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: hostile_graphs CONV.pte DECONV.pte\n");
    return 2;
  }
  if (xnn_initialize(NULL) != xnn_status_success) return 2;
  depthwise_channels(argv[1]);
  value_flags(argv[2]);
  output_dims(argv[1]);
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("hostile graphs refused\n");
  return 0;
}
