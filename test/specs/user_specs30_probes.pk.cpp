// Reproducers of the thirtieth set's findings (test/specs/specs30_findings.md). Every kernel here compiles to CUDA
// with no error or warning; test/Compile/user_specs30.test shows what each does now.
#include <pk/spec.h>
using namespace pk;

// P1, P2 (finding 1, fixed by refusal): C++ gives b = 5u - 6u = 4294967295 and wraps seed * 2654435761u modulo 2^32,
// which pkc's signed 64-bit index arithmetic computed as -1 and as the 64-bit product; both are now errors at the
// operator (-D PK_PROBE_UNSIGNED compiles them).
#ifdef PK_PROBE_UNSIGNED
PK_KERNEL void p1_unsigned_wrap(Tensor<f32, 1> y) {
  unsigned a = 5u;
  unsigned b = a - 6u;
  for (auto i : tiles(y.size(), {256})) store(y, zeros<f32, 256>() + float(b), i);
}

PK_KERNEL void p2_unsigned_seed(Tensor<f32, 2> y, unsigned seed) {
  unsigned mixed = seed * 2654435761u;
  for (auto [m, n] : tiles(y.rows(), y.cols(), {16, 64})) store(y, uniform<16, 64>(mixed, m, n), m, n);
}
#endif

// P3 (finding 9, fixed): a default argument was dropped without a word (the launcher and the JIT required it); it
// is refused at the default now (-D PK_PROBE_DEFAULT_ARG).
#ifdef PK_PROBE_DEFAULT_ARG
PK_KERNEL void p3_default_arg(Tensor<f32, 1> x, Tensor<f32, 1> y, float s = 2.0f) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i) * s, i);
}
#endif

// P4 (finding 6). A GEMM beside a kernel of the spec named like its general-path twin: the twin is dropped (no
// fallback= on the pk-template line) and nothing is said.
PK_KERNEL void p4_gemm(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<bf16, 2> c) {
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(c, cast<bf16>(acc), m, n);
  }
}
PK_KERNEL void p4_gemm__general(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i) * 2.0f, i);
}

// P5 (finding 4). The spec-level source of the .mlir specs test/Compile/user_specs30.test writes with arguments
// named as a user names them (step, s): the launchers' own locals take those names.
PK_KERNEL void p5_loop(Sym<f32, 1> x, Sym<f32, 1> y, index n, index step) {
  for (auto t : range(0, n, 1)) {
    all_reduce(Sum, x, y);
    for (auto i : tiles(y.size(), {256})) store(x, load<256>(y, i) + float(step), i);
  }
}
PK_KERNEL void p5_scale(Tensor<f32, 1> x, Tensor<f32, 1> y, float s) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i) * s, i);
}

// P6 (finding 5, fixed). Kernel names that are CUDA library functions or built-in variables passed pkc's name check
// and its CUDA output, then failed in NVRTC; they are refused at the kernel now (-D PK_PROBE_CUDA_NAMES).
#ifdef PK_PROBE_CUDA_NAMES
PK_KERNEL void max(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i), i);
}
PK_KERNEL void threadIdx(Tensor<f32, 1> x, Tensor<f32, 1> y) {
  for (auto i : tiles(x.size(), {256})) store(y, load<256>(x, i), i);
}
#endif
