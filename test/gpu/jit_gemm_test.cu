// The GEMM template kernels through the JIT (compiled by a pkc executable at run time and
// launched from their launch description alone: no template-specific host code) at world size 1
// and 2-4 ranks sharing one GPU (or 2 GPUs): gemm, gemm_rs, gemm_ar and ag_gemm against a
// float64 reference with tails in M, N and K; the plain GEMM also bit for bit against the same
// kernel launched by its nvcc host plan (pk::gemm::GemmPlan); a K the template's TMA cannot
// take, a misaligned A and a C padded past the product run the kernel's general-path twin,
// checked the same way (the plain GEMM, and the fused gemm_rs, gemm_ar and ag_gemm at every world size).
// The fused templates' other ways in (test/specs/fused_gemm_forms.pk.cpp): B stored [K, N] for gemm_rs
// (owner adds and reduce_scatter forms), gemm_ar and ag_gemm, GEMM -> Scratch -> reduce_scatter,
// ag_gemm as one launch of a kernel split into two, and spec tiles of other shapes (retiled).
#include <pk/jit/compile.h>
#include <pk/templates/host/fused_gemm.cuh>

#include <algorithm>
#include <cstring>
#include <map>

#include "gemm_reference.h"
#include "sym_test_util.h"

namespace {

using pk::bf16;
using pkt::DevLocal;
using pkt::SymArg;

std::map<std::string, pk::jit::Kernel> g_kernels;

const pk::jit::Kernel* kernel(const std::string& name) {
  auto it = g_kernels.find(name);
  if (it == g_kernels.end()) return pkt::fail("no kernel " + name), nullptr;
  return &it->second;
}

bool compile_all() {
  for (const char* name : {"gemm", "gemm_rs", "gemm_ar", "ag_gemm"}) {
    const std::string spec = std::string(PK_SPECS "/") + name + ".pk.cpp";
    auto text = pk::jit::read_spec(spec);
    auto k = text.is_ok() ? pk::jit::compile_spec(spec, *text, {}, pk::jit::pkc_frontend(PK_PKC))
                          : pk::Result<pk::jit::Kernel>(text.status());
    if (!k.is_ok()) return pkt::fail(std::string("compile ") + name + ": " + k.status().message()), false;
    PKT_CHECK(!k->info().tmpl.kernel.empty(), std::string(name) + " has no launch description");
    g_kernels.emplace(name, std::move(*k));
  }
  auto forms = pk::jit::read_spec(PK_FORMS_SPEC);
  if (!forms.is_ok()) return pkt::fail("read " + forms.status().message()), false;
  for (const char* name : {"rs_adds_kn", "rs_collective", "rs_collective_kn", "ar_kn", "ag_kn", "ag_gemm_then_scale",
                           "rs_adds_small", "ar_small", "ag_small"}) {
    pk::jit::Options options;
    options.kernel = name;
    auto k = pk::jit::compile_spec(PK_FORMS_SPEC, *forms, options, pk::jit::pkc_frontend(PK_PKC));
    if (!k.is_ok()) return pkt::fail(std::string("compile ") + name + ": " + k.status().message()), false;
    // (ag_gemm_then_scale is a sequence of launches, its first the template: lit fused-forms.test.)
    PKT_CHECK(std::string(name) == "ag_gemm_then_scale" || !k->info().tmpl.kernel.empty(),
              std::string(name) + " did not take a fused template");
    g_kernels.emplace(name, std::move(*k));
  }
  return true;
}

std::vector<bf16> random_bf16(long long n, unsigned seed) { return pkt::random_data<bf16>(n, seed); }

void sync(pk::Context& ctx, cudaStream_t s) {
  PKT_CUDA(cudaStreamSynchronize(s));
  PKT_OK(ctx.check_errors());
}

// C[M, N] = A * B^T on each rank alone; against float64 and against the nvcc plan's launch of
// the same kernel (identical bits: same code, same order of additions).
void plain_gemm(pk::Context& ctx, cudaStream_t s) {
  const long long M = 300, N = 264, K = 200;  // tails in all three
  auto a = random_bf16(M * K, pkt::seed_of(ctx.rank(), 1, 0));
  auto b = random_bf16(N * K, pkt::seed_of(ctx.rank(), 2, 0));
  DevLocal<bf16> da({M, K}, a), db({N, K}, b), dc({M, N}, {}), dp({M, N}, {});
  PKT_OK(kernel("gemm")->launch(ctx, s, da.view(), db.view(), dc.view()));
  auto plan = pk::gemm::GemmPlan::create(da.dev, db.dev, dp.dev, M, N, K);
  PKT_OK(plan.is_ok() ? plan->launch(s) : plan.status());
  sync(ctx, s);
  std::vector<double> want(M * N, 0.0);
  pkt::ref_gemm_add(pkt::as_float(a), 0, M, pkt::as_float(b), N, K, want);
  const auto got = dc.download(), planned = dp.download();
  pkt::expect_close(got, want, K, "jit gemm rank " + std::to_string(ctx.rank()));
  PKT_CHECK(std::memcmp(got.data(), planned.data(), got.size() * sizeof(bf16)) == 0,
            "jit gemm and the nvcc plan's launch of it differ");

  // Sizes and addresses the template's TMA cannot take run the general-path twin instead:
  // K not a multiple of 8, and an A whose base is 2 bytes off the 16-byte alignment.
  {
    const long long K2 = K - 4;
    auto a2 = random_bf16(M * K2, pkt::seed_of(ctx.rank(), 3, 0));
    auto b2 = random_bf16(N * K2, pkt::seed_of(ctx.rank(), 4, 0));
    DevLocal<bf16> da2({M, K2}, a2), db2({N, K2}, b2), dc2({M, N}, {});
    PKT_OK(kernel("gemm")->launch(ctx, s, da2.view(), db2.view(), dc2.view()));
    sync(ctx, s);
    std::vector<double> want2(M * N, 0.0);
    pkt::ref_gemm_add(pkt::as_float(a2), 0, M, pkt::as_float(b2), N, K2, want2);
    pkt::expect_close(dc2.download(), want2, K2, "jit gemm K = 196 (general-path twin)");
  }
  {
    std::vector<bf16> a_off(a.size() + 1, a[0]);  // a one element later than the allocation
    std::copy(a.begin(), a.end(), a_off.begin() + 1);
    DevLocal<bf16> da_off({M * K + 1}, a_off), dc3({M, N}, {});
    pk::Tensor<bf16> shifted = da.view();
    shifted.data = da_off.dev + 1;
    PKT_OK(kernel("gemm")->launch(ctx, s, shifted, db.view(), dc3.view()));
    sync(ctx, s);
    pkt::expect_close(dc3.download(), want, K, "jit gemm, A misaligned (general-path twin)");
  }
  // K = 0, an extent no tensor map takes (as 2^31 and more): the twin runs, and C is the empty
  // sum, 0 everywhere (the template used to fail at launch).
  {
    DevLocal<bf16> da0({M, 0}, {}), db0({N, 0}, {}), dc0({M, N}, {});
    PKT_OK(kernel("gemm")->launch(ctx, s, da0.view(), db0.view(), dc0.view()));
    sync(ctx, s);
    const auto got0 = dc0.download();
    const long long wrong = std::count_if(got0.begin(), got0.end(), [](bf16 v) { return (v.bits & 0x7fff) != 0; });
    PKT_CHECK(wrong == 0, "jit gemm K = 0 (general-path twin): " + std::to_string(wrong) + " elements not 0");
  }
  // A C padded past A's rows and B's rows (shapes the template does not take, the spec does:
  // the twin runs): C's first M x N hold the product; the rest of C that the spec's 128 x 256
  // tiles cover (here all of it: Mp <= 384 rows, Np <= 512 columns) gets the tiles' zero rows
  // and columns, as a store clips at the end of the tensor it writes, not of A or B.
  {
    const long long Mp = M + 37, Np = N + 8;
    DevLocal<bf16> dc4({Mp, Np}, {});
    PKT_OK(kernel("gemm")->launch(ctx, s, da.view(), db.view(), dc4.view()));
    sync(ctx, s);
    const auto got4 = dc4.download();
    std::vector<bf16> inner(M * N);
    long long nonzero = 0;
    for (long long i = 0; i < Mp * Np; ++i) {
      const long long r = i / Np, c = i % Np;
      if (r < M && c < N) inner[r * N + c] = got4[i];
      else nonzero += (got4[i].bits & 0x7fff) != 0;
    }
    pkt::expect_close(inner, want, K, "jit gemm into a padded C (general-path twin)");
    PKT_CHECK(nonzero == 0, "jit gemm into a padded C left " + std::to_string(nonzero) +
                                " elements of the tiles' padding other than 0");
  }
}

// Every rank's A_r [W rows, K] and B_r [N, K] (seeds `what_a`, `what_b`), this rank's as bf16, and
// the float64 sums over ranks of A_r B_r^T: this rank's rows [me rows, (me + 1) rows) (the
// reduce-scatter) and all of them (the all-reduce), with the magnitudes of the partials.
struct Reduced {
  std::vector<bf16> a, b;
  std::vector<double> rs, mag_rs, ar, mag_ar;
};
Reduced reduced(int W, int me, long long rows, long long N, long long K, int what_a, int what_b) {
  const long long M = W * rows;
  Reduced x{{}, {}, std::vector<double>(rows * N, 0.0), std::vector<double>(rows * N, 0.0),
            std::vector<double>(M * N, 0.0), std::vector<double>(M * N, 0.0)};
  for (int r = 0; r < W; ++r) {
    auto a = random_bf16(M * K, pkt::seed_of(r, what_a, W)), b = random_bf16(N * K, pkt::seed_of(r, what_b, W));
    if (r == me) x.a = a, x.b = b;
    const auto af = pkt::as_float(a), bf = pkt::as_float(b);
    pkt::ref_gemm_add(af, me * rows, rows, bf, N, K, x.rs, &x.mag_rs);
    pkt::ref_gemm_add(af, 0, M, bf, N, K, x.ar, &x.mag_ar);
  }
  return x;
}

// Every rank's A_r [M, K], B_r [N, K]; the reduce-scatter owner of row i is i / (M / W).
// K = 196 is not whole 16-byte rows: the launches run the fused kernels' general-path twins.
void gemm_rs_and_ar(pk::Context& ctx, cudaStream_t s, long long K) {
  const int W = ctx.world(), me = ctx.rank();
  const long long rows = 150, M = W * rows, N = 264;
  const std::string kk = " K=" + std::to_string(K);
  const Reduced x = reduced(W, me, rows, N, K, 3, 4);
  DevLocal<bf16> da({M, K}, x.a), db({N, K}, x.b);
  SymArg<bf16> rs(ctx, {rows, N}, nullptr), scratch(ctx, {M, N}, nullptr), ar(ctx, {M, N}, nullptr);
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(ctx.exchange().barrier());
  for (int l = 0; l < 2; ++l) {  // twice: the outputs are zeroed by every launch, not once
    PKT_OK(kernel("gemm_rs")->launch(ctx, s, da.view(), db.view(), rs.view));
    PKT_OK(kernel("gemm_ar")->launch(ctx, s, da.view(), db.view(), scratch.view, ar.view));
  }
  sync(ctx, s);
  PKT_OK(ctx.exchange().barrier());  // every rank's adds have landed
  pkt::expect_close(rs.download(), x.rs, K, "jit gemm_rs rank " + std::to_string(me) + kk, &x.mag_rs, W);
  pkt::expect_close(ar.download(), x.ar, K, "jit gemm_ar rank " + std::to_string(me) + kk, &x.mag_ar, W);
  if (W > 1) {  // M = W * rows + 1 does not split evenly over the ranks
    DevLocal<bf16> uneven({M + 1, K}, {});
    pk::Status bad = kernel("gemm_rs")->launch(ctx, s, uneven.view(), db.view(), rs.view);
    PKT_CHECK(!bad.is_ok() && bad.message().find("split evenly") != std::string::npos,
              "gemm_rs with M % W != 0: " + (bad.is_ok() ? std::string("accepted") : bad.message()));
  }
  PKT_OK(ctx.exchange().barrier());
}

// B [N, K] as the [K, N] an A * B form reads.
std::vector<bf16> transposed(const std::vector<bf16>& b, long long n, long long k) {
  std::vector<bf16> t(b.size());
  for (long long j = 0; j < n; ++j)
    for (long long q = 0; q < k; ++q) t[q * n + j] = b[j * k + q];
  return t;
}

// The forms of fused_gemm_forms.pk.cpp with a reduction over ranks: gemm_rs from owner adds with B
// [K, N] and from GEMM -> Scratch -> reduce_scatter (B [N, K] and [K, N]), gemm_ar with B [K, N].
// Outputs poisoned, launched twice (every launch zeroes them); K = 196 runs the general twins.
void fused_forms_reduce(pk::Context& ctx, cudaStream_t s, long long K) {
  const int W = ctx.world(), me = ctx.rank();
  const long long rows = 150, M = W * rows, N = 264;
  const std::string kk = " K=" + std::to_string(K);
  const Reduced x = reduced(W, me, rows, N, K, 7, 8);
  DevLocal<bf16> da({M, K}, x.a), db({N, K}, x.b), dbkn({K, N}, transposed(x.b, N, K));
  SymArg<bf16> scratch(ctx, {M, N}, nullptr), rs_adds(ctx, {rows, N}, nullptr), rs_coll(ctx, {rows, N}, nullptr),
      rs_coll_kn(ctx, {rows, N}, nullptr), ar(ctx, {M, N}, nullptr), rs_small(ctx, {rows, N}, nullptr),
      ar_small(ctx, {M, N}, nullptr);
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(ctx.exchange().barrier());
  for (int l = 0; l < 2; ++l) {
    PKT_OK(kernel("rs_adds_kn")->launch(ctx, s, da.view(), dbkn.view(), rs_adds.view));
    PKT_OK(kernel("rs_collective")->launch(ctx, s, da.view(), db.view(), scratch.view, rs_coll.view));
    PKT_OK(kernel("rs_collective_kn")->launch(ctx, s, da.view(), dbkn.view(), scratch.view, rs_coll_kn.view));
    PKT_OK(kernel("ar_kn")->launch(ctx, s, da.view(), dbkn.view(), scratch.view, ar.view));
    PKT_OK(kernel("rs_adds_small")->launch(ctx, s, da.view(), db.view(), rs_small.view));
    PKT_OK(kernel("ar_small")->launch(ctx, s, da.view(), db.view(), scratch.view, ar_small.view));
  }
  sync(ctx, s);
  PKT_OK(ctx.exchange().barrier());
  const std::string who = " rank " + std::to_string(me) + kk;
  pkt::expect_close(rs_adds.download(), x.rs, K, "jit rs_adds_kn" + who, &x.mag_rs, W);
  pkt::expect_close(rs_coll.download(), x.rs, K, "jit rs_collective" + who, &x.mag_rs, W);
  pkt::expect_close(rs_coll_kn.download(), x.rs, K, "jit rs_collective_kn" + who, &x.mag_rs, W);
  pkt::expect_close(ar.download(), x.ar, K, "jit ar_kn" + who, &x.mag_ar, W);
  pkt::expect_close(rs_small.download(), x.rs, K, "jit rs_adds_small (64 x 256 tiles, retiled)" + who, &x.mag_rs, W);
  pkt::expect_close(ar_small.download(), x.ar, K, "jit ar_small (64 x 128 tiles, retiled)" + who, &x.mag_ar, W);
  PKT_OK(ctx.exchange().barrier());
}

// C [W * Ms, N] = all_gather(A shards) * B^T on every rank.
void ag_gemm(pk::Context& ctx, cudaStream_t s, long long K) {
  const int W = ctx.world(), me = ctx.rank();
  const long long Ms = 200, N = 520;
  std::vector<float> all_a;
  std::vector<bf16> shard;
  for (int r = 0; r < W; ++r) {
    auto a = random_bf16(Ms * K, pkt::seed_of(r, 5, W));
    if (r == me) shard = a;
    auto f = pkt::as_float(a);
    all_a.insert(all_a.end(), f.begin(), f.end());
  }
  auto b = random_bf16(N * K, pkt::seed_of(0, 6, W));  // the same weight on every rank
  SymArg<bf16> a(ctx, {Ms, K}, &shard), full(ctx, {W * Ms, K}, nullptr);
  DevLocal<bf16> db({N, K}, b), dbkn({K, N}, transposed(b, N, K)), dc({W * Ms, N}, {}), dckn({W * Ms, N}, {}),
      dcs({W * Ms, N}, {});
  PKT_CUDA(pkt::sync_uploads());
  PKT_OK(ctx.exchange().barrier());
  for (int l = 0; l < 2; ++l) PKT_OK(kernel("ag_gemm")->launch(ctx, s, a.view, full.view, db.view(), dc.view()));
  for (int l = 0; l < 2; ++l) PKT_OK(kernel("ag_kn")->launch(ctx, s, a.view, full.view, dbkn.view(), dckn.view()));
  for (int l = 0; l < 2; ++l) PKT_OK(kernel("ag_small")->launch(ctx, s, a.view, full.view, db.view(), dcs.view()));
  // Two launches: ag_gemm (B [K, N]) into c, then y = c / 2 (exact in bf16).
  DevLocal<bf16> dc2({W * Ms, N}, {}), dy({W * Ms, N}, {});
  PKT_OK(kernel("ag_gemm_then_scale")->launch(ctx, s, a.view, full.view, dbkn.view(), dc2.view(), dy.view()));
  sync(ctx, s);
  std::vector<double> want(W * Ms * N, 0.0);
  pkt::ref_gemm_add(all_a, 0, W * Ms, pkt::as_float(b), N, K, want);
  pkt::expect_close(dc.download(), want, K, "jit ag_gemm rank " + std::to_string(me) + " K=" + std::to_string(K));
  pkt::expect_close(dckn.download(), want, K, "jit ag_kn (B [K, N]) rank " + std::to_string(me) + " K=" + std::to_string(K));
  pkt::expect_close(dcs.download(), want, K,
                    "jit ag_small (192 x 128 tiles, retiled) rank " + std::to_string(me) + " K=" + std::to_string(K));
  std::vector<double> half(want.size());
  for (size_t i = 0; i < want.size(); ++i) half[i] = want[i] / 2;
  pkt::expect_close(dy.download(), half, K, "jit ag_gemm_then_scale (ag_gemm, then a launch of its own) rank " +
                                                std::to_string(me) + " K=" + std::to_string(K));
  PKT_OK(ctx.exchange().barrier());
}

}  // namespace

int main() {
  const std::vector<int> worlds = pkt::test_worlds(/*with_one=*/true);  // "skipped: no GPU" first
  if (!compile_all()) return pkt::finish("jit_gemm_test");
  for (int world : worlds) {
    pkt::announce_world("jit_gemm_test", world);
    pkt::run_ranks(world, [](pk::Context& ctx) {
      cudaStream_t s;
      PKT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      // Load every kernel on every rank before any rank can spin in one.
      for (auto& [name, k] : g_kernels) PKT_OK(k.load(ctx));
      PKT_OK(ctx.exchange().barrier());
      plain_gemm(ctx, s);
      gemm_rs_and_ar(ctx, s, 136);
      gemm_rs_and_ar(ctx, s, 196);  // the twins
      fused_forms_reduce(ctx, s, 136);
      fused_forms_reduce(ctx, s, 196);  // the twins
      ag_gemm(ctx, s, 72);
      ag_gemm(ctx, s, 76);  // the twin
      cudaStreamDestroy(s);
    });
  }
  return pkt::finish("jit_gemm_test");
}
