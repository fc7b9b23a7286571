// A template kernel's parameter block from its description (pk/runtime/template_launch.h).
#include <pk/runtime/template_launch.h>

#include <climits>
#include <cstring>
#include <string>

#include <pk/runtime/driver.h>

namespace pk {

Result<TensorMap> encode_bf16_tensor_map(const void* base, const std::vector<long long>& dims,
                                         const std::vector<int>& box) {
  const std::size_t rank = dims.size();
  if (rank < 2 || rank > 3 || box.size() != rank)
    return Status::error("tensor map: 2 or 3 dimensions, with as many box extents");
  if (reinterpret_cast<unsigned long long>(base) % 16 != 0)
    return Status::error("tensor map: the base address must be 16-byte aligned");
  if (dims[0] % 8 != 0)
    return Status::error("tensor map: the innermost extent (" + std::to_string(dims[0]) +
                         ") must be a multiple of 8 bf16 elements: TMA row pitches are 16-byte "
                         "multiples");
  cuuint64_t d[3], strides[2];
  cuuint32_t b[3], estr[3] = {1, 1, 1};
  unsigned long long pitch = 2;
  for (std::size_t i = 0; i < rank; ++i) {
    if (dims[i] <= 0 || dims[i] >= (1ll << 31))
      return Status::error("tensor map: extent " + std::to_string(dims[i]) + " out of range");
    d[i] = static_cast<cuuint64_t>(dims[i]);
    b[i] = static_cast<cuuint32_t>(box[i]);
    pitch *= d[i];
    if (i + 1 < rank) strides[i] = pitch;
  }
  PK_ASSIGN_OR_RETURN(const DriverApi* drv, driver());
  CUtensorMap m;
  PK_RETURN_IF_ERROR(cu_status(
      drv->tensor_map_encode_tiled(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, cuuint32_t(rank),
                                   const_cast<void*>(base), d, strides, b, estr,
                                   CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                   CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
      "cuTensorMapEncodeTiled"));
  static_assert(sizeof(TensorMap) == sizeof(CUtensorMap), "TensorMap must mirror CUtensorMap");
  TensorMap out;
  std::memcpy(&out, &m, sizeof(out));
  return out;
}

Result<std::vector<unsigned char>> build_template_params(const TemplateLaunch& t,
                                                         const std::vector<TemplateArg>& args,
                                                         const HostValues& values,
                                                         const LaunchContext& ctx) {
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
      Result<TensorMap> m = encode_bf16_tensor_map(base, dims, f.box);
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
      case ParamField::Kind::i32: {
        PK_ASSIGN_OR_RETURN(long long v, evaluate_host_expr(f.value, values));
        if (v < INT_MIN || v > INT_MAX) return Status::error(who + " = " + std::to_string(v) + " does not fit an int");
        const int i = static_cast<int>(v);
        std::memcpy(at, &i, sizeof(i));
        break;
      }
      case ParamField::Kind::ptr: std::memcpy(at, &args[f.arg].local, sizeof(void*)); break;
      case ParamField::Kind::ptrs:
        if (!args[f.arg].peers) return Status::error(who + ": argument is not symmetric");
        for (int r = 0; r < world && r < PK_MAX_RANKS; ++r)
          std::memcpy(at + r * sizeof(void*), &args[f.arg].peers[r], sizeof(void*));
        break;
    }
  }
  return block;
}

}  // namespace pk
