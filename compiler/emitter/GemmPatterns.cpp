// Emission pattern for kernels pk-lower-gemm turned into GEMM template instances: the kernel
// is a thin extern "C" wrapper around pk::gemm::lcsc_run<Job>; the host fills the Job's
// Params (tensor maps, tile order, launch context) with the matching plan in
// templates/include/pk/templates/host/fused_gemm.cuh.
#include "Emitter.h"

using namespace mlir;
using namespace mlir::pk;
using namespace mlir::pk::cuda;

namespace {

struct JobInfo {
  const char *job, *header, *plan;
};

const JobInfo *findJob(StringRef name) {
  static const JobInfo jobs[] = {
      {"gemm", "gemm.cuh", "GemmPlan"},
      {"gemm_rs", "gemm_rs.cuh", "GemmRsPlan"},
      {"gemm_ar", "gemm_ar.cuh", "GemmArPlan"},
      {"ag_gemm", "ag_gemm.cuh", "AgGemmPlan"},
  };
  for (const JobInfo &j : jobs)
    if (name == j.job) return &j;
  return nullptr;
}

const char *jobType(StringRef name) {
  if (name == "gemm") return "GemmJob";
  if (name == "gemm_rs") return "GemmRsJob";
  if (name == "gemm_ar") return "GemmArJob";
  return "AgGemmJob";
}

LogicalResult emitGemmKernel(Emitter &e, KernelOp kernel, DictionaryAttr facts) {
  auto job = facts.getAs<StringAttr>("job");
  const JobInfo *info = job ? findJob(job.getValue()) : nullptr;
  if (!info)
    return kernel.emitError("no CUDA emission pattern for GEMM job '")
           << (job ? job.getValue() : StringRef("?")) << "'";
  std::string name = kernel.getSymName().str();
  std::string type = std::string("pk::gemm::") + jobType(job.getValue());
  e.os << "\n#include <pk/templates/" << info->header << ">\n";
  e.os << "\nnamespace pk_" << name << " {\n";
  e.os << "constexpr int kThreads = pk::gemm::kThreads;            // loader/storer + 2 consumer warpgroups\n";
  e.os << "constexpr unsigned kSharedBytes = pk::gemm::kSharedBytes;  // dynamic shared memory\n";
  e.os << "using Job = " << type << ";\n";
  e.os << "}  // namespace pk_" << name << "\n";
  // Argument positions of the spec (A, B, C, landing buffer) for the host plan.
  e.os << "\n// pk-launch " << name << " template=" << job.getValue() << " plan=pk::gemm::" << info->plan
       << " threads=384 args=";
  bool first = true;
  for (const char *k : {"a", "b", "c", "landing"})
    if (auto i = facts.getAs<IntegerAttr>(k)) {
      e.os << (first ? "" : ",") << k << ":" << i.getInt();
      first = false;
    }
  e.os << "\nextern \"C\" __global__ void __launch_bounds__(pk::gemm::kThreads, 1) " << name
       << "(const __grid_constant__ " << type << "::Params p) {\n";
  e.os << "  pk::gemm::lcsc_run<" << type << ">(p);\n";
  e.os << "}\n";
  return success();
}

} // namespace

void mlir::pk::cuda::addGemmPatterns(PatternTable &table) {
  // Kernels lowered to a template take this path; every other kernel the structure pattern.
  Pattern structural = table["pk.kernel"];
  table["pk.kernel"] = [structural](Emitter &e, Operation *op) -> LogicalResult {
    auto kernel = cast<KernelOp>(op);
    if (auto facts = kernel->getAttrOfType<DictionaryAttr>("pk.gemm"))
      return emitGemmKernel(e, kernel, facts);
    return structural(e, op);
  };
}
