// A kernel lowered to a template instance (pk-lower-gemm, pk-lower-attention): its spec-level
// body is replaced by the facts the emitter instantiates the template from; and the small
// queries both matchers ask of the body.
#pragma once
#include "pk/Dialect/Pk.h"

namespace mlir::pk {
/// Erases the kernel's body (users before producers) and records `facts` as its `attr`
/// (`pk.gemm`, `pk.attention`), marking the kernel device-level. The caller has marked the
/// ops with effects that the template implements (markLowered).
void becomeTemplateInstance(KernelOp kernel, StringRef attr, DictionaryAttr facts);
/// Index of `v` among the kernel's arguments, or -1 when it is not one.
int kernelArgIndex(KernelOp kernel, Value v);
/// Whether `v` is `pk.dim %tensor, d`.
bool isDimOf(Value v, Value tensor, int64_t d);
/// Whether pk-lower-attention would make `kernel` an attention template instance.
bool isAttentionKernel(KernelOp kernel);
/// Whether pk-lower-gemm would make `kernel`, which computes locally, a plain GEMM template
/// instance (its loop matches and covers the whole product).
bool isLocalGemmKernel(KernelOp kernel);
/// Why pk-lower-gemm's fused templates (AG + GEMM, GEMM + all-reduce, GEMM + reduce-scatter)
/// would refuse `kernel` as a whole; empty when one takes it. Tried on a copy, quietly.
std::string whyNotFusedGemm(KernelOp kernel);
} // namespace mlir::pk
