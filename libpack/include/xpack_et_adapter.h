/*
 * xpack_et_adapter.h - xpack's loader inside stock ExecuTorch, without changing ExecuTorch's sources
 * (docs/INTEGRATION.md, "xpack's loader inside ExecuTorch"). Library xpack_et_adapter (xpack::et_adapter).
 *
 * ExecuTorch's XNNPACK backend builds its own weights-cache provider and offers no way to pass another.
 * Its only call into XNNPACK that takes a provider is xnn_create_runtime_v4 (backends/xnnpack/runtime/
 * XNNCompiler.cpp). An app that links ExecuTorch and XNNPACK statically adds
 *     -Wl,--wrap=xnn_create_runtime_v4 -Wl,--wrap=xnn_delete_runtime
 * to its link line and links xpack::et_adapter (which defines both stand-ins; its CMake target and
 * `pkg-config xpack-et-adapter` add the flags),
 * and every runtime ExecuTorch creates gets xpack's provider: the loader's checks (XNNPACK build identifier,
 * architecture, packing-family probes, checksums on request, byte comparison of what XNNPACK packs anyway)
 * stay in force inside ExecuTorch.
 *
 * xpack's provider finds a weight by the address XNNPACK is given (bound to the weight's identity). So the
 * app loads the program from ONE mapping of the whole .pte (a BufferDataLoader over it: ExecuTorch then
 * hands XNNPACK pointers into that mapping; the MmapDataLoader maps each segment separately) and each .ptd
 * likewise, and gives the same bytes to xpack_et_adapter_attach, which binds every constant of every
 * XNNPACK delegate to its identity (libpack/et/IDENTITY.md), asks XNNPACK the size it reads for each packed
 * weight (xpack_replay_size_weights; the loader serves only regions of exactly that size), and decides
 * every packing family (its probe creates an XNNPACK runtime of xpack's own through the same wrapped function,
 * which passes such runtimes through: xpack_creating_own_runtime). The mappings must outlive every method, and
 * their bytes must not change while attached: the bindings are made once, at attach, from the bytes then, so a
 * program or .ptd loaded anew into the same memory (another version of the model) is served the packings of the
 * old one. Detach, and attach again with the new bytes.
 * Threads: attach, attach_best, attach_cache and detach run one at a time (a second attach, even a concurrent
 * one, fails). ExecuTorch may create runtimes on any thread, also while attach runs: those created before it
 * completes get ExecuTorch's own provider, the later ones xpack's. Detach when no runtime is being created. Other caches opened in the same process (e.g. by xpack_cache_open) are probed as without the
 * adapter, but a runtime the app creates through the wrapper gets the attached cache's provider, whatever
 * provider it passes. So does a runtime of another program: where its weights lie in the attached program's
 * memory (one .ptd mapping given to both), it is served the attached program's packings of them: where it defines
 * such a weight otherwise (another shape), it computes wrong outputs, and XNNPACK may read past the region served
 * (the size checked is the attached program's). While attached, run one program over a weight mapping.
 * Load methods with the backend option weight_cache_enabled = false: ExecuTorch's own cache is not used.
 * What the adapter does not know (a weight at another address: ExecuTorch copied or converted it, or loaded the
 * program through another loader) misses, and XNNPACK packs it as usual, into memory the cache holds until
 * detach, once per distinct packing (loading a method again adds nothing).
 */
#ifndef XPACK_ET_ADAPTER_H
#define XPACK_ET_ADAPTER_H

#include <stddef.h>

#include <xnnpack.h>

#include "xpack_loader.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The size under which attach skips a cache file when the app passes XPACK_OPEN_SKIP_SMALL (128 KiB without
 * the adapter): attach reads the program again (ExecuTorch has read it), binds, sizes and probes. Served
 * whatever their size, on the programs of docs/BENCHMARKS.md ("Where the adapter breaks even", 2026-11-29),
 * caches of 180 KiB and less loaded slower through the adapter than without a cache (1.02 to 2.3 times), one of
 * 256.7 KiB as fast (0.998), and those of 254.6 KiB (a real program's, skipped here) and more faster (0.54 to 0.88). */
#define XPACK_ET_ADAPTER_SMALL_CACHE_BYTES (256u * 1024u)

/* Opens the cache (xpack_cache_open flags; apps pass XPACK_OPEN_SKIP_SMALL | XPACK_OPEN_SKIP_COLD;
 * XPACK_OPEN_SKIP_SMALL skips here under XPACK_ET_ADAPTER_SMALL_CACHE_BYTES; XPACK_OPEN_PROBE_EARLY is ignored:
 * attach decides every packing family before it returns, and a thread to probe them only made it slower), prefetches it (xpack_cache_prefetch) and binds every constant of every XNNPACK delegate of the program in `pte` (with the
 * .ptd files in `ptds`) at its address in those bytes. A file skipped as small or cold is attached as it is:
 * nothing bound, sized or probed, and no provider substituted (ExecuTorch's own is passed through); call
 * xpack_cache_warm_up(xpack_et_adapter_cache()) once the app has started, so that a file skipped as cold is
 * read for the next start. A file refused whole is not sized. One program per process: a second
 * attach fails. Errors: XPACK_ERR_ARG (already attached, a NULL path or program), and those of attach_best. */
xpack_status xpack_et_adapter_attach(const char* cache_path, unsigned flags, const void* pte, size_t pte_size,
                                     const void* const* ptds, const size_t* ptd_sizes, size_t ptd_count,
                                     xpack_error* err);

/* xpack_et_adapter_attach for an app that ships one cache per class of CPU (docs/INTEGRATION.md, "caches for phones"):
 * keeps the cache xpack_cache_open_best_limits keeps among cache_paths[0..cache_count) (the first this device
 * serves whole, else the one serving the most entries, a file built from `pte` before any built from other programs;
 * the adapter's small limit applies to each), sets
 * *chosen to its index and fills candidates (NULL, or cache_count elements) with what was found of each file,
 * then binds, sizes and probes as attach does. Attach and this share the one attachment per process.
 * Errors: XPACK_ERR_ARG (already attached, NULL paths, chosen or program, cache_count 0, a NULL path), those of
 * xpack_cache_open_best (no file opens: the first file's error) and those of attaching an opened cache (see
 * attach_cache). */
xpack_status xpack_et_adapter_attach_best(const char* const* cache_paths, size_t cache_count, unsigned flags,
                                          const void* pte, size_t pte_size, const void* const* ptds,
                                          const size_t* ptd_sizes, size_t ptd_count, size_t* chosen,
                                          xpack_cache_candidate* candidates, xpack_error* err);

/* xpack_et_adapter_attach for a cache the app opened itself, e.g. from its APK with xpack_cache_open_fd (pass it
 * the limits {.small_cache_bytes = XPACK_ET_ADAPTER_SMALL_CACHE_BYTES} to skip as attach does). The adapter owns
 * the cache from this call on, also when it fails (it is then closed), and closes it at detach (or after it, with
 * the last runtime created with it: xpack_et_adapter_detach). Errors:
 * XPACK_ERR_ARG (already attached, checked first: the cache stays the caller's, unless it is the attached cache
 * itself, which stays the adapter's; else a NULL cache, program, or data with ptd_count above 0: the cache is
 * closed); XPACK_ERR_NOMEM or XPACK_ERR_XNNPACK when XNNPACK cannot be initialized (xpack_initialize_xnnpack: the
 * cache is closed); those of reading the program and its data
 * (xpack_et_program_open_memory, xpack_et_ptd_open_memory, xpack_et_xnn_graph_open, xpack_et_summarize_graph), of
 * binding and sizing its weights (xpack_cache_bind, xpack_replay_size_weights_for_cache) and of deciding the
 * packing families (xpack_cache_family). */
xpack_status xpack_et_adapter_attach_cache(xpack_cache* cache, const void* pte, size_t pte_size,
                                           const void* const* ptds, const size_t* ptd_sizes, size_t ptd_count,
                                           xpack_error* err);

/* The provider to use in place of ExecuTorch's (NULL before attach). */
struct xnn_weights_cache_provider* xpack_et_adapter_provider(void);

/* The attached cache (its stats, refusal, ...), or NULL. To learn which weights miss and why, register
 * xpack_cache_on_miss on it after attach and before ExecuTorch loads the methods. */
xpack_cache* xpack_et_adapter_cache(void);

/* For an app whose own __wrap_xnn_create_runtime_v4 passes xpack_et_adapter_provider() to XNNPACK: call it with
 * each runtime so created, so that detach keeps the cache open while the runtime exists (xpack's stand-in does it
 * itself). Nothing when no cache is attached or runtime is NULL. */
void xpack_et_adapter_runtime_created(xnn_runtime_t runtime);

/* Stops serving (runtimes created from now on get the provider they pass) and closes the cache, at once when no
 * runtime created with its provider exists, else when the last of them is deleted: they keep computing from it.
 * That needs xnn_delete_runtime wrapped by xpack's own stand-in (see above; an app's own __wrap_xnn_delete_runtime
 * tells the adapter nothing, and so does a link where ExecuTorch's calls bypass the wrap, e.g. an LTO unit holding
 * both ExecuTorch and XNNPACK), and the runtimes created by xpack's stand-in or reported by
 * xpack_et_adapter_runtime_created. Otherwise every method (every XNNPACK runtime) must be destroyed before detach:
 * the cache is closed at once, and a method run after it reads unmapped memory. */
void xpack_et_adapter_detach(void);

#ifdef __cplusplus
}
#endif
#endif
