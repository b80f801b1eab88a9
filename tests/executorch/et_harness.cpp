// et_harness: runs a .pte (and its .ptd) with the real ExecuTorch runtime and its XNNPACK backend, as an
// app would, and reports what the backend's weights cache did. C++ only because ExecuTorch's runtime is.
//
//   et_harness PROGRAM.pte [--data W.ptd] [--method M] [--no-weight-cache] [--cache-file PATH]
//                          [--no-execute] [--hold-ms N] [--input-scale S] [--pre-init] [--verbose]
//                          [--xpack-cache CACHE.xpc ... [--xpack-flags N] [--xpack-detach-after-load]]
//                          (the --xpack options: et_harness_xpack only)
// --xpack-cache (the binary built with xpack::et_adapter): xpack's loader inside ExecuTorch. The
// program and .ptd are each loaded from one mapping of the whole file (a BufferDataLoader), the adapter
// binds their constants, ExecuTorch's own weights cache is off, and every runtime ExecuTorch creates gets
// xpack's provider (through the same xnn_create_runtime_v4 wrapper that counts); from_file then counts
// hits inside the .xpc's mapping, and a line "xpack ..." gives the loader's own counters and attach_ms, the time
// xpack_et_adapter_attach took (opening the cache, binding, sizing, probing: part of what the app waits for).
// Given several times, the caches of several classes of CPU: xpack_et_adapter_attach_best keeps one, and lines
// "xpack chosen=K of N: PATH" and "xpack candidate I: ..." say which and what it found of each.
// --xpack-cache-at OFFSET SIZE: the one --xpack-cache file holds the cache at OFFSET (an APK's asset), opened by
// descriptor (xpack_cache_open_fd) and attached (xpack_et_adapter_attach_cache). --xpack-asset MEMBER, given
// once per class of CPU: the one --xpack-cache file is an APK holding each MEMBER, found as Android's
// AAsset_openFileDescriptor64 gives it (xpack_archive_find: descriptor, offset, size), the one this CPU serves
// kept by xpack_cache_open_best_fd and attached; the "xpack chosen" line then names the member.
// --xpack-detach-after-load: xpack_et_adapter_detach once every method is loaded, before they execute (an app that
// detaches before it destroys its methods); the "xpack ..." line is printed just before it.
// --pre-init initializes XNNPACK and ExecuTorch's threadpool before the first load_method, so that its
// time is the program's own (without it, the first load_method of a process also pays for them), and
// waits 50 ms for the pool's threads to stop spinning.
// --input-scale multiplies the float inputs (default 1: values in [-1, 1)): deep random-weight programs
// overflow to inf/NaN with unit inputs, and NaN outputs prove little in a bit comparison.
// --hold-ms keeps the process (and ExecuTorch's open cache file and its lock) alive N ms after printing.
//
// For each method: load_method with the XNNPACK backend options weight_cache_enabled (unless
// --no-weight-cache) and packed_cache_path (with --cache-file), then deterministic inputs (seeded by the
// method name and input index), execute, and one line per output with the XXH3-64 of its bytes.
// Output, one record per line (key=value, space separated):
//   method name=M load_ms=T lookups=N hits=N from_file=N packed=N
//   execute method=M ms=T (the method's first execution)
//   output method=M index=I dtype=D bytes=N xxh3=HEX nonfinite=N (fp32 values that are inf or NaN)
//   total lookups=N hits=N from_file=N served_offsets=N packed=N inserted=N inserted_from_file=N
//         null_inserts=N null_inserts_from_file=N seed_mismatch=N
//         cache_loaded=0|1 cache_entries=N cache_open_errors=N cache_lock_errors=N cache_fresh_write=0|1
// The counts are real signals, not ExecuTorch's word:
//   - the program is linked with -Wl,--wrap=xnn_create_runtime_v4, so every weights-cache provider that
//     the backend hands XNNPACK is wrapped in a counting proxy: lookups/hits are XNNPACK's look_up calls
//     and those that returned an entry; packed counts reserve_space calls (XNNPACK packing a weight anew);
//     inserted counts look_up_or_insert calls with packed bytes, inserted_from_file those answered with an
//     entry in the file's mapping (XNNPACK packed first, the provider served the file's copy);
//     null_inserts counts look_up_or_insert calls without packed bytes (a look-up by another entry point),
//     null_inserts_from_file those answered inside the file's mapping;
//   - from_file counts hits whose address lies in a mapping of the --cache-file inode (/proc/self/maps),
//     served_offsets the distinct file offsets served (by hits or inserts);
//   - seed_mismatch, cache_loaded/entries, open/lock errors and fresh writes are counted from the
//     backend's own log messages (et_pal_emit_log_message is overridden; the messages go to stderr too).
// Operators outside XNNPACK run on the few portable kernels portable_kernels.cpp registers.
// Exit: 0 ran; 1 a runtime error; 2 usage; 77 the program needs kernels not registered here (the
// "Missing operator" messages name them) or another backend.
#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/extension/data_loader/mmap_data_loader.h>
#include <executorch/extension/threadpool/threadpool.h>
#include <executorch/runtime/backend/backend_options_map.h>
#include <executorch/runtime/backend/options.h>
#include <executorch/runtime/core/named_data_map.h>
#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/platform/platform.h>
#include <executorch/runtime/platform/runtime.h>
#include <flatbuffers/flatbuffers.h>
#include <xnnpack.h>
#include <xxhash.h>
#ifdef XPACK_ET_ADAPTER
#include "xpack.h"
#include "xpack_et_adapter.h"
#endif

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

using executorch::aten::ScalarType;
using executorch::aten::Tensor;
using executorch::aten::TensorImpl;
using executorch::extension::MmapDataLoader;
using executorch::runtime::BackendOptions;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::FreeableBuffer;
using executorch::runtime::HierarchicalAllocator;
using executorch::runtime::LoadBackendOptionsMap;
using executorch::runtime::MemoryAllocator;
using executorch::runtime::MemoryManager;
using executorch::runtime::Method;
using executorch::runtime::MethodMeta;
using executorch::runtime::NamedDataMap;
using executorch::runtime::Program;
using executorch::runtime::Result;
using executorch::runtime::Span;
using executorch::runtime::Tag;
using executorch::runtime::TensorLayout;

namespace {

constexpr unsigned kPoolSettleMs = 50;  // --pre-init: see main

// ---------------------------------------------------------------------------------------------------
// Counters
struct Counters {
  uint64_t lookups = 0, hits = 0, from_file = 0, packed = 0, inserted = 0, inserted_from_file = 0;
  uint64_t null_inserts = 0, null_inserts_from_file = 0;
  uint64_t seed_mismatch = 0, cache_open_errors = 0, cache_lock_errors = 0;
  uint64_t cache_entries = 0;
  bool cache_loaded = false, cache_fresh_write = false;
  std::set<uint64_t> served_offsets;
};
Counters g_total;
std::mutex g_mutex;
bool g_verbose = false;
std::string g_cache_file;  // --cache-file, for the mapping check

struct Mapping {
  uintptr_t start, end;
  uint64_t file_offset;
};

// The mappings of the cache file's inode in this process right now.
std::vector<Mapping> cache_file_mappings() {
  std::vector<Mapping> out;
  struct stat st;
  if (g_cache_file.empty() || stat(g_cache_file.c_str(), &st) != 0) return out;
  FILE* f = fopen("/proc/self/maps", "r");
  if (!f) return out;
  char line[4096];
  while (fgets(line, sizeof line, f)) {
    unsigned long start, end, off, inode;
    unsigned dev_major, dev_minor;
    char perms[8];
    if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu", &start, &end, perms, &off, &dev_major, &dev_minor,
               &inode) != 7)
      continue;
    if (inode == (unsigned long)st.st_ino && makedev(dev_major, dev_minor) == st.st_dev)
      out.push_back({(uintptr_t)start, (uintptr_t)end, (uint64_t)off});
  }
  fclose(f);
  return out;
}

// A counting proxy around the provider that ExecuTorch hands XNNPACK. XNNPACK keeps the provider pointer
// for the runtime's lifetime (offset_to_addr at setup), so proxies live until the process ends.
struct Proxy {
  xnn_weights_cache_provider self;  // what XNNPACK sees
  xnn_weights_cache_provider* real;
  Counters* method;                 // counters of the method being loaded (may be null after)
  std::vector<Mapping> maps;
};

size_t proxy_look_up(void* ctx, const xnn_weights_cache_look_up_key* key) {
  Proxy* p = static_cast<Proxy*>(ctx);
  size_t r = p->real->look_up(p->real->context, key);
  std::lock_guard<std::mutex> lock(g_mutex);
  g_total.lookups++;
  if (p->method) p->method->lookups++;
  if (r != SIZE_MAX) {
    g_total.hits++;
    if (p->method) p->method->hits++;
    uintptr_t addr = (uintptr_t)p->real->offset_to_addr(p->real->context, r);
    for (const Mapping& m : p->maps) {
      if (addr >= m.start && addr < m.end) {
        g_total.from_file++;
        if (p->method) p->method->from_file++;
        g_total.served_offsets.insert(m.file_offset + (addr - m.start));
        break;
      }
    }
  }
  return r;
}
void* proxy_reserve_space(void* ctx, size_t n) {
  Proxy* p = static_cast<Proxy*>(ctx);
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_total.packed++;
    if (p->method) p->method->packed++;
  }
  return p->real->reserve_space(p->real->context, n);
}
size_t proxy_look_up_or_insert(void* ctx, const xnn_weights_cache_look_up_key* key, void* ptr, size_t size) {
  Proxy* p = static_cast<Proxy*>(ctx);
  size_t r = p->real->look_up_or_insert(p->real->context, key, ptr, size);
  if (ptr == nullptr) {
    // Without packed bytes this is a look-up by another name (some XNNPACK operators ask this way).
    std::lock_guard<std::mutex> lock(g_mutex);
    g_total.null_inserts++;
    if (r != SIZE_MAX) {
      uintptr_t addr = (uintptr_t)p->real->offset_to_addr(p->real->context, r);
      for (const Mapping& m : p->maps)
        if (addr >= m.start && addr < m.end) {
          g_total.null_inserts_from_file++;
          g_total.served_offsets.insert(m.file_offset + (addr - m.start));
          break;
        }
    }
  } else {
    // XNNPACK packed before (or without) asking: the provider may still answer with its own copy
    // (ExecuTorch compares the bytes with the file's and returns the file's entry when equal).
    std::lock_guard<std::mutex> lock(g_mutex);
    g_total.inserted++;
    if (r != SIZE_MAX) {
      uintptr_t addr = (uintptr_t)p->real->offset_to_addr(p->real->context, r);
      for (const Mapping& m : p->maps)
        if (addr >= m.start && addr < m.end) {
          g_total.inserted_from_file++;
          g_total.served_offsets.insert(m.file_offset + (addr - m.start));
          break;
        }
    }
  }
  return r;
}
bool proxy_is_finalized(void* ctx) {
  Proxy* p = static_cast<Proxy*>(ctx);
  return p->real->is_finalized(p->real->context);
}
void* proxy_offset_to_addr(void* ctx, size_t offset) {
  Proxy* p = static_cast<Proxy*>(ctx);
  return p->real->offset_to_addr(p->real->context, offset);
}
xnn_status proxy_delete_cache(void* ctx) {
  Proxy* p = static_cast<Proxy*>(ctx);
  return p->real->delete_cache(p->real->context);
}

Counters* g_current_method = nullptr;
std::vector<std::unique_ptr<Proxy>> g_proxies;  // every proxy made, freed at exit (guarded by load_method's thread)
// Time the harness itself spends inside load_method (reading /proc/self/maps for each runtime created with a
// cache: about 45 us each here, 0.55 ms over img_dec_small_q8's 12 delegates), taken out of load_ms, which is
// ExecuTorch's alone. Written only by the thread that calls load_method (the wrapper runs on it).
double g_harness_ms = 0;
double now_ms();

}  // namespace

extern "C" enum xnn_status __real_xnn_create_runtime_v4(xnn_subgraph_t, xnn_weights_cache_t, xnn_workspace_t,
                                                        pthreadpool_t, uint32_t, xnn_runtime_t*);

// Creates the runtime, through a counting proxy of `cache` for the runtimes ExecuTorch creates in load_method.
static enum xnn_status create_counted(xnn_subgraph_t subgraph, xnn_weights_cache_t cache, xnn_workspace_t workspace,
                                      pthreadpool_t threadpool, uint32_t flags, xnn_runtime_t* runtime_out) {
  // Only runtimes ExecuTorch creates in load_method are counted (not, say, xpack's probe runtimes).
  if (cache == nullptr || g_current_method == nullptr)
    return __real_xnn_create_runtime_v4(subgraph, cache, workspace, threadpool, flags, runtime_out);
  g_proxies.push_back(std::make_unique<Proxy>());  // lives as long as the process (see Proxy)
  Proxy* p = g_proxies.back().get();
  p->real = cache;
  p->method = g_current_method;
  const double maps_t0 = now_ms();
  p->maps = cache_file_mappings();  // ExecuTorch maps the file before compiling the delegate
  g_harness_ms += now_ms() - maps_t0;
  p->self.context = p;
  p->self.look_up = proxy_look_up;
  p->self.reserve_space = proxy_reserve_space;
  p->self.look_up_or_insert = proxy_look_up_or_insert;
  p->self.is_finalized = proxy_is_finalized;
  p->self.offset_to_addr = proxy_offset_to_addr;
  p->self.delete_cache = proxy_delete_cache;
  enum xnn_status s = __real_xnn_create_runtime_v4(subgraph, &p->self, workspace, threadpool, flags, runtime_out);
  p->method = nullptr;  // look-ups after creation belong to no load_method
  return s;
}

extern "C" enum xnn_status __wrap_xnn_create_runtime_v4(xnn_subgraph_t subgraph, xnn_weights_cache_t cache,
                                                        xnn_workspace_t workspace, pthreadpool_t threadpool,
                                                        uint32_t flags, xnn_runtime_t* runtime_out) {
#ifdef XPACK_ET_ADAPTER
  // As libpack/et_adapter/et_adapter_wrap.c does: xpack's own runtimes (probes, sizing) keep their provider, and
  // the adapter hears of each runtime created with its cache (a detach then keeps the cache until they are gone).
  const bool xpack_served = !xpack_creating_own_runtime() && xpack_et_adapter_provider() != nullptr;
  if (xpack_served) cache = xpack_et_adapter_provider();
  const enum xnn_status s = create_counted(subgraph, cache, workspace, threadpool, flags, runtime_out);
  if (xpack_served && s == xnn_status_success) xpack_et_adapter_runtime_created(*runtime_out);
  return s;
#else
  return create_counted(subgraph, cache, workspace, threadpool, flags, runtime_out);
#endif
}

// The backend's log messages: counted, and passed on to stderr.
extern "C" void et_pal_emit_log_message(et_timestamp_t, et_pal_log_level_t level, const char* filename,
                                        const char*, size_t line, const char* message, size_t length) {
  std::string msg(message, length);
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (msg.find("seed mismatch") != std::string::npos) g_total.seed_mismatch++;
    if (msg.find("Loaded packed weight cache") != std::string::npos) {
      g_total.cache_loaded = true;
      size_t a = msg.rfind('(');
      if (a != std::string::npos) g_total.cache_entries = strtoull(msg.c_str() + a + 1, nullptr, 10);
    }
    if (msg.find("Opened packed weight file for writing") != std::string::npos) g_total.cache_fresh_write = true;
    if (msg.rfind("open(", 0) == 0) g_total.cache_open_errors++;
    if (msg.rfind("flock(", 0) == 0) g_total.cache_lock_errors++;
  }
  if (g_verbose || level == kError || level == kFatal || msg.find("seed mismatch") != std::string::npos ||
      msg.find("packed weight") != std::string::npos || msg.find("Missing operator") != std::string::npos) {
    const char* base = filename ? strrchr(filename, '/') : nullptr;
    fprintf(stderr, "et[%c] %s:%zu %s\n", (char)level, base ? base + 1 : (filename ? filename : "?"), line,
            msg.c_str());
  }
}

namespace {

// ---------------------------------------------------------------------------------------------------
// A .ptd (FlatTensor, FT01/FH01, the 2025-06 named_data layout) as a NamedDataMap over one mapping.
// ExecuTorch's own FlatTensorDataMap (extension/flat_tensor) is not in the vendored subset; the XNNPACK
// backend only calls get_data.
class PtdMap final : public NamedDataMap {
 public:
  static std::unique_ptr<PtdMap> open(const char* path, std::string* err) {
    int fd = ::open(path, O_RDONLY);
    if (fd < 0) { *err = std::string("cannot open ") + path; return nullptr; }
    struct stat st;
    fstat(fd, &st);
    size_t size = (size_t)st.st_size;
    void* base = size ? mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    ::close(fd);
    if (base == MAP_FAILED) { *err = std::string("cannot map ") + path; return nullptr; }
    std::unique_ptr<PtdMap> m(new PtdMap((const uint8_t*)base, size));
    if (!m->parse(err)) return nullptr;
    return m;
  }
  ~PtdMap() override { munmap((void*)base_, size_); }
  const uint8_t* base() const { return base_; }
  size_t size() const { return size_; }

  Result<const TensorLayout> get_tensor_layout(std::string_view) const override {
    return Error::NotSupported;  // only XNNPACK named data (get_data) is served by this harness
  }
  Result<FreeableBuffer> get_data(std::string_view key) const override {
    for (const Entry& e : entries_)
      if (e.key == key) return FreeableBuffer(base_ + e.offset, e.size, nullptr);
    return Error::NotFound;
  }
  Error load_data_into(std::string_view key, void* buffer, size_t size) const override {
    for (const Entry& e : entries_)
      if (e.key == key) {
        if (size > e.size) return Error::InvalidArgument;
        memcpy(buffer, base_ + e.offset, size);
        return Error::Ok;
      }
    return Error::NotFound;
  }
  Result<uint32_t> get_num_keys() const override { return (uint32_t)entries_.size(); }
  Result<const char*> get_key(uint32_t i) const override {
    if (i >= entries_.size()) return Error::InvalidArgument;
    return entries_[i].key.c_str();
  }

 private:
  struct Entry { std::string key; uint64_t offset, size; };
  PtdMap(const uint8_t* b, size_t s) : base_(b), size_(s) {}
  static uint64_t le64(const uint8_t* p) { uint64_t v; memcpy(&v, p, 8); return v; }
  bool parse(std::string* err) {
    if (size_ < 48 || memcmp(base_ + 4, "FT01", 4) != 0 || memcmp(base_ + 8, "FH01", 4) != 0) {
      *err = "not a FlatTensor file (FT01/FH01)";
      return false;
    }
    uint64_t fb_off = le64(base_ + 16), fb_size = le64(base_ + 24), seg_base = le64(base_ + 32);
    if (fb_off > size_ || fb_size > size_ - fb_off || seg_base > size_) { *err = "header out of bounds"; return false; }
    // As in a .pte, the header sits inside the flatbuffer's first bytes and the root offset at 0 already
    // points past it: read the flatbuffer from the start of the file (flatbuffer_offset + size bytes).
    flatbuffers::Verifier v(base_, fb_off + fb_size);
    auto root = flatbuffers::GetRoot<flatbuffers::Table>(base_);
    using TV = flatbuffers::Vector<flatbuffers::Offset<flatbuffers::Table>>;
    if (!root->VerifyTableStart(v)) { *err = "bad flatbuffer root"; return false; }
    auto segments = root->GetPointer<const TV*>(4 + 2 * 1);
    auto named = root->GetPointer<const TV*>(4 + 2 * 2);
    if (!segments || !named) { *err = "no segments/named_data (the early-2025 layout is not supported)"; return false; }
    for (flatbuffers::uoffset_t i = 0; i < named->size(); ++i) {
      const flatbuffers::Table* nd = named->Get(i);
      auto key = nd->GetPointer<const flatbuffers::String*>(4);
      uint32_t seg = nd->GetField<uint32_t>(6, 0);
      if (!key || seg >= segments->size()) { *err = "bad named_data entry"; return false; }
      const flatbuffers::Table* s = segments->Get(seg);
      uint64_t off = seg_base + s->GetField<uint64_t>(4, 0), sz = s->GetField<uint64_t>(6, 0);
      if (off > size_ || sz > size_ - off) { *err = "segment out of bounds"; return false; }
      entries_.push_back({key->str(), off, sz});
    }
    return true;
  }
  const uint8_t* base_;
  size_t size_;
  std::vector<Entry> entries_;
};

// ---------------------------------------------------------------------------------------------------
// Memory: every allocation from the heap, aligned; the planned buffers sized by the method's metadata.
class HeapAllocator final : public MemoryAllocator {
 public:
  HeapAllocator() : MemoryAllocator(0, nullptr) {}
  ~HeapAllocator() override { reset(); }
  void* allocate(size_t size, size_t alignment) override {
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    void* p = nullptr;
    if (posix_memalign(&p, alignment, size ? size : 1) != 0) return nullptr;
    blocks_.push_back(p);
    return p;
  }
  void reset() override {
    for (void* p : blocks_) free(p);
    blocks_.clear();
  }

 private:
  std::vector<void*> blocks_;
};

uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

size_t element_size(ScalarType t) {
  switch (t) {
    case ScalarType::Byte: case ScalarType::Char: case ScalarType::Bool: return 1;
    case ScalarType::Short: case ScalarType::Half: case ScalarType::BFloat16: return 2;
    case ScalarType::Int: case ScalarType::Float: return 4;
    case ScalarType::Long: case ScalarType::Double: return 8;
    default: return 0;
  }
}

// Deterministic values, seeded by method name and input index: floats in [-1, 1), small integers.
double g_input_scale = 1.0;

void fill(void* data, size_t n, ScalarType t, uint64_t seed) {
  uint64_t s = seed;
  for (size_t i = 0; i < n; ++i) {
    uint64_t r = splitmix(s);
    double u = ((double)(r >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0) * g_input_scale;
    switch (t) {
      case ScalarType::Float: ((float*)data)[i] = (float)u; break;
      case ScalarType::Double: ((double*)data)[i] = u; break;
      case ScalarType::Half: {
        executorch::aten::Half h((float)u);
        ((executorch::aten::Half*)data)[i] = h;
        break;
      }
      case ScalarType::BFloat16: {
        executorch::aten::BFloat16 h((float)u);
        ((executorch::aten::BFloat16*)data)[i] = h;
        break;
      }
      case ScalarType::Byte: ((uint8_t*)data)[i] = (uint8_t)(r & 0xFF); break;
      case ScalarType::Char: ((int8_t*)data)[i] = (int8_t)(r & 0xFF); break;
      case ScalarType::Bool: ((uint8_t*)data)[i] = (uint8_t)(r & 1); break;
      case ScalarType::Short: ((int16_t*)data)[i] = (int16_t)(r % 64); break;
      case ScalarType::Int: ((int32_t*)data)[i] = (int32_t)(r % 64); break;
      case ScalarType::Long: ((int64_t*)data)[i] = (int64_t)(r % 64); break;
      default: break;
    }
  }
}

uint64_t seed_of(const char* method, size_t index) {
  return XXH3_64bits_withSeed(method, strlen(method), 0x7870616b /* "xpak" */ + index);
}

double now_ms() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int usage() {
  fprintf(stderr,
          "usage: et_harness PROGRAM.pte [--data W.ptd] [--method M] [--no-weight-cache] [--cache-file PATH]\n"
          "                  [--no-execute] [--hold-ms N] [--input-scale S] [--pre-init] [--loads N] [--verbose]\n"
          "                  [--xpack-cache FILE ... [--xpack-cache-at OFFSET SIZE | --xpack-asset MEMBER ...]]\n"
          "                  [--xpack-flags N] [--xpack-detach-after-load]\n");
  return 2;
}

#ifdef XPACK_ET_ADAPTER
// What xpack_cache_open_best(_fd) found of each candidate: "xpack candidate I: ..." lines.
void print_candidates(const std::vector<xpack_cache_candidate>& candidates) {
  for (size_t i = 0; i < candidates.size(); i++) {
    const xpack_cache_candidate& c = candidates[i];
    printf("xpack candidate %zu: tried=%d opened=%d refused_whole=%d other_program=%d entries=%" PRIu64
           " entries_served=%" PRIu64 "%s%s\n", i, c.tried, c.tried && c.open_error.status == XPACK_OK, c.refused_whole,
           c.other_program, c.entries, c.entries_served, c.open_error.status == XPACK_OK ? "" : " error=",
           c.open_error.message);
  }
}
#endif

// One loaded method with everything it points into.
struct Loaded {
  std::unique_ptr<HeapAllocator> method_alloc, temp_alloc;
  std::vector<std::vector<uint8_t>> planned;
  std::vector<Span<uint8_t>> spans;
  std::unique_ptr<HierarchicalAllocator> hier;
  std::unique_ptr<MemoryManager> mm;
  std::unique_ptr<Method> method;
};

}  // namespace

#ifdef XPACK_ET_ADAPTER
// The line "xpack ...": the attached cache's counters (nothing when none is attached).
static void print_xpack_line(double attach_ms) {
  if (!xpack_et_adapter_cache()) return;
  xpack_stats xs;
  xpack_cache_stats(xpack_et_adapter_cache(), &xs);
  const char* refusal = xpack_cache_refusal(xpack_et_adapter_cache());
  printf("xpack attach_ms=%.3f lookups=%" PRIu64 " hits=%" PRIu64 " hits_after_packing=%" PRIu64 " misses=%" PRIu64
         " misses_unbound=%" PRIu64 " misses_not_found=%" PRIu64 " refused_incompatible=%" PRIu64
         " refused_corrupt=%" PRIu64 " refused_mismatch=%" PRIu64 " refused_probe=%" PRIu64
         " refused_size=%" PRIu64 " refused_unsized=%" PRIu64 " misses_reused=%" PRIu64 " heap_fallbacks=%" PRIu64
         " heap_fallback_bytes=%" PRIu64 " refusal=%s\n",
         attach_ms, xs.lookups, xs.hits, xs.hits_after_packing, xs.misses, xs.misses_unbound, xs.misses_not_found,
         xs.refused_incompatible, xs.refused_corrupt, xs.refused_mismatch, xs.refused_probe, xs.refused_size,
         xs.refused_unsized, xs.misses_reused, xs.heap_fallbacks, xs.heap_fallback_bytes, refusal ? "yes" : "none");
  if (refusal) printf("xpack refusal: %s\n", refusal);
}
#endif

int main(int argc, char** argv) {
  const char* pte = nullptr;
  const char* ptd = nullptr;
  std::vector<std::string> only_methods;
  bool weight_cache = true, execute = true;
  long hold_ms = 0;
  int loads = 1;
  bool pre_init = false;
  std::vector<const char*> xpack_cache_paths;  // every --xpack-cache: one cache per class of CPU
  bool xpack_detach_after_load = false;        // --xpack-detach-after-load
  unsigned xpack_flags = 0;  // xpack_cache_open flags, e.g. 16 = XPACK_OPEN_CHECK_REGIONS
  double attach_ms = 0;      // how long xpack_et_adapter_attach took
  // --xpack-cache-at OFFSET SIZE: the one --xpack-cache file holds the cache at OFFSET (an APK's asset), opened
  // by descriptor (xpack_cache_open_fd) and handed to xpack_et_adapter_attach_cache
  bool xpack_at = false;
  unsigned long long xpack_at_offset = 0, xpack_at_size = 0;
  std::vector<const char*> xpack_assets;  // --xpack-asset: members of the one --xpack-cache file (an APK)
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--data" && i + 1 < argc) ptd = argv[++i];
    else if (a == "--method" && i + 1 < argc) only_methods.push_back(argv[++i]);
    else if (a == "--cache-file" && i + 1 < argc) g_cache_file = argv[++i];
    else if (a == "--no-weight-cache") weight_cache = false;
    else if (a == "--no-execute") execute = false;
    else if (a == "--verbose") g_verbose = true;
    else if (a == "--hold-ms" && i + 1 < argc) hold_ms = atol(argv[++i]);
    else if (a == "--input-scale" && i + 1 < argc) g_input_scale = atof(argv[++i]);
    else if (a == "--pre-init") pre_init = true;
    else if (a == "--loads" && i + 1 < argc && atoi(argv[i + 1]) > 0) loads = atoi(argv[++i]);
    else if (a == "--xpack-cache" && i + 1 < argc) xpack_cache_paths.push_back(argv[++i]);
    else if (a == "--xpack-flags" && i + 1 < argc) xpack_flags = (unsigned)strtoul(argv[++i], nullptr, 0);
    else if (a == "--xpack-cache-at" && i + 2 < argc) {
      xpack_at_offset = strtoull(argv[++i], nullptr, 0);
      xpack_at_size = strtoull(argv[++i], nullptr, 0);
      xpack_at = true;
    }
    else if (a == "--xpack-asset" && i + 1 < argc) xpack_assets.push_back(argv[++i]);
    else if (a == "--xpack-detach-after-load") xpack_detach_after_load = true;
    else if (a[0] != '-' && !pte) pte = argv[i];
    else return usage();
  }
  const bool xpack_cache = !xpack_cache_paths.empty();
  (void)xpack_flags;
  (void)xpack_detach_after_load;
  (void)attach_ms;
  if (!pte) return usage();
  if (!g_cache_file.empty() && !weight_cache) {
    fprintf(stderr, "et_harness: --cache-file needs the weight cache (drop --no-weight-cache)\n");
    return 2;
  }
  if (g_cache_file.size() >= executorch::runtime::kMaxOptionValueLength) {
    fprintf(stderr, "et_harness: --cache-file path longer than ExecuTorch's option limit (%zu)\n",
            (size_t)executorch::runtime::kMaxOptionValueLength - 1);
    return 2;
  }
  executorch::runtime::runtime_init();
  if (pre_init) {
    if (xnn_initialize(nullptr) != xnn_status_success) {
      fprintf(stderr, "et_harness: xnn_initialize failed\n");
      return 1;
    }
    (void)executorch::extension::threadpool::get_pthreadpool();
    // The pool's new threads spin-wait for their first work for about 20 to 25 ms after creation (2-vCPU
    // VM, measured): a load_method started in that window shared the CPUs with them and took 8 to 27 ms
    // instead of 0.4. Let them go to sleep first, as they have in an app that loads after its start-up.
    usleep(kPoolSettleMs * 1000);
  }

#ifndef XPACK_ET_ADAPTER
  if (xpack_cache) {
    fprintf(stderr, "et_harness: --xpack-cache needs et_harness_xpack (built with the xpack adapter)\n");
    return 2;
  }
#endif
  if (xpack_cache && !g_cache_file.empty()) {
    fprintf(stderr, "et_harness: --xpack-cache replaces ExecuTorch's cache: drop --cache-file\n");
    return 2;
  }
  executorch::runtime::DataLoader* program_loader = nullptr;
  std::unique_ptr<MmapDataLoader> mmap_loader;
  std::unique_ptr<executorch::extension::BufferDataLoader> buffer_loader;
  const void* pte_map = nullptr;
  size_t pte_size = 0;
  if (xpack_cache) {
    // One mapping of the whole program: ExecuTorch then hands XNNPACK addresses inside it.
    int fd = ::open(pte, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
      fprintf(stderr, "et_harness: cannot open %s\n", pte);
      return 1;
    }
    pte_size = (size_t)st.st_size;
    pte_map = mmap(nullptr, pte_size, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (pte_map == MAP_FAILED) {
      fprintf(stderr, "et_harness: cannot map %s\n", pte);
      return 1;
    }
    buffer_loader.reset(new executorch::extension::BufferDataLoader(pte_map, pte_size));
    program_loader = buffer_loader.get();
  } else {
    auto loader = MmapDataLoader::from(pte, MmapDataLoader::MlockConfig::NoMlock);
    if (!loader.ok()) {
      fprintf(stderr, "et_harness: cannot open %s (error 0x%x)\n", pte, (unsigned)loader.error());
      return 1;
    }
    mmap_loader.reset(new MmapDataLoader(std::move(loader.get())));
    program_loader = mmap_loader.get();
  }
  auto program = Program::load(program_loader, Program::Verification::InternalConsistency);
  if (!program.ok()) {
    fprintf(stderr, "et_harness: cannot load program %s (error 0x%x)\n", pte, (unsigned)program.error());
    return 1;
  }
  std::unique_ptr<PtdMap> data_map;
  if (ptd) {
    std::string err;
    data_map = PtdMap::open(ptd, &err);
    if (!data_map) {
      fprintf(stderr, "et_harness: %s: %s\n", ptd, err.c_str());
      return 1;
    }
  }

#ifdef XPACK_ET_ADAPTER
  if (xpack_cache) {
    const void* ptd_base = data_map ? (const void*)data_map->base() : nullptr;
    size_t ptd_size = data_map ? data_map->size() : 0;
    xpack_error xerr;
    const double attach_t0 = now_ms();
    xpack_status attached;
    size_t chosen = 0;
    std::vector<xpack_cache_candidate> candidates(xpack_cache_paths.size());
    if (xpack_at && xpack_cache_paths.size() == 1) {  // as an Android app opens an asset of its APK
      const int fd = open(xpack_cache_paths[0], O_RDONLY | O_CLOEXEC);
      const xpack_open_limits limits = {XPACK_ET_ADAPTER_SMALL_CACHE_BYTES, 0};
      ::xpack_cache* opened = nullptr;  // ::, as main names a flag xpack_cache
      attached = fd < 0 ? XPACK_ERR_IO
                        : xpack_cache_open_fd(fd, xpack_at_offset, xpack_at_size, xpack_cache_paths[0], xpack_flags,
                                              &limits, &opened, &xerr);
      if (fd < 0) snprintf(xerr.message, sizeof xerr.message, "%s: cannot open", xpack_cache_paths[0]);
      if (fd >= 0) close(fd);
      if (attached == XPACK_OK) {
        attached = xpack_et_adapter_attach_cache(opened, pte_map, pte_size, data_map ? &ptd_base : nullptr,
                                                 data_map ? &ptd_size : nullptr, data_map ? 1 : 0, &xerr);
      }
    } else if (!xpack_assets.empty() && xpack_cache_paths.size() == 1) {  // one asset per class of CPU in an APK
      const int fd = open(xpack_cache_paths[0], O_RDONLY | O_CLOEXEC);
      const xpack_open_limits limits = {XPACK_ET_ADAPTER_SMALL_CACHE_BYTES, 0};
      std::vector<xpack_cache_range> ranges;
      std::vector<std::string> names;
      attached = fd < 0 ? XPACK_ERR_IO : XPACK_OK;
      if (fd < 0) snprintf(xerr.message, sizeof xerr.message, "%s: cannot open", xpack_cache_paths[0]);
      for (const char* member : xpack_assets) names.push_back(std::string(xpack_cache_paths[0]) + "!/" + member);
      for (size_t i = 0; attached == XPACK_OK && i < xpack_assets.size(); i++) {
        xpack_archive_member found;
        attached = xpack_archive_find(fd, xpack_cache_paths[0], xpack_assets[i], &found, &xerr);
        ranges.push_back({fd, found.data_offset, found.stored_size, names[i].c_str()});
      }
      candidates.resize(ranges.size());
      ::xpack_cache* opened = nullptr;
      if (attached == XPACK_OK) {
        attached = xpack_cache_open_best_fd(ranges.data(), ranges.size(), xpack_flags, &limits, &opened, &chosen,
                                            candidates.data(), &xerr);
      }
      if (attached == XPACK_OK) {
        attached = xpack_et_adapter_attach_cache(opened, pte_map, pte_size, data_map ? &ptd_base : nullptr,
                                                 data_map ? &ptd_size : nullptr, data_map ? 1 : 0, &xerr);
      }
      if (fd >= 0) close(fd);  // the loader keeps its own mapping
      if (attached == XPACK_OK) {
        printf("xpack chosen=%zu of %zu: %s\n", chosen, names.size(), names[chosen].c_str());
        print_candidates(candidates);
      }
      chosen = 0;  // the APK: from_file counts hits inside its mapping
    } else if (xpack_cache_paths.size() == 1) {  // the one-file call, as most apps make it
      attached = xpack_et_adapter_attach(xpack_cache_paths[0], xpack_flags, pte_map, pte_size, data_map ? &ptd_base : nullptr,
                                         data_map ? &ptd_size : nullptr, data_map ? 1 : 0, &xerr);
    } else {
      attached = xpack_et_adapter_attach_best(xpack_cache_paths.data(), xpack_cache_paths.size(), xpack_flags, pte_map,
                                              pte_size, data_map ? &ptd_base : nullptr, data_map ? &ptd_size : nullptr,
                                              data_map ? 1 : 0, &chosen, candidates.data(), &xerr);
    }
    if (attached != XPACK_OK) {
      fprintf(stderr, "et_harness: xpack adapter: %s\n", xerr.message);
      return 1;
    }
    attach_ms = now_ms() - attach_t0;
    if (xpack_cache_paths.size() > 1) {
      printf("xpack chosen=%zu of %zu: %s\n", chosen, xpack_cache_paths.size(), xpack_cache_paths[chosen]);
      print_candidates(candidates);
    }
    g_cache_file = xpack_cache_paths[chosen];  // from_file: hits inside the .xpc's mapping
    weight_cache = false;        // ExecuTorch's own cache stays off
  }
#endif
  // Backend options, per program, through load_method (as the backend's own docs say).
  BackendOptions<2> xnn_opts;
  // Set either way: a backend built with ENABLE_XNNPACK_WEIGHTS_CACHE enables its (in-memory) cache by
  // default, so "no cache" must say false.
  xnn_opts.set_option("weight_cache_enabled", weight_cache);
  if (weight_cache) {
    if (!g_cache_file.empty()) xnn_opts.set_option("packed_cache_path", g_cache_file.c_str());
  }
  LoadBackendOptionsMap options;
  if (options.set_options("XnnpackBackend", xnn_opts.view()) != Error::Ok) {
    fprintf(stderr, "et_harness: cannot set backend options\n");
    return 1;
  }

  std::vector<std::string> names;
  for (size_t i = 0; i < program->num_methods(); ++i) {
    auto n = program->get_method_name(i);
    if (!n.ok()) return 1;
    if (only_methods.empty() || std::find(only_methods.begin(), only_methods.end(), *n) != only_methods.end())
      names.push_back(*n);
  }
  if (names.empty()) {
    fprintf(stderr, "et_harness: no such method\n");
    return 2;
  }

  // --loads N: every method loaded and executed N times over, each load after the methods of the one before are
  // destroyed (their XNNPACK runtimes deleted), as an app that loads the model at each session. The last load's
  // methods live until the process ends, as with one load (ExecuTorch's own cache file is written when they go).
  std::vector<Loaded> loaded;
  for (int load = 0; load < loads; ++load) {
    // Load every method first (as an app does at start), then execute each: methods sharing weights
    // share the backend's cache entries while all are loaded.
    loaded.clear();
    loaded.resize(names.size());
    std::vector<Counters> per(names.size());
    for (size_t m = 0; m < names.size(); ++m) {
      const char* name = names[m].c_str();
      auto meta = program->method_meta(name);
      if (!meta.ok()) return 1;
      for (size_t b = 0; b < meta->num_backends(); ++b) {
        auto bn = meta->get_backend_name(b);
        if (bn.ok() && strcmp(*bn, "XnnpackBackend") != 0) {
          printf("skip method=%s reason=backend-%s\n", name, *bn);
          fprintf(stderr, "et_harness: %s uses the %s backend, not built here\n", name, *bn);
          return 77;
        }
      }
      Loaded& L = loaded[m];
      L.method_alloc.reset(new HeapAllocator());
      L.temp_alloc.reset(new HeapAllocator());
      for (size_t b = 0; b < meta->num_memory_planned_buffers(); ++b)
        L.planned.emplace_back((size_t)meta->memory_planned_buffer_size(b).get());
      for (auto& buf : L.planned) L.spans.push_back({buf.data(), buf.size()});
      L.hier.reset(new HierarchicalAllocator({L.spans.data(), L.spans.size()}));
      L.mm.reset(new MemoryManager(L.method_alloc.get(), L.hier.get(), L.temp_alloc.get()));
      g_current_method = &per[m];
      const double harness_before = g_harness_ms;
      double t0 = now_ms();
      auto method = program->load_method(name, L.mm.get(), nullptr, data_map.get(), &options);
      double t1 = now_ms() - (g_harness_ms - harness_before);  // the harness's own reading, not ExecuTorch's
      g_current_method = nullptr;
      if (!method.ok()) {
        if (method.error() == Error::OperatorMissing) {
          printf("skip method=%s reason=operator-missing\n", name);
          fprintf(stderr,
                  "et_harness: %s: needs kernels outside XNNPACK that this harness does not register "
                  "(see 'Missing operator' above; tests/executorch/portable_kernels.cpp)\n", name);
          return 77;
        }
        fprintf(stderr, "et_harness: load_method(%s) failed (error 0x%x)\n", name, (unsigned)method.error());
        return 1;
      }
      L.method.reset(new Method(std::move(method.get())));
      printf("method name=%s load_ms=%.3f lookups=%" PRIu64 " hits=%" PRIu64 " from_file=%" PRIu64
             " packed=%" PRIu64 "\n", name, t1 - t0, per[m].lookups, per[m].hits, per[m].from_file,
             per[m].packed);
    }

#ifdef XPACK_ET_ADAPTER
    // --xpack-detach-after-load: the app detaches with its methods loaded (it destroys them later): they must run
    // from the cache all the same, which stays open until their runtimes are deleted.
    if (xpack_detach_after_load && xpack_et_adapter_cache()) {
      print_xpack_line(attach_ms);
      xpack_et_adapter_detach();
      printf("xpack detached before execute\n");
    }
#endif
    if (execute) {
      for (size_t m = 0; m < names.size(); ++m) {
        const char* name = names[m].c_str();
        Method& method = *loaded[m].method;
        auto meta = program->method_meta(name);
        std::vector<std::vector<uint8_t>> in_bufs(meta->num_inputs());
        std::vector<std::vector<TensorImpl::SizesType>> in_sizes(meta->num_inputs());
        std::vector<std::vector<TensorImpl::DimOrderType>> in_dims(meta->num_inputs());
        std::vector<std::unique_ptr<TensorImpl>> impls(meta->num_inputs());
        for (size_t i = 0; i < meta->num_inputs(); ++i) {
          auto tag = meta->input_tag(i);
          if (!tag.ok()) return 1;
          if (*tag != Tag::Tensor) {
            fprintf(stderr, "et_harness: %s input %zu is not a tensor (tag %d): not supported\n", name, i, (int)*tag);
            printf("skip method=%s reason=non-tensor-input\n", name);
            return 77;
          }
          auto info = meta->input_tensor_meta(i);
          size_t es = element_size(info->scalar_type());
          if (es == 0) {
            fprintf(stderr, "et_harness: %s input %zu has an unsupported dtype %d\n", name, i, (int)info->scalar_type());
            return 77;
          }
          size_t n = 1;
          for (int32_t d : info->sizes()) { in_sizes[i].push_back(d); n *= (size_t)d; }
          for (uint8_t d : info->dim_order()) in_dims[i].push_back(d);
          in_bufs[i].assign(n * es + 1, 0);
          fill(in_bufs[i].data(), n, info->scalar_type(), seed_of(name, i));
          impls[i].reset(new TensorImpl(info->scalar_type(), (ssize_t)in_sizes[i].size(), in_sizes[i].data(),
                                        in_bufs[i].data(), in_dims[i].data()));
          Error e = method.set_input(EValue(Tensor(impls[i].get())), i);
          if (e != Error::Ok) {
            fprintf(stderr, "et_harness: set_input(%s, %zu) failed (0x%x)\n", name, i, (unsigned)e);
            return 1;
          }
        }
        const double exec_t0 = now_ms();
        Error e = method.execute();
        const double exec_ms = now_ms() - exec_t0;
        if (e != Error::Ok) {
          fprintf(stderr, "et_harness: execute(%s) failed (0x%x)\n", name, (unsigned)e);
          return 1;
        }
        printf("execute method=%s ms=%.3f\n", name, exec_ms);
        for (size_t o = 0; o < method.outputs_size(); ++o) {
          const EValue& v = method.get_output(o);
          if (v.isTensor()) {
            const Tensor& t = v.toTensor();
            // Non-finite values make a bit comparison weak (every NaN may look alike): count them.
            size_t nonfinite = 0;
            if (t.scalar_type() == ScalarType::Float) {
              const float* f = t.const_data_ptr<float>();
              for (ssize_t i = 0; i < t.numel(); ++i) nonfinite += !std::isfinite(f[i]);
            }
            printf("output method=%s index=%zu dtype=%d bytes=%zu xxh3=%016" PRIx64 " nonfinite=%zu\n", name, o,
                   (int)t.scalar_type(), (size_t)t.nbytes(), (uint64_t)XXH3_64bits(t.const_data_ptr(), t.nbytes()),
                   nonfinite);
          } else {
            printf("output method=%s index=%zu tag=%d\n", name, o, (int)v.tag);
          }
        }
      }
    }
  }

  printf("total lookups=%" PRIu64 " hits=%" PRIu64 " from_file=%" PRIu64 " served_offsets=%zu packed=%" PRIu64
         " inserted=%" PRIu64 " inserted_from_file=%" PRIu64 " null_inserts=%" PRIu64 " null_inserts_from_file=%" PRIu64 " seed_mismatch=%" PRIu64 " cache_loaded=%d cache_entries=%" PRIu64
         " cache_open_errors=%" PRIu64 " cache_lock_errors=%" PRIu64 " cache_fresh_write=%d\n",
         g_total.lookups, g_total.hits, g_total.from_file, g_total.served_offsets.size(), g_total.packed,
         g_total.inserted, g_total.inserted_from_file, g_total.null_inserts, g_total.null_inserts_from_file, g_total.seed_mismatch, (int)g_total.cache_loaded, g_total.cache_entries,
         g_total.cache_open_errors, g_total.cache_lock_errors, (int)g_total.cache_fresh_write);
#ifdef XPACK_ET_ADAPTER
  // Every method has run once: the start is over, as docs/INTEGRATION.md tells apps to call it then (a cache
  // skipped as cold is read for the next start).
  xpack_cache_warm_up(xpack_et_adapter_cache());
  print_xpack_line(attach_ms);
#endif
  fflush(stdout);
  if (hold_ms > 0) usleep((useconds_t)(hold_ms * 1000));
  return 0;
}
