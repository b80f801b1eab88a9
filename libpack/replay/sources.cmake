# Replay of XNNPACK delegates into XNNPACK subgraphs (include/xpack_replay.h).
xpack_library(xpack_replay
  SOURCES replay/replay.c replay/replay_values.c replay/replay_nodes.c replay/replay_families.c replay/replay_checks.c
          replay/replay_window_checks.c replay/replay_quant_checks.c replay/replay_shapes.c replay/replay_shape_rules.c replay/replay_sizes.c
          replay/replay_cache.c replay/replay_read_ahead.c replay/replay_bindings.c
  PUBLIC xpack_et xpack_loader xpack_xnnpack PRIVATE m xpack_xxhash)
set_source_files_properties(${_libpack}/replay/replay_nodes.c PROPERTIES COMPILE_OPTIONS "-Wno-deprecated-declarations")
