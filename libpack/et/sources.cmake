# ExecuTorch readers: .pte, .ptd and XNNPACK delegate blobs (include/xpack_executorch.h). Its own library
# so the readers can be fuzzed and tested alone; it needs the common base, not the loader or XNNPACK.
xpack_library(xpack_et
  SOURCES et/flatbuf.c et/et_map.c et/keys.c et/arena.c et/pte.c et/ptd.c et/xnn_types.c et/xnn_graph.c
          et/constants.c et/weight_uses.c et/packing_suffix.c et/hash_memo.c et/summary.c et/weights_on_demand.c
  PUBLIC xpack_common PRIVATE xpack_xxhash m)
