// Bootstrap mode 2 (one process per GPU, torchrun-style environment): the test spawns itself
// twice with RANK / WORLD_SIZE / LOCAL_RANK and a private PK_BOOTSTRAP_FILE. The children
// exchange CUDA IPC handles through NCCL and run a store + signal/wait across processes.
#include <pk/device/all.cuh>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <unistd.h>

#include "harness.h"

namespace {

__global__ void k_push(pk::LaunchContext c, pk::SymTensor<float> landing, const float* src,
                       long long n, float* out) {
  const int peer = (c.rank + 1) % c.world;
  pk::store_tile(c, landing, peer, 0, src, n);
  __syncthreads();
  if (threadIdx.x == 0) {
    pk::signal(c, peer, 0);
    pk::wait_ge(c, 0, c.epoch);
  }
  __syncthreads();
  pk::load_tile(c, landing, c.rank, 0, out, n);
}

__global__ void k_barrier(pk::LaunchContext c) { pk::barrier_block(c, 1); }

// Progress on stderr, so a hang shows the last step each rank reached.
void step(const char* what) {
  std::fprintf(stderr, "rank %s: %s\n", std::getenv("RANK"), what);
}

int child() {
  step("bootstrap");
  auto ex = pk::NcclExchange::create_from_env();
  if (!ex.is_ok()) {
    pkt::fail(ex.status().message());
    return pkt::finish("bootstrap_mp_test child");
  }
  [&] {
    step("context");
    auto ctx = pk::Context::create(**ex);
    PKT_OK(ctx.is_ok() ? pk::Status::ok() : ctx.status());
    pk::Context& c = **ctx;
    const long long n = 77777;
    auto lb = c.allocate(n * 4);
    PKT_OK(lb.is_ok() ? pk::Status::ok() : lb.status());
    auto landing = lb->sym_tensor<float>({n});
    auto mine = pkt::random_data<float>(n, 40 + c.rank());
    auto theirs = pkt::random_data<float>(n, 40 + (c.rank() + 1) % 2);
    float *src = nullptr, *out = nullptr;
    PKT_CUDA(cudaMalloc(&src, n * 4));
    PKT_CUDA(cudaMalloc(&out, n * 4));
    PKT_CUDA(pkt::poison(out, n * 4));
    PKT_CUDA(cudaMemcpy(src, mine.data(), n * 4, cudaMemcpyHostToDevice));
    step("push");
    // Each kernel gets its own flag region and epoch (the push and the barrier use their
    // slots a different number of times per launch).
    auto push_ctx = c.make_launch_context("k_push");
    PKT_OK(push_ctx.is_ok() ? pk::Status::ok() : push_ctx.status());
    k_push<<<1, 256, 0, c.stream()>>>(*push_ctx, *landing, src, n, out);
    PKT_OK(c.check_errors());
    std::vector<float> got(n);
    PKT_CUDA(cudaMemcpy(got.data(), out, n * 4, cudaMemcpyDeviceToHost));
    for (long long i = 0; i < n; ++i)
      if (got[i] != theirs[i]) {
        pkt::fail("rank " + std::to_string(c.rank()) + ": element " + std::to_string(i));
        break;
      }
    step("barriers");
    for (int i = 0; i < 10000; ++i) {
      auto barrier_ctx = c.make_launch_context("k_barrier");
      PKT_OK(barrier_ctx.is_ok() ? pk::Status::ok() : barrier_ctx.status());
      k_barrier<<<1, 32, 0, c.stream()>>>(*barrier_ctx);
    }
    PKT_OK(c.check_errors());
    step("allocate/free");
    // IPC mappings are opened and closed cleanly across processes.
    for (int i = 0; i < 100; ++i) {
      auto b = c.allocate(1 << 20);
      PKT_OK(b.is_ok() ? b->free() : b.status());
    }
    cudaFree(src);
    cudaFree(out);
    PKT_OK(lb->free());
  }();
  return pkt::finish(("bootstrap_mp_test rank " + std::string(std::getenv("RANK"))).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  pkt::require_gpus(2);
  if (std::getenv("RANK")) return child();
  const std::string file = "/tmp/pkc-bootstrap-test-" + std::to_string(getpid()) + ".id";
  std::vector<pid_t> kids;
  for (int r = 0; r < 2; ++r) {
    pid_t p = fork();
    if (p == 0) {
      setenv("RANK", std::to_string(r).c_str(), 1);
      setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
      setenv("WORLD_SIZE", "2", 1);
      setenv("PK_BOOTSTRAP_FILE", file.c_str(), 1);
      setenv("PK_BOOTSTRAP_TIMEOUT_S", "60", 1);
      execv("/proc/self/exe", argv);
      std::_Exit(127);
    }
    kids.push_back(p);
  }
  // A child stuck in a collective must not hang the test: give up after 90 s and say so.
  int worst = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  for (pid_t p : kids) {
    int st = 0;
    pid_t done = 0;
    while ((done = waitpid(p, &st, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline)
      usleep(10000);
    if (done == 0) {
      std::fprintf(stderr, "bootstrap_mp_test: child %d still running after 90 s; killing it\n", p);
      kill(p, SIGKILL);
      waitpid(p, &st, 0);
      worst = 1;
      continue;
    }
    const int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    if (code != 0 && worst != 1) worst = code == 77 ? 77 : 1;
  }
  std::remove(file.c_str());
  (void)argc;
  std::printf("bootstrap_mp_test: %s\n", worst == 0 ? "passed" : worst == 77 ? "skipped" : "FAILED");
  return worst;
}
