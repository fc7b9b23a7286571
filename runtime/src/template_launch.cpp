// A template kernel's parameter block from its description (pk/runtime/template_launch.h).
#include <pk/runtime/template_launch.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include <pk/runtime/cuda_check.h>
#include <pk/runtime/driver.h>
#include <pk/runtime/kernel_args.h>
#include <pk/runtime/shared_gpu.h>

namespace pk {
namespace {

// A map depends only on the base, extents and box, so encoded maps are memoised: a call on the
// same tensors builds its block without the driver (rank threads share the cache).
using MapKey = std::tuple<const void*, std::vector<long long>, std::vector<int>, bool>;
std::mutex map_cache_mutex;
std::map<MapKey, TensorMap> map_cache;
constexpr std::size_t kMapCacheLimit = 4096;  // past this, start over rather than grow

Result<TensorMap> encode_uncached(const void* base, const std::vector<long long>& dims,
                                  const std::vector<int>& box, bool swizzle);

// What TMA takes of a bf16 tensor's extents (innermost first): each in [1, 2^31), the innermost a
// whole number of 16-byte rows.
Status check_tensor_map_extents(const std::vector<long long>& dims) {
  for (long long d : dims)
    if (d <= 0 || d >= (1ll << 31)) return Status::error("tensor map: extent " + std::to_string(d) + " out of range");
  if (dims[0] % 8 != 0)
    return Status::error("tensor map: the innermost extent (" + std::to_string(dims[0]) +
                         ") must be a multiple of 8 bf16 elements: TMA row pitches are 16-byte "
                         "multiples");
  return Status::ok();
}

}  // namespace

Result<TensorMap> encode_bf16_tensor_map(const void* base, const std::vector<long long>& dims,
                                         const std::vector<int>& box, bool swizzle) {
  MapKey key{base, dims, box, swizzle};
  {
    std::lock_guard<std::mutex> lock(map_cache_mutex);
    auto it = map_cache.find(key);
    if (it != map_cache.end()) return it->second;
  }
  PK_ASSIGN_OR_RETURN(TensorMap m, encode_uncached(base, dims, box, swizzle));
  std::lock_guard<std::mutex> lock(map_cache_mutex);
  if (map_cache.size() >= kMapCacheLimit) map_cache.clear();
  map_cache.emplace(std::move(key), m);
  return m;
}

namespace {

Result<TensorMap> encode_uncached(const void* base, const std::vector<long long>& dims,
                                  const std::vector<int>& box, bool swizzle) {
  const std::size_t rank = dims.size();
  if (rank < 2 || rank > 3 || box.size() != rank)
    return Status::error("tensor map: 2 or 3 dimensions, with as many box extents");
  if (reinterpret_cast<unsigned long long>(base) % 16 != 0)
    return Status::error("tensor map: the base address must be 16-byte aligned");
  PK_RETURN_IF_ERROR(check_tensor_map_extents(dims));
  cuuint64_t d[3], strides[2];
  cuuint32_t b[3], estr[3] = {1, 1, 1};
  unsigned long long pitch = 2;
  for (std::size_t i = 0; i < rank; ++i) {
    d[i] = static_cast<cuuint64_t>(dims[i]);
    b[i] = static_cast<cuuint32_t>(box[i]);
    pitch *= d[i];
    if (i + 1 < rank) strides[i] = pitch;
  }
  // Rows that start off a 128-byte line straddle two lines per box row, and a 256-byte L2
  // promotion of each then pulls in memory no box uses: measured 1.23x the time of 128-byte
  // promotion for a batched GEMM with K = 4104 (row pitch 8208 B) on an H100; aligned rows
  // keep 256 bytes.
  bool lineAligned = reinterpret_cast<unsigned long long>(base) % 128 == 0;
  for (std::size_t i = 0; i + 1 < rank; ++i) lineAligned &= strides[i] % 128 == 0;
  const CUtensorMapL2promotion promotion =
      lineAligned ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B : CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
  PK_ASSIGN_OR_RETURN(const DriverApi* drv, driver());
  CUtensorMap m;
  PK_RETURN_IF_ERROR(cu_status(
      drv->tensor_map_encode_tiled(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, cuuint32_t(rank),
                                   const_cast<void*>(base), d, strides, b, estr,
                                   CU_TENSOR_MAP_INTERLEAVE_NONE,
                                   swizzle ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
                                   promotion,
                                   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
      "cuTensorMapEncodeTiled"));
  static_assert(sizeof(TensorMap) == sizeof(CUtensorMap), "TensorMap must mirror CUtensorMap");
  TensorMap out;
  std::memcpy(&out, &m, sizeof(out));
  return out;
}

}  // namespace

Result<std::vector<unsigned char>> build_template_params(const TemplateLaunch& t,
                                                         const std::vector<TemplateArg>& args,
                                                         const HostValues& values,
                                                         const LaunchContext& ctx,
                                                         const TileTicket& ticket, void* workspace) {
  std::vector<unsigned char> block(t.params_bytes, 0);
  const int world = static_cast<int>(values.world);
  for (const ParamField& f : t.fields) {
    const std::string who = "kernel " + t.kernel + ", parameter " + f.member;
    if (f.arg >= int(args.size())) return Status::error(who + ": no argument #" + std::to_string(f.arg));
    unsigned char* at = block.data() + f.offset;
    auto map_of = [&](const void* base) -> Result<TensorMap> {
      std::vector<long long> dims;
      for (const HostExpr& d : f.dims) {
        PK_ASSIGN_OR_RETURN(long long v, evaluate_host_expr(d, values));
        dims.push_back(v);
      }
      Result<TensorMap> m = encode_bf16_tensor_map(base, dims, f.box, f.swizzle);
      if (!m.is_ok()) return m.status().with_context(who + " (argument #" + std::to_string(f.arg) + ")");
      return m;
    };
    switch (f.kind) {
      case ParamField::Kind::tmap: {
        PK_ASSIGN_OR_RETURN(TensorMap m, map_of(args[f.arg].local));
        std::memcpy(at, &m, sizeof(m));
        break;
      }
      case ParamField::Kind::tmaps:
        if (!args[f.arg].peers) return Status::error(who + ": argument is not symmetric");
        for (int r = 0; r < world && r < PK_MAX_RANKS; ++r) {
          PK_ASSIGN_OR_RETURN(TensorMap m, map_of(args[f.arg].peers[r]));
          std::memcpy(at + r * sizeof(TensorMap), &m, sizeof(m));
        }
        break;
      case ParamField::Kind::ctx: std::memcpy(at, &ctx, sizeof(ctx)); break;
      case ParamField::Kind::ticket: std::memcpy(at, &ticket, sizeof(ticket)); break;
      case ParamField::Kind::workspace: std::memcpy(at, &workspace, sizeof(workspace)); break;
      case ParamField::Kind::i32: {
        PK_ASSIGN_OR_RETURN(long long v, evaluate_host_expr(f.value, values));
        if (v < INT_MIN || v > INT_MAX) return Status::error(who + " = " + std::to_string(v) + " does not fit an int");
        const int i = static_cast<int>(v);
        std::memcpy(at, &i, sizeof(i));
        break;
      }
      case ParamField::Kind::i64: {
        PK_ASSIGN_OR_RETURN(long long v, evaluate_host_expr(f.value, values));
        std::memcpy(at, &v, sizeof(v));
        break;
      }
      case ParamField::Kind::f32: {
        if (f.arg < 0) break;  // no argument: 0 (the block starts zeroed)
        if (args[f.arg].tensor || !args[f.arg].real)
          return Status::error(who + ": argument #" + std::to_string(f.arg) + " is not a float");
        const float x = static_cast<float>(args[f.arg].real_value);
        std::memcpy(at, &x, sizeof(x));
        break;
      }
      case ParamField::Kind::ptr:  // no argument: a null pointer (the block starts zeroed)
        if (f.arg >= 0) std::memcpy(at, &args[f.arg].local, sizeof(void*));
        break;
      case ParamField::Kind::ptrs:
        if (!args[f.arg].peers) return Status::error(who + ": argument is not symmetric");
        for (int r = 0; r < world && r < PK_MAX_RANKS; ++r)
          std::memcpy(at + r * sizeof(void*), &args[f.arg].peers[r], sizeof(void*));
        break;
    }
  }
  return block;
}

HostValues template_values(const Context& ctx, const std::vector<TemplateArg>& args) {
  HostValues values;
  values.world = ctx.world();
  values.rank = ctx.rank();
  values.extent = [&args](int a, int k) -> Result<long long> {
    if (a < 0 || a >= int(args.size()) || !args[a].tensor || k < 0 || k > 3)
      return Status::error("a launch description reads the extent of argument #" +
                           std::to_string(a) + ", not a tensor");
    return args[a].shape[k];
  };
  values.scalar = [&args](int a) -> Result<long long> {
    if (a < 0 || a >= int(args.size()) || args[a].tensor)
      return Status::error("a launch description reads argument #" + std::to_string(a) + " as a scalar");
    return args[a].scalar;
  };
  return values;
}

Status check_template_fits(const Context& ctx, const TemplateLaunch& t, const std::vector<TemplateArg>& args) {
  HostValues values = template_values(ctx, args);
  PK_ASSIGN_OR_RETURN(values.sms, rank_sm_count(ctx));  // as the launch evaluates its fields
  for (const ParamField& f : t.fields) {
    const std::string who = "kernel " + t.kernel + ", parameter " + f.member;
    if (f.kind == ParamField::Kind::i32) {
      PK_ASSIGN_OR_RETURN(long long v, evaluate_host_expr(f.value, values));
      if (v < INT_MIN || v > INT_MAX) return Status::error(who + " = " + std::to_string(v) + " does not fit an int");
      continue;
    }
    if (f.kind != ParamField::Kind::tmap && f.kind != ParamField::Kind::tmaps) continue;
    if (f.arg < 0 || f.arg >= int(args.size()) || !args[f.arg].tensor)
      return Status::error(who + ": no tensor argument");
    if (reinterpret_cast<unsigned long long>(args[f.arg].local) % 16 != 0)
      return Status::error("kernel " + t.kernel + ", argument #" + std::to_string(f.arg) +
                           ": TMA needs a 16-byte aligned base address");
    std::vector<long long> dims;
    for (const HostExpr& d : f.dims) {
      PK_ASSIGN_OR_RETURN(long long v, evaluate_host_expr(d, values));
      dims.push_back(v);
    }
    if (!dims.empty()) PK_RETURN_IF_ERROR(check_tensor_map_extents(dims).with_context(who));
  }
  return Status::ok();
}

Status launch_template(Context& ctx, const Kernel& kernel, const TemplateLaunch& t,
                       const std::vector<TemplateArg>& args, cudaStream_t stream,
                       const std::string& code_tag) {
  HostValues values = template_values(ctx, args);
  PK_ASSIGN_OR_RETURN(int sms, rank_sm_count(ctx));  // 1/W of the SMs when W ranks share the GPU
  values.sms = sms;
  PK_ASSIGN_OR_RETURN(long long grid, evaluate_host_expr(t.grid, values));
  if (grid < 1 || grid > (1 << 20))
    return Status::error("kernel " + t.kernel + ": a grid of " + std::to_string(grid) + " blocks");
  // Flags count signals per launch, which depend on the sizes and the grid: a flag region per
  // configuration, as the nvcc plans key theirs. A template without a launch context (the GEMM,
  // attention) uses no flags and takes no region: any number of shapes may be launched.
  auto has_field = [&t](ParamField::Kind kind) {
    return std::any_of(t.fields.begin(), t.fields.end(), [kind](const ParamField& f) { return f.kind == kind; });
  };
  const bool uses_flags = has_field(ParamField::Kind::ctx);
  std::string key;  // empty: no region, and retract_launch(key) does nothing
  if (uses_flags) {
    key = t.kernel + code_tag + "[grid=" + std::to_string(grid);
    for (const TemplateArg& a : args)
      if (a.tensor)
        for (long long d : a.shape) key += "," + std::to_string(d);
    key += "]";
  }
  for (int z : t.zero_args) {
    if (z >= int(args.size()) || !args[z].tensor)
      return Status::error("kernel " + t.kernel + ": zero= names argument #" + std::to_string(z) +
                           ", not a tensor");
    PK_CUDA_TRY(cudaMemsetAsync(const_cast<void*>(args[z].local), 0,
                                static_cast<std::size_t>(args[z].numel) * args[z].element_bytes,
                                stream));
  }
  // Scratch the kernel asks for (split-K partial sums): before the launch context, so that an
  // allocation failure leaves the epochs alone.
  void* workspace = nullptr;
  for (const ParamField& f : t.fields) {
    if (f.kind != ParamField::Kind::workspace) continue;
    PK_ASSIGN_OR_RETURN(long long bytes, evaluate_host_expr(f.value, values));
    if (bytes < 0) return Status::error("kernel " + t.kernel + ": a workspace of " + std::to_string(bytes) + " bytes");
    if (bytes > 0) {
      PK_ASSIGN_OR_RETURN(workspace, ctx.workspace(stream, static_cast<std::size_t>(bytes)));
    }
  }
  LaunchContext lc{};
  if (uses_flags) {
    PK_ASSIGN_OR_RETURN(lc, ctx.make_launch_context(key));
  } else {
    ctx.order_launch();
  }
  TileTicket ticket{};
  if (has_field(ParamField::Kind::ticket)) {
    Result<TileTicket> taken = ctx.tile_ticket(t.kernel);
    if (!taken.is_ok()) {
      ctx.retract_launch(key);
      return taken.status();
    }
    ticket = *taken;
  }
  Result<std::vector<unsigned char>> block = build_template_params(t, args, values, lc, ticket, workspace);
  if (!block.is_ok()) {
    ctx.retract_launch(key);
    return block.status();
  }
  KernelArgs packed;
  packed.add_bytes(block->data(), block->size(), alignof(TensorMap));
  LaunchConfig cfg;
  cfg.grid = dim3(static_cast<unsigned>(grid));
  cfg.block = dim3(t.threads);
  cfg.shared_bytes = t.shared_bytes;
  Status s = kernel.launch(cfg, stream, packed);
  if (!s.is_ok()) ctx.retract_launch(key);  // nothing ran: keep the epochs in step
  return s;
}

}  // namespace pk
