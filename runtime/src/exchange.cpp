// NCCL as the bootstrap and exchange layer: unique id, communicator, all-gather of handles.
#include <pk/runtime/exchange.h>

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include <pk/runtime/cuda_check.h>

namespace pk {
namespace {

Status nccl_status(ncclResult_t r, const char* what) {
  if (r == ncclSuccess) return Status::ok();
  return Status::error(std::string(what) + ": " + ncclGetErrorString(r));
}

#define PK_NCCL_TRY(call) PK_RETURN_IF_ERROR(nccl_status((call), #call))

Result<int> env_int(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return Status::error(std::string("environment variable ") + name + " is not set");
  char* end = nullptr;
  long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < 0) return Status::error(std::string(name) + "='" + v + "' is not a rank");
  return static_cast<int>(x);
}

Status write_atomically(const std::string& path, const void* data, std::size_t n) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return Status::error("cannot write " + tmp);
  bool ok = std::fwrite(data, 1, n, f) == n;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::error("cannot publish the bootstrap file " + path);
  }
  return Status::ok();
}

// Polls for a complete id file newer than `not_before` (older files are left by earlier runs).
Status read_id(const std::string& path, ncclUniqueId* id, std::time_t not_before,
               double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000));
  while (std::chrono::steady_clock::now() < deadline) {
    struct stat st;
    if (stat(path.c_str(), &st) == 0 && st.st_mtime >= not_before &&
        st.st_size == static_cast<off_t>(sizeof(ncclUniqueId))) {
      std::ifstream in(path, std::ios::binary);
      if (in.read(reinterpret_cast<char*>(id), sizeof(ncclUniqueId))) return Status::ok();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return Status::error("timed out after " + std::to_string(timeout_s) +
                       " s waiting for rank 0's bootstrap file " + path);
}

}  // namespace

Status Exchange::barrier() {
  char in = 0;
  std::vector<char> out(static_cast<std::size_t>(world()));
  return all_gather(&in, out.data(), 1);
}

struct NcclExchange::Impl {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  void* buf = nullptr;  // device staging buffer, grown on demand
  std::size_t buf_bytes = 0;
};

NcclExchange::NcclExchange(int rank, int world, int device, std::unique_ptr<Impl> impl)
    : rank_(rank), world_(world), device_(device), impl_(std::move(impl)) {}

NcclExchange::~NcclExchange() {
  if (!impl_) return;
  cudaSetDevice(device_);
  if (impl_->comm) ncclCommDestroy(impl_->comm);
  if (impl_->buf) cudaFree(impl_->buf);
  if (impl_->stream) cudaStreamDestroy(impl_->stream);
}

Result<std::vector<std::unique_ptr<Exchange>>> NcclExchange::create_single_process(int world) {
  int count = 0;
  PK_CUDA_TRY(cudaGetDeviceCount(&count));
  if (world < 1 || world > count)
    return Status::error("single-process bootstrap needs " + std::to_string(world) +
                         " GPUs, found " + std::to_string(count));
  std::vector<ncclComm_t> comms(static_cast<std::size_t>(world));
  std::vector<int> devs(static_cast<std::size_t>(world));
  for (int i = 0; i < world; ++i) devs[i] = i;
  PK_NCCL_TRY(ncclCommInitAll(comms.data(), world, devs.data()));
  std::vector<std::unique_ptr<Exchange>> out;
  for (int r = 0; r < world; ++r) {
    auto impl = std::make_unique<Impl>();
    impl->comm = comms[r];
    PK_CUDA_TRY(cudaSetDevice(r));
    PK_CUDA_TRY(cudaStreamCreateWithFlags(&impl->stream, cudaStreamNonBlocking));
    out.push_back(std::unique_ptr<Exchange>(new NcclExchange(r, world, r, std::move(impl))));
  }
  return out;
}

Result<std::string> NcclExchange::bootstrap_path_from_env() {
  if (const char* p = std::getenv("PK_BOOTSTRAP_FILE"); p && *p) return std::string(p);
  const char* addr = std::getenv("MASTER_ADDR");
  const char* port = std::getenv("MASTER_PORT");
  if (!addr || !port)
    return Status::error("set PK_BOOTSTRAP_FILE, or MASTER_ADDR and MASTER_PORT, for the "
                         "one-process-per-GPU bootstrap");
  std::string path = std::string("/tmp/pkc-bootstrap-") + addr + "-" + port;
  if (const char* run = std::getenv("TORCHELASTIC_RUN_ID"); run && *run) path += std::string("-") + run;
  return path + ".id";
}

Result<std::unique_ptr<Exchange>> NcclExchange::create_from_env() {
  PK_ASSIGN_OR_RETURN(int rank, env_int("RANK"));
  PK_ASSIGN_OR_RETURN(int world, env_int("WORLD_SIZE"));
  if (world < 1 || rank >= world)
    return Status::error("RANK " + std::to_string(rank) + " is not below WORLD_SIZE " +
                         std::to_string(world));
  int count = 0;
  PK_CUDA_TRY(cudaGetDeviceCount(&count));
  if (count < 1) return Status::error("no CUDA device");
  auto local = env_int("LOCAL_RANK");
  const int device = local.is_ok() ? *local : rank % count;
  if (device >= count)
    return Status::error("LOCAL_RANK " + std::to_string(device) + " but only " +
                         std::to_string(count) + " devices");
  PK_ASSIGN_OR_RETURN(std::string path, bootstrap_path_from_env());
  double timeout_s = 120;
  if (const char* t = std::getenv("PK_BOOTSTRAP_TIMEOUT_S")) timeout_s = std::atof(t);

  // Files from earlier runs are ignored: a valid one is written after the ranks started.
  const std::time_t start = std::time(nullptr) - 30;
  ncclUniqueId id;
  if (rank == 0) {
    PK_NCCL_TRY(ncclGetUniqueId(&id));
    PK_RETURN_IF_ERROR(write_atomically(path, &id, sizeof(id)));
  } else {
    PK_RETURN_IF_ERROR(read_id(path, &id, start, timeout_s));
  }
  PK_CUDA_TRY(cudaSetDevice(device));
  auto impl = std::make_unique<Impl>();
  PK_NCCL_TRY(ncclCommInitRank(&impl->comm, world, id, rank));
  // Every rank has joined, so every rank has read the id: the file is no longer needed.
  if (rank == 0) std::remove(path.c_str());
  PK_CUDA_TRY(cudaStreamCreateWithFlags(&impl->stream, cudaStreamNonBlocking));
  return std::unique_ptr<Exchange>(new NcclExchange(rank, world, device, std::move(impl)));
}

Status NcclExchange::all_gather(const void* in, void* out, std::size_t bytes) {
  PK_CUDA_TRY(cudaSetDevice(device_));
  const std::size_t need = bytes * static_cast<std::size_t>(world_ + 1);
  if (need > impl_->buf_bytes) {
    if (impl_->buf) PK_CUDA_TRY(cudaFree(impl_->buf));
    impl_->buf = nullptr;
    PK_CUDA_TRY(cudaMalloc(&impl_->buf, need));
    impl_->buf_bytes = need;
  }
  // Layout: [gathered: world * bytes][send: bytes].
  char* recv = static_cast<char*>(impl_->buf);
  char* send = recv + bytes * static_cast<std::size_t>(world_);
  PK_CUDA_TRY(cudaMemcpyAsync(send, in, bytes, cudaMemcpyHostToDevice, impl_->stream));
  PK_NCCL_TRY(ncclAllGather(send, recv, bytes, ncclChar, impl_->comm, impl_->stream));
  PK_CUDA_TRY(cudaMemcpyAsync(out, recv, bytes * static_cast<std::size_t>(world_),
                              cudaMemcpyDeviceToHost, impl_->stream));
  PK_CUDA_TRY(cudaStreamSynchronize(impl_->stream));
  return Status::ok();
}

}  // namespace pk
