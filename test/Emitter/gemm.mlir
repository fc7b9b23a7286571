// RUN: pkc %pkc_src/templates/specs/gemm_rs.mlir --emit=cuda -o - | FileCheck %s
// Tests that a kernel lowered to the GEMM + reduce-scatter template is emitted as a thin
// wrapper around the LCSC skeleton, with the decisions in its header and its launch facts.

// CHECK: // Kernel 'gemm_rs', decisions taken:
// CHECK: rule 2 (overlap): pk.coll.add_tile at {{.*}}: intra_sm
// CHECK: #include <pk/templates/gemm_rs.cuh>
// CHECK: using Job = pk::gemm::GemmRsJob;
// CHECK: // pk-launch gemm_rs template=gemm_rs plan=pk::gemm::GemmRsPlan threads=384 args=a:0,b:1,c:2
// CHECK-NEXT: extern "C" __global__ void __launch_bounds__(pk::gemm::kThreads, 1) gemm_rs(const __grid_constant__ pk::gemm::GemmRsJob::Params p) {
// CHECK-NEXT:   pk::gemm::lcsc_run<pk::gemm::GemmRsJob>(p);
