// Symmetric buffers: cudaMalloc per rank, pointers or CUDA IPC handles exchanged via Exchange.
#include <pk/runtime/symmetric.h>

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <cstring>

#include <pk/runtime/cuda_check.h>
#include <pk/runtime/driver.h>

namespace pk {
namespace {

// What each rank publishes about its allocation.
struct Record {
  long long host;  // gethostid(): IPC handles only work within one host
  int pid;
  int device;
  unsigned long long ptr;
  cudaIpcMemHandle_t handle;
};

Status enable_peer_access(int device, int peer_device) {
  if (device == peer_device) return Status::ok();
  PK_CUDA_TRY(cudaSetDevice(device));
  cudaError_t e = cudaDeviceEnablePeerAccess(peer_device, 0);
  if (e == cudaErrorPeerAccessAlreadyEnabled) {
    (void)cudaGetLastError();  // clear the sticky-until-read error
    return Status::ok();
  }
  return cuda_status(e, "cudaDeviceEnablePeerAccess");
}

// What an allocation of 0 bytes reserves: one allocation granule.
constexpr std::size_t kEmptyAllocationBytes = 256;

}  // namespace

// Ranks sharing one GPU in this process: every peer's allocation is a plain pointer on this
// device, so only the pointers travel (no IPC handles, no peer access to enable).
Result<SymmetricBuffer> SymmetricBuffer::allocate_shared(SymmetricBuffer b, Exchange& ex, bool zero) {
  if (zero) {
    PK_CUDA_TRY(cudaMemset(b.local_, 0, b.bytes_));
    // The memset's stream only: a device-wide sync would also wait for other ranks' kernels.
    PK_CUDA_TRY(cudaStreamSynchronize(nullptr));
  }
  struct Shared {
    int device;
    unsigned long long ptr;
  } mine{ex.device(), reinterpret_cast<unsigned long long>(b.local_)};
  std::vector<Shared> all(static_cast<std::size_t>(ex.world()));
  PK_RETURN_IF_ERROR(ex.all_gather(&mine, all.data(), sizeof(Shared)));
  b.peers_.assign(all.size(), nullptr);
  b.opened_.assign(all.size(), false);
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r].device != mine.device)
      return Status::error("shared-GPU symmetric allocation: rank " + std::to_string(r) +
                           " is on device " + std::to_string(all[r].device) + ", not " +
                           std::to_string(mine.device));
    b.peers_[r] = reinterpret_cast<void*>(all[r].ptr);
  }
  return b;
}

Result<SymmetricBuffer> SymmetricBuffer::allocate(Exchange& ex, std::size_t bytes, bool zero) {
  SymmetricBuffer b;
  b.ex_ = &ex;
  b.bytes_ = bytes;
  const int me = ex.device();
  PK_CUDA_TRY(cudaSetDevice(me));
  // An empty buffer is still a real allocation (cudaMalloc of 0 gives null), so an empty
  // tensor has an address on every rank and is recognised as symmetric; it holds 0 bytes.
  PK_CUDA_TRY(cudaMalloc(&b.local_, bytes ? bytes : kEmptyAllocationBytes));
  if (ex.ranks_per_device() > 1) return allocate_shared(std::move(b), ex, zero);
  if (zero) {
    PK_CUDA_TRY(cudaMemset(b.local_, 0, bytes));
    PK_CUDA_TRY(cudaDeviceSynchronize());  // zeros land before any peer learns the address
  }
  Record mine{};
  mine.host = gethostid();
  mine.pid = static_cast<int>(getpid());
  mine.device = me;
  mine.ptr = reinterpret_cast<unsigned long long>(b.local_);
  PK_CUDA_TRY(cudaIpcGetMemHandle(&mine.handle, b.local_));
  std::vector<Record> all(static_cast<std::size_t>(ex.world()));
  PK_RETURN_IF_ERROR(ex.all_gather(&mine, all.data(), sizeof(Record)));

  b.peers_.assign(all.size(), nullptr);
  b.opened_.assign(all.size(), false);
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (static_cast<int>(r) == ex.rank()) {
      b.peers_[r] = b.local_;
    } else if (all[r].pid == mine.pid && all[r].host == mine.host) {
      // Same process: unified addressing makes the pointer valid once peer access is on.
      PK_RETURN_IF_ERROR(enable_peer_access(me, all[r].device));
      b.peers_[r] = reinterpret_cast<void*>(all[r].ptr);
    } else {
      PK_CUDA_TRY(cudaSetDevice(me));
      void* p = nullptr;
      PK_CUDA_TRY(cudaIpcOpenMemHandle(&p, all[r].handle, cudaIpcMemLazyEnablePeerAccess));
      b.peers_[r] = p;
      b.opened_[r] = true;
    }
  }
  return b;
}

SymmetricBuffer::SymmetricBuffer(SymmetricBuffer&& o) noexcept { *this = std::move(o); }

SymmetricBuffer& SymmetricBuffer::operator=(SymmetricBuffer&& o) noexcept {
  if (this != &o) {
    (void)free();
    ex_ = o.ex_;
    bytes_ = o.bytes_;
    local_ = o.local_;
    peers_ = std::move(o.peers_);
    opened_ = std::move(o.opened_);
    o.ex_ = nullptr;
    o.local_ = nullptr;
    o.bytes_ = 0;
    o.peers_.clear();
    o.opened_.clear();
  }
  return *this;
}

SymmetricBuffer::~SymmetricBuffer() { (void)free(); }

Status SymmetricBuffer::free() {
  if (!local_) return Status::ok();
  Status st;
  PK_CUDA_TRY(cudaSetDevice(ex_->device()));
  // Kernels still using the buffer must finish before anything is unmapped.
  st = cuda_status(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  for (std::size_t r = 0; r < peers_.size(); ++r)
    if (opened_[r] && st.is_ok()) st = cuda_status(cudaIpcCloseMemHandle(peers_[r]), "cudaIpcCloseMemHandle");
  // No rank frees its memory while another may still map or access it.
  Status b = ex_->barrier();
  if (st.is_ok()) st = b;
  Status f = cuda_status(cudaFree(local_), "cudaFree");
  if (st.is_ok()) st = f;
  local_ = nullptr;
  peers_.clear();
  opened_.clear();
  bytes_ = 0;
  return st;
}

Result<TensorMap> SymmetricBuffer::tensor_map_2d(int peer, DType dtype, unsigned long long rows,
                                                 unsigned long long cols, unsigned int box_rows,
                                                 unsigned int box_cols) const {
  if (peer < 0 || peer >= world()) return Status::error("tensor_map_2d: no rank " + std::to_string(peer));
  CUtensorMapDataType t;
  switch (dtype) {
    case DType::f32: t = CU_TENSOR_MAP_DATA_TYPE_FLOAT32; break;
    case DType::bf16: t = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16; break;
    case DType::f16: t = CU_TENSOR_MAP_DATA_TYPE_FLOAT16; break;
    case DType::i32: t = CU_TENSOR_MAP_DATA_TYPE_INT32; break;
    case DType::u64: t = CU_TENSOR_MAP_DATA_TYPE_UINT64; break;
    case DType::f8e4m3:
    case DType::f8e5m2:
    case DType::i8: t = CU_TENSOR_MAP_DATA_TYPE_UINT8; break;  // TMA moves fp8 and i8 as bytes
    default: return Status::error("tensor_map_2d: unsupported dtype");
  }
  const unsigned long long es = dtype_size(dtype);
  if (rows * cols * es > bytes_)
    return Status::error("tensor_map_2d: " + std::to_string(rows) + "x" + std::to_string(cols) +
                         " " + dtype_name(dtype) + " exceeds the buffer");
  if ((cols * es) % 16 != 0)
    return Status::error("tensor_map_2d: row pitch must be a multiple of 16 bytes");
  if (box_rows == 0 || box_cols == 0 || box_rows > 256 || box_cols > 256 || (box_cols * es) % 16)
    return Status::error("tensor_map_2d: box extents must be in [1, 256] with 16-byte rows");
  PK_ASSIGN_OR_RETURN(const DriverApi* d, driver());
  static_assert(sizeof(TensorMap) == sizeof(CUtensorMap), "TensorMap must mirror CUtensorMap");
  static_assert(alignof(TensorMap) == alignof(CUtensorMap), "TensorMap must mirror CUtensorMap");
  CUtensorMap m;
  const cuuint64_t dims[2] = {cols, rows};
  const cuuint64_t strides[1] = {cols * es};
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t estr[2] = {1, 1};
  PK_RETURN_IF_ERROR(cu_status(
      d->tensor_map_encode_tiled(&m, t, 2, peers_[peer], dims, strides, box, estr,
                                 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                 CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
      "cuTensorMapEncodeTiled"));
  TensorMap out;
  std::memcpy(&out, &m, sizeof(out));
  return out;
}

}  // namespace pk
