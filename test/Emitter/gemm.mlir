// RUN: pkc %pkc_src/templates/specs/gemm_rs.mlir --emit=cuda -o - | FileCheck %s
// RUN: pkc %pkc_src/templates/specs/gemm_ar.pk.cpp --emit=cuda -o - | FileCheck %s --check-prefix=AR
// RUN: pkc %pkc_src/templates/specs/ag_gemm.pk.cpp --emit=cuda -o - | FileCheck %s --check-prefix=AG
// RUN: pkc %pkc_src/templates/specs/gemm.pk.cpp --emit=cuda -o - | FileCheck %s --check-prefix=GEMM
// Tests that a kernel lowered to a GEMM template is emitted as a thin wrapper around the LCSC
// skeleton, with the decisions in its header and the description a host needs to launch it:
// the parameter block field by field (offsets static_asserted), the grid, the shared memory,
// the outputs to zero, and the host checks.

// CHECK: // Kernel 'gemm_rs', decisions taken:
// CHECK: rule 2 (overlap): pk.coll.add_tile at {{.*}}: intra_sm
// CHECK: #include <pk/templates/gemm_rs.cuh>
// CHECK: using Job = pk::gemm::GemmRsJob;
// CHECK: static_assert(sizeof(Job::Params) == [[SIZE:[0-9]+]], "parameter block size");
// CHECK: static_assert(offsetof(Job::Params, ctx) == [[CTX:[0-9]+]], "offset of ctx");
// CHECK: // pk-launch gemm_rs template=gemm_rs threads=384 args=!pk.tensor<?x?xbf16>,!pk.tensor<?x?xbf16>,!pk.sym<?x?xbf16>
// CHECK-NEXT: // pk-template gemm_rs threads=384 smem=231424 grid=balanced(mul(world,mul(cdiv(div(dim(0,0),world),128),cdiv(dim(1,0),256))),sms) params=[[SIZE]] zero=2
// CHECK-NEXT: // pk-param gemm_rs 0 a tmap arg=0 dims=dim(0,1),dim(0,0) box=64x128
// CHECK-NEXT: // pk-param gemm_rs 128 b tmap arg=1 dims=dim(0,1),dim(1,0) box=64x256
// CHECK-NEXT: // pk-param gemm_rs 256 c tmaps arg=2 dims=dim(1,0),div(dim(0,0),world) box=64x64
// CHECK-NEXT: // pk-param gemm_rs [[CTX]] ctx ctx
// CHECK-NEXT: // pk-param gemm_rs {{[0-9]+}} order.segments i32 world
// CHECK: order.first_seg i32 rem(add(rank,1),world)
// CHECK: // pk-host-check gemm_rs {{[0-9]+}} if=eq(0,rem(dim(0,0),world)) {{.*}} A's rows must split evenly over the ranks
// The shipped spec walks each owner's rows, so no tile crosses owners and no such check is made.
// CHECK-NOT: must lie inside one owner
// CHECK: extern "C" __global__ void __launch_bounds__(pk::gemm::kThreads, 1) gemm_rs(const __grid_constant__ pk::gemm::GemmRsJob::Params p) {
// CHECK-NEXT:   pk::gemm::lcsc_run<pk::gemm::GemmRsJob>(p);

// AR: // pk-template gemm_ar threads=384 smem=231424 grid=balanced(mul(cdiv(dim(0,0),128),cdiv(dim(1,0),256)),sms) params={{[0-9]+}} zero=3
// AR: c tmaps arg=3 dims=dim(1,0),dim(0,0) box=64x64
// AR: order.rotate i32 div(mul(mul(cdiv(dim(0,0),128),cdiv(dim(1,0),256)),rank),world)

// AG: // pk-template ag_gemm threads=384 smem=231424 grid=add(mul(ne(world,1),
// AG-NOT: zero=
// AG: a_full tmap arg=1 dims=dim(0,1),dim(0,0),world box=64x128x1
// AG: a_full_peer ptrs arg=1
// AG: the gathered A must hold world_size x the shard's rows

// GEMM-LABEL: // pk-template gemm threads=384
// GEMM-NOT: ctx
// GEMM: c tmap arg=2 dims=dim(1,0),dim(0,0) box=64x64
// Shapes the spec's loop takes but the template does not (a padded C, a longer K in B) launch
// the general-path twin, like the TMA pitch rules, rather than fail.
// GEMM: pk-host-check gemm 2 {{.*}} twin_rule B must have A's K columns
// GEMM: pk-host-check gemm 4 {{.*}} twin_rule C must have A's rows
// GEMM: pk-host-check gemm 5 {{.*}} twin_rule C must have B's rows as columns
