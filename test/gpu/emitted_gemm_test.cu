// pkc's compiler path for the GEMMs: the CUDA pkc emits for the shipped specs gemm_rs, ag_gemm
// and gemm_ar and for the fusions test/Fusion/accepts.cpp accepts (generated at build time) is
// JIT-compiled by NVRTC, launched with the Params the host plans build, and checked against a
// float64 reference of what the spec says. On one GPU they run at world size 1, then at 2, 3
// and 4 ranks sharing it (grids from the plans' 1/W share of the SMs).
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

void emitted_rs(pk::Context& ctx, const pk::Kernel& kernel, const std::string& name) {
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
    auto p = plan->prepare(ctx, name);
    PKT_OK(p.is_ok() ? pk::Status::ok() : p.status());
    PKT_OK(launch_emitted(ctx, kernel, *p, plan->grid()));
    PKT_OK(ctx.check_errors());
    std::vector<double> want(mo * n, 0.0), magnitude(mo * n, 0.0);
    for (int q = 0; q < w; ++q)
      pkt::ref_gemm_add(pkt::as_float(pkt::random_data<bf16>(m * k, pkt::seed_of(q, 7, round))), r * mo, mo,
                        pkt::as_float(pkt::random_data<bf16>(n * k, pkt::seed_of(q, 8, round))), n, k, want,
                        &magnitude);
    pkt::expect_close(pkt::download(out->local(), mo * n), want, k * w,
                      "emitted " + name + " round " + std::to_string(round) + " rank " + std::to_string(r),
                      &magnitude, w);
    cudaFree(da);
    cudaFree(db);
    PKT_OK(ctx.exchange().barrier());
  }
}

void emitted_ag(pk::Context& ctx, const pk::Kernel& kernel, const std::string& name) {
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
    auto p = plan->prepare(ctx, name);
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
                      "emitted " + name + " round " + std::to_string(round) + " rank " + std::to_string(r));
    PKT_OK(ctx.exchange().barrier());
    cudaFree(da);
    cudaFree(db);
  }
  cudaFree(dc);
}

// C[M, N] on every rank = sum over ranks of A_r * B_r^T (the scratch product is not checked:
// its contents are unspecified).
void emitted_ar(pk::Context& ctx, const pk::Kernel& kernel, const std::string& name) {
  const int r = ctx.rank(), w = ctx.world();
  const long long m = 300, n = 264, k = 200;
  auto out = ctx.allocate(m * n * 2);
  PKT_OK(out.is_ok() ? pk::Status::ok() : out.status());
  for (int round = 0; round < 2; ++round) {
    bf16* da = pkt::upload(pkt::random_data<bf16>(m * k, pkt::seed_of(r, 11, round)));
    bf16* db = pkt::upload(pkt::random_data<bf16>(n * k, pkt::seed_of(r, 12, round)));
    PKT_CUDA(pkt::poison(out->local(), m * n * 2));
    PKT_CUDA(pkt::sync_uploads());
    PKT_OK(ctx.exchange().barrier());  // no peer adds into an output before it is poisoned
    auto plan = pk::gemm::GemmArPlan::create(ctx, da, db, *out, m, n, k);
    PKT_OK(plan.is_ok() ? pk::Status::ok() : plan.status());
    auto p = plan->prepare(ctx, name);
    PKT_OK(p.is_ok() ? pk::Status::ok() : p.status());
    PKT_OK(launch_emitted(ctx, kernel, *p, plan->grid()));
    PKT_OK(ctx.check_errors());
    std::vector<double> want(m * n, 0.0), magnitude(m * n, 0.0);
    for (int q = 0; q < w; ++q)
      pkt::ref_gemm_add(pkt::as_float(pkt::random_data<bf16>(m * k, pkt::seed_of(q, 11, round))), 0, m,
                        pkt::as_float(pkt::random_data<bf16>(n * k, pkt::seed_of(q, 12, round))), n, k, want,
                        &magnitude);
    pkt::expect_close(pkt::download(out->local(), m * n), want, k * w,
                      "emitted " + name + " round " + std::to_string(round) + " rank " + std::to_string(r),
                      &magnitude, w);
    cudaFree(da);
    cudaFree(db);
    PKT_OK(ctx.exchange().barrier());
  }
}

// A plain GEMM into a symmetric tensor: every rank's own product, stored.
void emitted_gemm(pk::Context& ctx, const pk::Kernel& kernel, const std::string& name) {
  const int r = ctx.rank();
  const long long m = 200, n = 392, k = 136;
  auto out = ctx.allocate(m * n * 2);
  PKT_OK(out.is_ok() ? pk::Status::ok() : out.status());
  auto a = pkt::random_data<bf16>(m * k, pkt::seed_of(r, 13, 0));
  auto b = pkt::random_data<bf16>(n * k, pkt::seed_of(r, 14, 0));
  bf16* da = pkt::upload(a);
  bf16* db = pkt::upload(b);
  bf16* dc = static_cast<bf16*>(out->local());
  PKT_CUDA(pkt::poison(dc, m * n * 2));
  PKT_CUDA(pkt::sync_uploads());  // the launch's stream does not order after the uploads
  auto plan = pk::gemm::GemmPlan::create(da, db, dc, m, n, k);
  PKT_OK(plan.is_ok() ? pk::Status::ok() : plan.status());
  PKT_OK(launch_emitted(ctx, kernel, plan->params(), plan->grid()));
  PKT_OK(ctx.check_errors());
  std::vector<double> want(m * n, 0.0);
  pkt::ref_gemm_add(pkt::as_float(a), 0, m, pkt::as_float(b), n, k, want);
  pkt::expect_close(pkt::download(dc, m * n), want, k, "emitted " + name + " rank " + std::to_string(r));
  cudaFree(da);
  cudaFree(db);
  PKT_OK(ctx.exchange().barrier());
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
      auto get = [&](const char* path, const std::string& name) -> pk::Kernel {
        auto kernel = load(path, name, modules);
        if (kernel.is_ok()) return *kernel;
        pkt::fail(name + ": " + kernel.status().message());
        return pk::Kernel();
      };
      pk::Kernel rs = get(PK_EMITTED_GEMM_RS, "gemm_rs"), ag = get(PK_EMITTED_AG_GEMM, "ag_gemm"),
                 ar = get(PK_EMITTED_GEMM_AR, "gemm_ar");
      // The fusions pkc accepts after checking their data flow (test/Fusion/accepts.cpp).
      pk::Kernel ar2 = get(PK_EMITTED_FUSION, "gemm_ar_scratch"),
                 plain = get(PK_EMITTED_FUSION, "gemm_into_sym"),
                 ag2 = get(PK_EMITTED_FUSION, "ag_gemm_scratch"),
                 rs2 = get(PK_EMITTED_FUSION, "gemm_rs_rows");
      PKT_OK(ctx.exchange().barrier());  // every rank loaded before any spins (shared context)
      emitted_rs(ctx, rs, "gemm_rs");
      emitted_ag(ctx, ag, "ag_gemm");
      emitted_ar(ctx, ar, "gemm_ar");
      emitted_ar(ctx, ar2, "gemm_ar_scratch");
      emitted_gemm(ctx, plain, "gemm_into_sym");
      emitted_ag(ctx, ag2, "ag_gemm_scratch");
      emitted_rs(ctx, rs2, "gemm_rs_rows");
    });
  }
  return pkt::finish("emitted_gemm_test");
}
