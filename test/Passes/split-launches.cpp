// RUN: pkc %s --emit=cuda --explain -o %t.cu 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=CUDA < %t.cu
// RUN: pkc %s --templates=false --emit=cuda --explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: not pkc %s -DCLASH --emit=cuda -o /dev/null 2>&1 | FileCheck %s --check-prefix=CLASH
// RUN: not pkc %s -DDEVICE_BOUND --emit=cuda -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEVICE_BOUND
// RUN: not pkc %s -DSTALE_READ --emit=cuda -o /dev/null 2>&1 | FileCheck %s --check-prefix=STALE_READ
// Tests pk-split-launches: a kernel whose phases include a loop a Hopper template takes on its
// own runs as several launches in one call, each an ordinary kernel; a kernel a fused template
// takes whole, or with no template loop, stays one launch.
#include <pk/spec.h>
using namespace pk;

#define GEMM_LOOP(A, B, OUT)                                                           \
  for (auto [m, n] : tiles(A.rows(), B.rows(), {128, 256})) {                          \
    auto acc = zeros<f32, 128, 256>();                                                 \
    for (auto k : range(0, A.cols(), 64))                                              \
      acc = mma_t(load_smem<128, 64>(A, m, k), load_smem<256, 64>(B, n, k), acc);      \
    store(OUT, cast<bf16>(acc), m, n);                                                 \
  }

// CHECK-LABEL: decisions for kernel 'ag_attention':
// CHECK-NEXT: launches: {{.*}}runs as 2 launches{{.*}}ag_attention_launch0 = the phases at {{.*}}split-launches.cpp:[[@LINE+4]]:3, {{.*}}split-launches.cpp:[[@LINE+5]]:3; ag_attention_launch1 = the tile loop at {{.*}}:[[@LINE+6]]:3 (the attention template)
// CUDA: // pk-sequence ag_attention parts=ag_attention_launch0,ag_attention_launch1 args=!pk.tensor<?x?xbf16>,!pk.sym<?x?xbf16>,
PK_KERNEL void ag_attention(Tensor<bf16, 2> q, Sym<bf16, 2> kc, Sym<bf16, 2> vc, Sym<bf16, 2> k, Sym<bf16, 2> v,
                            Tensor<bf16, 2> o, float scale) {
  all_gather(kc, k);
  all_gather(vc, v);
  for (auto m : tiles(q.rows(), {64})) {
    auto qt = load<64, 64>(q, m, 0);
    auto mx = zeros<f32, 64, 1>() - 1e30f;
    auto l = zeros<f32, 64, 1>();
    auto acc = zeros<f32, 64, 64>();
    for (auto n : range(0, k.rows(), 64)) {
      auto s = mma_t(qt, load<64, 64>(k, n, 0), zeros<f32, 64, 64>()) * scale;
      s = where(col_index<64, 64>(n) < k.rows(), s, -1e30f);
      auto mnew = max(mx, row_max(s));
      auto p = exp(s - mnew);
      auto corr = exp(mx - mnew);
      l = l * corr + row_sum(p);
      acc = mma(cast<bf16>(p), load<64, 64>(v, n, 0), acc * corr);
      mx = mnew;
    }
    store(o, cast<bf16>(acc / l), m, 0);
  }
}
// CHECK-LABEL: decisions for kernel 'ag_attention_launch0':
// CHECK-NEXT: launches: {{.*}}launch 0 of 2 of kernel 'ag_attention'
// CHECK: rule 1 (transport): pk.coll.all_gather
// CHECK-LABEL: decisions for kernel 'ag_attention_launch1':
// CHECK-NEXT: launches: {{.*}}launch 1 of 2 of kernel 'ag_attention'
// CHECK-NEXT: template: {{.*}}attention: the loop is an online-softmax attention, head dim 64
// CUDA: // pk-launch ag_attention_launch0 threads=
// CUDA: extern "C" __global__ void {{.*}}ag_attention_launch0(pk::LaunchContext ctx,
// CUDA: // pk-launch ag_attention_launch1 template=attention threads=512
// CUDA: extern "C" __global__ void {{.*}}ag_attention_launch1(const __grid_constant__ pk::attention::Params p)

// A max all-reduce of the product: the fused GEMM + all-reduce template adds, so no fused
// template takes the kernel, and the GEMM and the all-reduce are two launches.
// CHECK-LABEL: decisions for kernel 'gemm_then_ar_max':
// CHECK-NEXT: launches: {{.*}}runs as 2 launches{{.*}}gemm_then_ar_max_launch0 = the tile loop at {{.*}}:[[@LINE+3]]:3 (the GEMM template); gemm_then_ar_max_launch1 = the phase at {{.*}}:[[@LINE+4]]:3;{{.*}}no fused GEMM template takes the whole kernel: GEMM + all-reduce: the fused template reduce-adds every tile {{.*}}<sum> only, not <max>
// CUDA: // pk-sequence gemm_then_ar_max parts=gemm_then_ar_max_launch0,gemm_then_ar_max_launch1 args=
PK_KERNEL void gemm_then_ar_max(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Scratch<bf16, 2> p, Sym<bf16, 2> c) {
  GEMM_LOOP(a, b, p)
  all_reduce(Max, p, c);
}
// CHECK-LABEL: decisions for kernel 'gemm_then_ar_max_launch0':
// CHECK: template: {{.*}}gemm: persistent LCSC kernel
// CHECK-LABEL: decisions for kernel 'gemm_then_ar_max_launch1':
// CHECK: rule 1 (algorithm): pk.coll.all_reduce

// A GEMM whose product is reduce-scattered as written (not by store_add into owners).
// CHECK-LABEL: decisions for kernel 'gemm_then_rs':
// CHECK-NEXT: launches: {{.*}}runs as 2 launches
PK_KERNEL void gemm_then_rs(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Sym<bf16, 2> p, Sym<bf16, 2> c) {
  GEMM_LOOP(a, b, p)
  reduce_scatter(Sum, p, c);
}

// The fused GEMM + all-reduce template takes this kernel whole: one launch.
// CHECK-LABEL: decisions for kernel 'gemm_ar':
// CHECK-NOT: launches:
// CHECK: template: {{.*}}gemm_ar: persistent LCSC kernel
// CUDA-NOT: pk-sequence gemm_ar
PK_KERNEL void gemm_ar(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Scratch<bf16, 2> p, Sym<bf16, 2> c) {
  GEMM_LOOP(a, b, p)
  all_reduce(Sum, p, c);
}

// No loop a template takes: the phases share one launch, ordered by a grid-wide barrier.
// CHECK-LABEL: decisions for kernel 'ar_then_scale':
// CHECK-NOT: launches:

PK_KERNEL void ar_then_scale(Sym<f32, 1> x, Sym<f32, 1> y, Tensor<f32, 1> z) {
  all_reduce(Sum, x, y);
  for (auto i : tiles(y.dim(0), {256})) store(z, load<256>(y, i) * 2.0f, i);
}

// With templates off, every loop takes the general path, and the kernel stays one launch with
// a grid-wide barrier between its phases.
// OFF-NOT: launches:
// OFF: decisions for kernel 'ag_attention':
// OFF-NOT: launches:
// OFF: templates are off (--templates=false)
// OFF: one worker of 132 blocks runs the kernel's phases in order (1 grid-wide barrier between dependent phases)
// A host loop is split either way.
// OFF: decisions for kernel 'iterate':
// OFF-NEXT: launches: {{.*}}(a host loop repeats some)

#ifdef CLASH
// CLASH: error: pkc runs this kernel as several launches and names them 'ag_attention_launch<i>', but the spec already has a kernel 'ag_attention_launch0'
PK_KERNEL void ag_attention_launch0(Tensor<f32, 1> z) {
  for (auto i : tiles(z.dim(0), {256})) store(z, load<256>(z, i) * 2.0f, i);
}
#endif

// A range loop holding a collective and a phase that depends on it: a host loop of launches,
// the trip's index a trailing argument of the part, the bounds host expressions.
// CHECK-LABEL: decisions for kernel 'iterate':
// CHECK-NEXT: launches: {{.*}}runs as 1 kernel, launched in order {{.*}}(a host loop repeats some): for each trip of the range loop at {{.*}}split-launches.cpp:[[@LINE+6]]:3, a host loop: iterate_launch0 = the phases at {{.*}}:[[@LINE+7]]:5, {{.*}}:[[@LINE+8]]:5;
// CHECK-LABEL: decisions for kernel 'iterate_launch0':
// CHECK-NEXT: launches: {{.*}}launch 0 of 1 of kernel 'iterate' (in a host loop: its last arguments are the trips' induction variables, outermost first)
// CUDA: // pk-sequence iterate parts=iterate_launch0 loop=0:1:0;arg(2);1 args=!pk.sym<?xf32>,!pk.sym<?xf32>,index,f32
// CUDA: // pk-launch iterate_launch0 {{.*}} args=!pk.sym<?xf32>,!pk.sym<?xf32>,index,f32,index
PK_KERNEL void iterate(Sym<f32, 1> x, Sym<f32, 1> y, index steps, float scale) {
  for (auto s : range(0, steps, 1)) {
    all_reduce(Sum, x, y);
    for (auto i : tiles(y.dim(0), {256})) store(x, load<256>(y, i) * scale + zeros<f32, 256>() + s, i);
  }
}

#ifdef DEVICE_BOUND
// DEVICE_BOUND: split-launches.cpp:[[@LINE+2]]:3: error: this range loop holds phases a launch cannot order {{.*}}its bounds must be known on the host
PK_KERNEL void device_bound(Sym<f32, 1> x, Sym<f32, 1> y, Tensor<i32, 1> n) {
  for (auto s : range(0, n.at(0), 1)) all_reduce(Sum, x, y);
}
#endif

#ifdef STALE_READ
// A scale read before a loop that rewrites its tensor, used by the GEMM template's launch: that
// launch would read it again after the rewrite, so it is an error, not the rewritten value.
// STALE_READ: split-launches.cpp:[[@LINE+2]]:{{[0-9]+}}: error: pkc runs this kernel as several launches{{.*}}after an earlier launch rewrote the tensor it reads
PK_KERNEL void stale_read(Tensor<bf16, 2> a, Tensor<bf16, 2> b, Tensor<f32, 1> sa, Tensor<bf16, 2> y) {
  float s = sa.at(0);
  for (auto i : tiles(sa.size(), {256})) store(sa, load<256>(sa, i) * 2.0f, i);
  for (auto [m, n] : tiles(a.rows(), b.rows(), {128, 256})) {
    auto acc = zeros<f32, 128, 256>();
    for (auto k : range(0, a.cols(), 64)) acc = mma_t(load<128, 64>(a, m, k), load<256, 64>(b, n, k), acc);
    store(y, cast<bf16>(acc * s), m, n);
  }
}
#endif

