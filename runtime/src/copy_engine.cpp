// The copy-engine route of the copy-only collectives: two one-way flag rounds around
// copy-engine pulls (see pk/runtime/copy_engine.h).
#include <pk/runtime/copy_engine.h>

#include <charconv>
#include <cstdio>
#include <string>
#include <vector>

#include <pk/runtime/context.h>
#include <pk/runtime/cuda_check.h>
#include <pk/runtime/kernel_args.h>
#include <pk/runtime/module.h>

#include "copy_engine_state.h"

namespace pk {
namespace {

// Phase 0 ("my input is ready") and phase 1 ("I have read your input"). Each (phase, source)
// pair has its own slot in the receiver's flags, so "slot >= epoch" means exactly "that source
// reached this call", whatever other sources do. One block: slot indices are used as they are.
constexpr char kSyncSource[] = R"(
#include <pk/device/signal.cuh>
#include <pk/device/wait.cuh>
extern "C" __global__ void pk_copy_engine_sync(pk::LaunchContext c, int phase) {
  const int peer = threadIdx.x;
  if (peer >= c.world || peer == c.rank) return;
  // The fence in signal() publishes everything this stream finished before this kernel began:
  // the input's producers (phase 0), the copies out of the peer's input (phase 1).
  pk::signal(c, peer, phase * PK_MAX_RANKS + c.rank);
  pk::wait_ge(c, phase * PK_MAX_RANKS + peer, c.epoch);
}
)";

const char* const kNames[] = {"all_gather", "all_to_all", "broadcast", "gather", "scatter"};

bool rooted(CopyCollective c) {
  return c == CopyCollective::broadcast || c == CopyCollective::gather ||
         c == CopyCollective::scatter;
}

Result<CopyEngineState*> state_of(Context& ctx) {
  std::unique_ptr<CopyEngineState>& s = ctx.copy_engine_state();
  if (s) return s.get();
  auto fresh = std::make_unique<CopyEngineState>();
  PK_CUDA_TRY(cudaSetDevice(ctx.device()));
  PK_RETURN_IF_ERROR(fresh->side.create());
  CompileRequest req;
  req.source = kSyncSource;
  req.program_name = "pk_copy_engine_sync.cu";
  PK_ASSIGN_OR_RETURN(fresh->module, Module::compile_and_load(req));
  PK_ASSIGN_OR_RETURN(fresh->sync, fresh->module->kernel("pk_copy_engine_sync"));
  s = std::move(fresh);
  // Every rank loads its module before any rank launches the sync kernel: loading a module
  // can wait for a peer GPU that is already spinning in a wait on this rank (seen on 2 x H200:
  // a deadlock until the wait timed out). Every rank gets here at the same launch.
  PK_RETURN_IF_ERROR(ctx.exchange().barrier());
  return s.get();
}

Status sync_round(const CopyEngineState& s, const LaunchContext& lc, int phase, cudaStream_t stream) {
  KernelArgs args;
  args.add(lc);
  args.add(phase);
  LaunchConfig cfg;
  cfg.grid = dim3(1);
  cfg.block = dim3(32);
  return s.sync.launch(cfg, stream, args);
}

}  // namespace

const char* copy_collective_name(CopyCollective c) { return kNames[static_cast<int>(c)]; }

const char* copy_engine_sync_source() { return kSyncSource; }

Result<std::optional<CopyEngineRoute>> parse_copy_engine_route(const std::string& launch_line) {
  const std::string key = " copy_engine=";
  const auto at = launch_line.find(key);
  if (at == std::string::npos) return std::optional<CopyEngineRoute>();
  std::string value = launch_line.substr(at + key.size());
  value = value.substr(0, value.find_first_of(" \n"));
  const std::string bad = "malformed copy_engine field '" + value +
                          "' (want <collective>:<min bytes>:<x arg>:<y arg>:<root arg|-1>)";
  // Split at ':' and read each number whole with from_chars: no iostream, whose number parsing
  // goes through the global locale's facets (inside a PyTorch extension, istream >> long long
  // crashed in pk_torch.compile: the multi-rank fuzzer's all_to_all, which has this field).
  std::vector<std::string> parts;
  for (std::size_t at = 0;;) {
    const std::size_t colon = value.find(':', at);
    parts.push_back(value.substr(at, colon == std::string::npos ? std::string::npos : colon - at));
    if (colon == std::string::npos) break;
    at = colon + 1;
  }
  if (parts.size() != 5) return Status::error(bad);
  int kind = -1;
  for (int k = 0; k < 5; ++k)
    if (parts[0] == kNames[k]) kind = k;
  if (kind < 0) return Status::error(bad + ": unknown collective");
  CopyEngineRoute r;
  r.kind = static_cast<CopyCollective>(kind);
  auto number = [](const std::string& text, auto& out) {
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, out);
    return ec == std::errc() && ptr == end && !text.empty();
  };
  if (!number(parts[1], r.min_bytes) || !number(parts[2], r.x) || !number(parts[3], r.y) ||
      !number(parts[4], r.root) || r.min_bytes < 1 || r.x < 0 || r.y < 0 || r.root < -1)
    return Status::error(bad);
  if (rooted(r.kind) != (r.root >= 0)) return Status::error(bad + ": root argument mismatch");
  return std::optional<CopyEngineRoute>(r);
}

long long copy_engine_message_bytes(CopyCollective c, long long x_numel, long long y_numel,
                                    int world, int element_bytes) {
  switch (c) {
    case CopyCollective::all_gather:
    case CopyCollective::broadcast:
    case CopyCollective::gather: return x_numel * element_bytes;
    case CopyCollective::all_to_all: return x_numel / world * element_bytes;
    case CopyCollective::scatter: return y_numel * element_bytes;
  }
  return 0;
}

bool takes_copy_engine(const Context& ctx, const CopyEngineRoute& route, long long message_bytes) {
  long long min = route.min_bytes;
  if (ctx.copy_engine_min_bytes() >= 0) min = ctx.copy_engine_min_bytes();
  return min > 0 && message_bytes >= min;
}

Status copy_engine_collective(Context& ctx, const std::string& kernel, CopyCollective kind,
                              void* const* x_peers, void* y, long long message_bytes,
                              long long root, cudaStream_t stream) {
  const int me = ctx.rank(), W = ctx.world();
  const std::string who = std::string("copy-engine ") + copy_collective_name(kind) + ": ";
  if (message_bytes < 1) return Status::error(who + "empty message");
  if (rooted(kind) && (root < 0 || root >= W))
    return Status::error(who + "root " + std::to_string(root) + " is not a rank of world " +
                         std::to_string(W));
  for (int r = 0; r < W; ++r)
    if (!x_peers[r]) return Status::error(who + "the input is not mapped on rank " + std::to_string(r));
  PK_ASSIGN_OR_RETURN(CopyEngineState * s, state_of(ctx));
  PK_ASSIGN_OR_RETURN(LaunchContext lc, ctx.make_launch_context(kernel + "/copy_engine", false));

  // (destination, source) of each pull this rank makes, peers first from the next rank on so
  // that ranks start on different peers; the local copy last.
  struct Pull { char* dst; const char* src; };
  std::vector<Pull> pulls;
  const long long m = message_bytes;
  auto in = [&](int r, long long block) { return static_cast<const char*>(x_peers[r]) + block * m; };
  char* out = static_cast<char*>(y);
  for (int k = 1; k <= W; ++k) {
    const int r = (me + k) % W;  // k == W: this rank
    switch (kind) {
      case CopyCollective::all_gather: pulls.push_back({out + r * m, in(r, 0)}); break;
      case CopyCollective::all_to_all: pulls.push_back({out + r * m, in(r, me)}); break;
      case CopyCollective::gather:
        if (me == root) pulls.push_back({out + r * m, in(r, 0)});
        break;
      case CopyCollective::broadcast:
        if (r == root) pulls.push_back({out, in(r, 0)});
        break;
      case CopyCollective::scatter:
        if (r == root) pulls.push_back({out, in(r, me)});
        break;
    }
  }

  PK_CUDA_TRY(cudaSetDevice(ctx.device()));
  PK_RETURN_IF_ERROR(sync_round(*s, lc, 0, stream).with_context(who + "ready round"));
  // The local copy (source on this rank) runs on the second stream, forked after the round.
  const bool local_last = !pulls.empty() && (kind == CopyCollective::all_gather ||
                                             kind == CopyCollective::all_to_all ||
                                             (rooted(kind) && me == root));
  const bool fork = local_last && pulls.size() > 1;
  if (fork) {
    const SideStream& side = s->side;
    PK_CUDA_TRY(cudaEventRecord(side.fork, stream));
    PK_CUDA_TRY(cudaStreamWaitEvent(side.stream, side.fork, 0));
    const Pull& p = pulls.back();
    PK_CUDA_TRY(cudaMemcpyAsync(p.dst, p.src, m, cudaMemcpyDefault, side.stream));
    PK_CUDA_TRY(cudaEventRecord(side.join, side.stream));
    pulls.pop_back();
  }
  for (const Pull& p : pulls)
    PK_CUDA_TRY(cudaMemcpyAsync(p.dst, p.src, m, cudaMemcpyDefault, stream));
  if (fork) PK_CUDA_TRY(cudaStreamWaitEvent(stream, s->side.join, 0));
  return sync_round(*s, lc, 1, stream).with_context(who + "done round");
}

}  // namespace pk
