// The few portable (reference) kernels that the partially delegated real test files run between their
// XNNPACK delegates (img_dec_small_q8, img_enc_fp32, person_detect_fp32/int8, stress_mlp), registered
// by hand: ExecuTorch's codegen (torchgen, functions.yaml) is not part of this build. Their sources are
// compiled by tests/executorch/runtime/CMakeLists.txt (libet_portable_ops.a) from the vendored
// kernels/portable/cpu; the declarations below repeat their signatures (a mismatch is a link error).
// Registered from static initializers: link this object into the program, not from an archive.
#include <executorch/extension/kernel_util/make_boxed_from_unboxed_functor.h>
#include <executorch/runtime/kernel/kernel_includes.h>
#include <executorch/runtime/kernel/operator_registry.h>

#include <optional>
#include <tuple>

namespace torch {
namespace executor {
namespace native {
using Tensor = executorch::aten::Tensor;
using IntArrayRef = executorch::aten::ArrayRef<int64_t>;
using executorch::aten::MemoryFormat;
using executorch::aten::OptionalArrayRef;
using executorch::aten::Scalar;
using executorch::runtime::KernelRuntimeContext;

Tensor& to_copy_out(KernelRuntimeContext&, const Tensor&, bool, std::optional<MemoryFormat>, Tensor&);
Tensor& unsqueeze_copy_out(KernelRuntimeContext&, const Tensor&, int64_t, Tensor&);
Tensor& expand_copy_out(KernelRuntimeContext&, const Tensor&, IntArrayRef, bool, Tensor&);
Tensor& convolution_out(KernelRuntimeContext&, const Tensor&, const Tensor&, const std::optional<Tensor>&,
                        IntArrayRef, IntArrayRef, IntArrayRef, bool, IntArrayRef, int64_t, Tensor&);
Tensor& squeeze_copy_dims_out(KernelRuntimeContext&, const Tensor&, IntArrayRef, Tensor&);
Tensor& round_out(KernelRuntimeContext&, const Tensor&, Tensor&);
Tensor& clone_out(KernelRuntimeContext&, const Tensor&, std::optional<MemoryFormat>, Tensor&);
Tensor& permute_copy_out(KernelRuntimeContext&, const Tensor&, IntArrayRef, Tensor&);
Tensor& view_copy_out(KernelRuntimeContext&, const Tensor&, IntArrayRef, Tensor&);
Tensor& _clone_dim_order_out(KernelRuntimeContext&, const Tensor&, bool, OptionalArrayRef<int64_t>, Tensor&);
Tensor& _to_dim_order_copy_out(KernelRuntimeContext&, const Tensor&, bool, OptionalArrayRef<int64_t>, Tensor&);
Tensor& select_copy_int_out(KernelRuntimeContext&, const Tensor&, int64_t, int64_t, Tensor&);
Tensor& clamp_out(KernelRuntimeContext&, const Tensor&, const std::optional<Scalar>&, const std::optional<Scalar>&,
                  Tensor&);
Tensor& index_select_out(KernelRuntimeContext&, const Tensor&, int64_t, const Tensor&, Tensor&);
std::tuple<Tensor&, Tensor&, Tensor&> _native_batch_norm_legit_no_training_out(
    KernelRuntimeContext&, const Tensor&, const std::optional<Tensor>&, const std::optional<Tensor>&,
    const Tensor&, const Tensor&, double, double, Tensor&, Tensor&, Tensor&);
}  // namespace native
}  // namespace executor
}  // namespace torch

namespace {
namespace native = torch::executor::native;
using executorch::runtime::EValue;
using executorch::runtime::KernelRuntimeContext;
using executorch::runtime::Span;

// Overloaded names: the context-taking variant, by type.
using DimOrderFn = native::Tensor& (*)(KernelRuntimeContext&, const native::Tensor&, bool,
                                       native::OptionalArrayRef<int64_t>, native::Tensor&);
constexpr DimOrderFn clone_dim_order = native::_clone_dim_order_out;
constexpr DimOrderFn to_dim_order_copy = native::_to_dim_order_copy_out;

std::optional<native::Tensor> optional_tensor(EValue* v) {
  if (v->isNone()) return std::nullopt;
  return v->toTensor();
}

// Three outputs: kernel_util's wrapper takes one; boxed by hand in schema order
// (input, weight?, bias?, running_mean, running_var, momentum, eps, out, mean_out, invstd_out).
void batch_norm_no_training(KernelRuntimeContext& ctx, Span<EValue*> stack) {
  ET_CHECK_MSG(stack.size() >= 10, "_native_batch_norm_legit_no_training.out: %zu arguments", stack.size());
  native::_native_batch_norm_legit_no_training_out(
      ctx, stack[0]->toTensor(), optional_tensor(stack[1]), optional_tensor(stack[2]), stack[3]->toTensor(),
      stack[4]->toTensor(), stack[5]->toDouble(), stack[6]->toDouble(), stack[7]->toTensor(),
      stack[8]->toTensor(), stack[9]->toTensor());
}

}  // namespace

EXECUTORCH_LIBRARY(aten, "_to_copy.out", native::to_copy_out);
EXECUTORCH_LIBRARY(aten, "unsqueeze_copy.out", native::unsqueeze_copy_out);
EXECUTORCH_LIBRARY(aten, "expand_copy.out", native::expand_copy_out);
EXECUTORCH_LIBRARY(aten, "convolution.out", native::convolution_out);
EXECUTORCH_LIBRARY(aten, "squeeze_copy.dims_out", native::squeeze_copy_dims_out);
EXECUTORCH_LIBRARY(aten, "round.out", native::round_out);
EXECUTORCH_LIBRARY(aten, "clone.out", native::clone_out);
EXECUTORCH_LIBRARY(aten, "permute_copy.out", native::permute_copy_out);
EXECUTORCH_LIBRARY(aten, "view_copy.out", native::view_copy_out);
EXECUTORCH_LIBRARY(dim_order_ops, "_clone_dim_order.out", clone_dim_order);
EXECUTORCH_LIBRARY(dim_order_ops, "_to_dim_order_copy.out", to_dim_order_copy);
EXECUTORCH_LIBRARY(aten, "select_copy.int_out", native::select_copy_int_out);
EXECUTORCH_LIBRARY(aten, "clamp.out", native::clamp_out);
EXECUTORCH_LIBRARY(aten, "index_select.out", native::index_select_out);
static auto registered_batch_norm = executorch::runtime::register_kernel(
    executorch::runtime::Kernel("aten::_native_batch_norm_legit_no_training.out", batch_norm_no_training));
