// pkc's compiler path for the fused GEMMs on two GPUs: the CUDA pkc emits for the shipped
// specs gemm_rs.mlir and ag_gemm.mlir (generated at build time) is JIT-compiled by NVRTC,
// launched with the Params the host plans build, and checked against a float64 reference. On
// one GPU both run at world size 1, then at 2, 3 and 4 ranks sharing it (grids from the
// plans' 1/W share of the SMs).
#include <fstream>
#include <sstream>

#include <pk/templates/host/fused_gemm.cuh>

#include "gemm_reference.h"

namespace {

using pk::bf16;

std::string read_file(const char* path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

template <class Params>
pk::Status launch_emitted(pk::Context& ctx, const pk::Kernel& kernel, const Params& p, int grid) {
  pk::LaunchConfig cfg;
  cfg.grid = dim3(grid);
  cfg.block = dim3(pk::gemm::kThreads);
  cfg.shared_bytes = pk::gemm::kSharedBytes;
  pk::KernelArgs args;
  args.add(p);
  return kernel.launch(cfg, ctx.stream(), args);
}

void emitted_rs(pk::Context& ctx, const pk::Kernel& kernel) {
  const int r = ctx.rank(), w = ctx.world();
  // 300 rows unless the world does not divide them (each rank owns M / W rows).
  const long long m = 300 % w == 0 ? 300 : 150 * w, n = 264, k = 520, mo = m / w;
  auto out = ctx.allocate(mo * n * 2);
  PKT_OK(out.is_ok() ? pk::Status::ok() : out.status());
  for (int round = 0; round < 2; ++round) {
    bf16* da = pkt::upload(pkt::random_data<bf16>(m * k, pkt::seed_of(r, 7, round)));
    bf16* db = pkt::upload(pkt::random_data<bf16>(n * k, pkt::seed_of(r, 8, round)));
    PKT_CUDA(pkt::poison(out->local(), mo * n * 2));
    PKT_CUDA(pkt::sync_uploads());
    // Every rank's uploads are done before any rank launches: where ranks share a GPU,
    // an allocation or copy can wait for a kernel that spins for this rank.
    PKT_OK(ctx.exchange().barrier());
    auto plan = pk::gemm::GemmRsPlan::create(ctx, da, db, *out, m, n, k);
    PKT_OK(plan.is_ok() ? pk::Status::ok() : plan.status());
    auto p = plan->prepare(ctx, "gemm_rs");
    PKT_OK(p.is_ok() ? pk::Status::ok() : p.status());
    PKT_OK(launch_emitted(ctx, kernel, *p, plan->grid()));
    PKT_OK(ctx.check_errors());
    std::vector<double> want(mo * n, 0.0);
    for (int q = 0; q < w; ++q)
      pkt::ref_gemm_add(pkt::as_float(pkt::random_data<bf16>(m * k, pkt::seed_of(q, 7, round))), r * mo, mo,
                        pkt::as_float(pkt::random_data<bf16>(n * k, pkt::seed_of(q, 8, round))), n, k, want);
    pkt::expect_close(pkt::download(out->local(), mo * n), want, k * w,
                      "emitted gemm_rs round " + std::to_string(round) + " rank " + std::to_string(r));
    cudaFree(da);
    cudaFree(db);
    PKT_OK(ctx.exchange().barrier());
  }
}

void emitted_ag(pk::Context& ctx, const pk::Kernel& kernel) {
  const int r = ctx.rank(), w = ctx.world();
  const long long ms = 200, n = 264, k = 136, m = ms * w;
  auto full = ctx.allocate(m * k * 2);
  PKT_OK(full.is_ok() ? pk::Status::ok() : full.status());
  bf16* dc = nullptr;
  PKT_CUDA(cudaMalloc(&dc, m * n * 2));
  for (int round = 0; round < 2; ++round) {
    auto b = pkt::random_data<bf16>(n * k, pkt::seed_of(r, 9, round));
    bf16* da = pkt::upload(pkt::random_data<bf16>(ms * k, pkt::seed_of(r, 10, round)));
    bf16* db = pkt::upload(b);
    PKT_CUDA(pkt::poison(dc, m * n * 2));
    PKT_CUDA(pkt::sync_uploads());
    // Every rank's uploads are done before any rank launches: where ranks share a GPU,
    // an allocation or copy can wait for a kernel that spins for this rank.
    PKT_OK(ctx.exchange().barrier());
    auto plan = pk::gemm::AgGemmPlan::create(ctx, da, *full, db, dc, ms, n, k);
    PKT_OK(plan.is_ok() ? pk::Status::ok() : plan.status());
    auto p = plan->prepare(ctx, "ag_gemm");
    PKT_OK(p.is_ok() ? pk::Status::ok() : p.status());
    PKT_OK(launch_emitted(ctx, kernel, *p, plan->grid()));
    PKT_OK(ctx.check_errors());
    std::vector<float> gathered;
    for (int q = 0; q < w; ++q) {
      auto s = pkt::as_float(pkt::random_data<bf16>(ms * k, pkt::seed_of(q, 10, round)));
      gathered.insert(gathered.end(), s.begin(), s.end());
    }
    std::vector<double> want(m * n, 0.0);
    pkt::ref_gemm_add(gathered, 0, m, pkt::as_float(b), n, k, want);
    pkt::expect_close(pkt::download(dc, m * n), want, k,
                      "emitted ag_gemm round " + std::to_string(round) + " rank " + std::to_string(r));
    PKT_OK(ctx.exchange().barrier());
    cudaFree(da);
    cudaFree(db);
  }
  cudaFree(dc);
}

pk::Result<pk::Kernel> load(const char* path, const std::string& name,
                            std::vector<std::unique_ptr<pk::Module>>& keep) {
  pk::CompileRequest req;
  req.source = read_file(path);
  req.program_name = name + ".cu";
  if (req.source.empty()) return pk::Status::error(std::string("cannot read ") + path);
  PK_ASSIGN_OR_RETURN(std::unique_ptr<pk::Module> mod, pk::Module::compile_and_load(req));
  keep.push_back(std::move(mod));
  return keep.back()->kernel(name);
}

}  // namespace

int main() {
  for (int world : pkt::test_worlds(/*with_one=*/true)) {
    pkt::announce_world("emitted_gemm_test", world);
    pkt::run_ranks(world, [&](pk::Context& ctx) {
      std::vector<std::unique_ptr<pk::Module>> modules;
      auto rs = load(PK_EMITTED_GEMM_RS, "gemm_rs", modules);
      PKT_OK(rs.is_ok() ? pk::Status::ok() : rs.status());
      auto ag = load(PK_EMITTED_AG_GEMM, "ag_gemm", modules);
      PKT_OK(ag.is_ok() ? pk::Status::ok() : ag.status());
      PKT_OK(ctx.exchange().barrier());  // every rank loaded before any spins (shared context)
      emitted_rs(ctx, *rs);
      emitted_ag(ctx, *ag);
    });
  }
  return pkt::finish("emitted_gemm_test");
}
