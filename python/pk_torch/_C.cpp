// pk for PyTorch: a context over torch.distributed, symmetric tensors as torch tensors, and
// pkc kernels launched on the current CUDA stream.
#include <torch/extension.h>

#include <ATen/cuda/CUDAContext.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include <pk/jit/compile.h>
#include <pk/runtime/runtime.h>
#include <pk/runtime/shared_gpu.h>

namespace py = pybind11;

namespace {

void throw_if_error(const pk::Status& s) {
  if (!s.is_ok()) throw std::runtime_error(s.message());
}

// The runtime's exchange over a Python callable that all-gathers bytes through the process
// group (pk_torch._gather_bytes): the runtime needs only rank, world, device and all-gather.
class TorchExchange final : public pk::Exchange {
 public:
  TorchExchange(int rank, int world, int device, py::function gather)
      : rank_(rank), world_(world), device_(device), gather_(std::move(gather)) {}
  ~TorchExchange() override {
    py::gil_scoped_acquire gil;
    gather_ = py::function();
  }
  int rank() const override { return rank_; }
  int world() const override { return world_; }
  int device() const override { return device_; }
  pk::Status all_gather(const void* in, void* out, std::size_t bytes) override {
    py::gil_scoped_acquire gil;
    try {
      std::string got = py::bytes(gather_(py::bytes(static_cast<const char*>(in), bytes)));
      if (got.size() != bytes * world_)
        return pk::Status::error("all_gather through torch.distributed returned " +
                                 std::to_string(got.size()) + " bytes, want " +
                                 std::to_string(bytes * world_));
      std::memcpy(out, got.data(), got.size());
      return pk::Status::ok();
    } catch (py::error_already_set& e) {
      return pk::Status::error(std::string("torch.distributed all_gather: ") + e.what());
    }
  }

 private:
  int rank_, world_, device_;
  py::function gather_;
};

std::string element_of(const at::Tensor& t, const std::string& where) {
  switch (t.scalar_type()) {
    case at::kBFloat16: return "bf16";
    case at::kHalf: return "f16";
    case at::kFloat8_e4m3fn: return "f8E4M3FN";
    case at::kFloat8_e5m2: return "f8E5M2";
    case at::kFloat: return "f32";
    case at::kDouble: return "f64";
    case at::kInt: return "i32";
    case at::kLong: return "i64";
    case at::kChar: return "i8";
    default:
      throw std::runtime_error("pk_torch: " + where + ": unsupported dtype " +
                               std::string(c10::toString(t.scalar_type())) +
                               " (bf16, f16, fp8 e4m3 / e5m2, f32, f64, int8, int32 or int64)");
  }
}

// A pk context per process: symmetric allocations live until close(), freed in order on every
// rank (freeing is collective).
class TorchContext {
 public:
  TorchContext(int rank, int world, int device, py::function gather) {
    ex_ = std::make_unique<TorchExchange>(rank, world, device, std::move(gather));
    create();
  }
  // A rank of the shared-GPU mode: `ex` comes from SharedGpuRanks.take() in this rank's thread.
  explicit TorchContext(std::unique_ptr<pk::Exchange> ex) {
    ex_ = std::move(ex);
    create();
  }
  ~TorchContext() {
    if (ctx_) {
      // Not collective here: leak rather than free memory peers may still map.
      for (auto& b : buffers_) b.release();
    }
  }

  int rank() const { return ctx_->rank(); }
  int world() const { return ctx_->world(); }

  // A symmetric tensor: every rank calls with the same shape and dtype.
  at::Tensor empty(const std::vector<int64_t>& shape, py::object dtype) {
    live();
    const at::ScalarType type = torch::python::detail::py_object_to_dtype(dtype);
    int64_t numel = 1;
    for (int64_t d : shape) numel *= d;
    // 0 bytes is fine: the runtime still gives every rank an address (an empty tensor).
    const std::size_t bytes = numel * c10::elementSize(type);
    pk::Result<pk::SymmetricBuffer> buf = pk::Status::error("not allocated");
    {
      py::gil_scoped_release nogil;
      buf = ctx_->allocate(bytes);
    }
    throw_if_error(buf.is_ok() ? pk::Status::ok() : buf.status());
    auto owned = std::make_unique<pk::SymmetricBuffer>(std::move(*buf));
    void* local = owned->local();
    buffers_.push_back(std::move(owned));
    return torch::from_blob(local, shape, [](void*) {},
                            at::TensorOptions().dtype(type).device(at::kCUDA, ctx_->device()));
  }

  // The symmetric buffer holding `t` and t's byte offset in it, or null. Found by t's storage
  // (empty() wraps each buffer in its own), not by data_ptr(), which is null for empty tensors.
  const pk::SymmetricBuffer* find(const at::Tensor& t, std::size_t* offset) const {
    if (!t.has_storage()) return nullptr;
    const void* storage = t.storage().data();
    const std::size_t start = static_cast<std::size_t>(t.storage_offset()) * t.element_size();
    for (const auto& b : buffers_) {
      if (storage == b->local() && start + t.nbytes() <= b->bytes()) {
        *offset = start;
        return b.get();
      }
    }
    return nullptr;
  }

  // The calls that may wait for other ranks release the GIL: in the shared-GPU mode the other
  // ranks are Python threads of this process.
  void barrier() {
    live();
    pk::Status s;
    {
      py::gil_scoped_release nogil;
      s = ctx_->exchange().barrier();
    }
    throw_if_error(s);
  }
  void check_errors() {
    live();
    pk::Status s;
    {
      py::gil_scoped_release nogil;
      s = ctx_->check_errors();
    }
    throw_if_error(s);
  }

  // Collective: frees every symmetric tensor (their torch views must no longer be used), then
  // the context, whose flags and landing buffers are symmetric too: both without the GIL, which
  // the other ranks' threads need to reach their own close() (holding it here hung W = 3).
  void close() {
    if (!ctx_) return;
    pk::Status s;
    {
      py::gil_scoped_release nogil;
      for (auto& b : buffers_)
        if (s.is_ok()) s = b->free();
      if (s.is_ok()) {
        buffers_.clear();
        ctx_.reset();
      }
    }
    throw_if_error(s);
  }

  // Ranks sharing this rank's GPU in this process (1 with a GPU of its own).
  int ranks_per_device() const { return ex_->ranks_per_device(); }

  pk::Context& get() { return live(), *ctx_; }

 private:
  void create() {
    pk::Result<std::unique_ptr<pk::Context>> ctx = pk::Status::error("not created");
    {
      py::gil_scoped_release nogil;
      ctx = pk::Context::create(*ex_);
    }
    throw_if_error(ctx.is_ok() ? pk::Status::ok() : ctx.status());
    ctx_ = std::move(*ctx);
  }
  void live() const {
    if (!ctx_) throw std::runtime_error("pk_torch: the context is closed");
  }
  std::unique_ptr<pk::Exchange> ex_;
  std::unique_ptr<pk::Context> ctx_;
  std::vector<std::unique_ptr<pk::SymmetricBuffer>> buffers_;
};

pk::jit::ArgValue to_arg(TorchContext& ctx, const pk::jit::ArgSpec& spec, py::handle obj, int i) {
  const std::string where = "argument #" + std::to_string(i) + " (" + spec.text + ")";
  if (spec.kind == pk::jit::ArgKind::scalar) {
    // bool is a Python int: refused, not read as 0 / 1. A float parameter takes an int too (as C++
    // converts it); an integer one refuses a float rather than truncate it.
    const bool real = spec.element == "f32" || spec.element == "f64";
    if (py::isinstance<py::bool_>(obj))
      throw std::runtime_error("pk_torch: " + where + " must be a number, not a bool");
    if (py::isinstance<py::int_>(obj)) {
      if (real) return pk::jit::arg_value(obj.cast<float>());
      try {
        return pk::jit::arg_value(obj.cast<long long>());
      } catch (const py::cast_error&) {
        throw std::runtime_error("pk_torch: " + where + " does not fit a 64-bit integer");
      }
    }
    if (py::isinstance<py::float_>(obj)) {
      if (!real) throw std::runtime_error("pk_torch: " + where + " is an integer parameter; got a float");
      return pk::jit::arg_value(obj.cast<float>());
    }
    throw std::runtime_error("pk_torch: " + where + " must be a Python number");
  }
  at::Tensor t;
  try {
    t = obj.cast<at::Tensor>();
  } catch (const py::cast_error&) {
    throw std::runtime_error("pk_torch: " + where + " must be a torch tensor, got " +
                             std::string(py::str(py::type::of(obj))));
  }
  if (!t.is_cuda() || t.get_device() != ctx.get().device() || !t.is_contiguous() || t.dim() > 4 ||
      t.dim() < 1)
    throw std::runtime_error("pk_torch: " + where +
                             " must be a contiguous CUDA tensor of 1 to 4 dimensions on this rank's device");
  pk::jit::ArgValue v;
  v.kind = spec.kind;
  v.element = element_of(t, where);
  // The spec's rank, not fewer dimensions padded with 1s: a [N] bias for a [1, N] parameter would
  // be read as [N, 1].
  if (!spec.shape.empty() && t.dim() != static_cast<int64_t>(spec.shape.size()))
    throw std::runtime_error("pk_torch: " + where + " has " + std::to_string(t.dim()) + " dimension(s); the spec's has " +
                             std::to_string(spec.shape.size()) + " (view or unsqueeze it to that rank)");
  long long shape[4] = {1, 1, 1, 1};
  for (int64_t k = 0; k < t.dim(); ++k) shape[k] = t.size(k);
  if (spec.kind == pk::jit::ArgKind::sym_tensor) {
    std::size_t offset = 0;
    const pk::SymmetricBuffer* b = ctx.find(t, &offset);
    if (!b) throw std::runtime_error("pk_torch: " + where + " must come from Context.empty()");
    for (int r = 0; r < b->world(); ++r) v.sym.peer[r] = static_cast<unsigned char*>(b->peer(r)) + offset;
    std::copy(shape, shape + 4, v.sym.shape);
    v.sym.numel = t.numel();
  } else {
    v.tensor.data = static_cast<unsigned char*>(t.data_ptr());
    std::copy(shape, shape + 4, v.tensor.shape);
    v.tensor.numel = t.numel();
  }
  return v;
}

pk::jit::Kernel compile(const std::string& spec, const std::string& pkc, const std::string& arch,
                        const std::string& kernel, bool templates, bool split_k) {
  auto text = pk::jit::read_spec(spec);
  throw_if_error(text.is_ok() ? pk::Status::ok() : text.status());
  pk::jit::Options o;
  o.arch = arch;
  o.kernel = kernel;
  o.templates = templates;
  o.split_k = split_k;
  auto k = pk::jit::compile_spec(spec, *text, o, pk::jit::pkc_frontend(pkc));
  throw_if_error(k.is_ok() ? pk::Status::ok() : k.status());
  return *k;
}

void launch(const pk::jit::Kernel& k, TorchContext& ctx, py::args args) {
  const auto& specs = k.info().args;
  if (args.size() != specs.size())
    throw std::runtime_error("pk_torch: kernel " + k.info().name + " takes " +
                             std::to_string(specs.size()) + " arguments, got " + std::to_string(args.size()));
  std::vector<pk::jit::ArgValue> values;
  for (std::size_t i = 0; i < args.size(); ++i) values.push_back(to_arg(ctx, specs[i], args[i], int(i)));
  cudaStream_t stream = at::cuda::getCurrentCUDAStream(ctx.get().device()).stream();
  // Ranks sharing a GPU wait for each other's kernels: on one stream they would queue behind
  // each other and time out.
  if (ctx.ranks_per_device() > 1 && (stream == nullptr || stream == cudaStreamLegacy ||
                                     stream == cudaStreamPerThread))
    throw std::runtime_error(
        "pk_torch: rank " + std::to_string(ctx.rank()) + " shares its GPU with other ranks and "
        "would launch " + k.info().name + " on the default stream; launch each rank under its own "
        "torch.cuda.stream(...) (pk_torch.run_shared_gpu does)");
  pk::Status s;
  {
    py::gil_scoped_release nogil;  // the launch waits for the other ranks' turn (order_launch)
    s = k.launch_values(ctx.get(), stream, values);
  }
  throw_if_error(s);
}

// The W exchanges of ranks sharing one GPU; each rank's thread takes its own once.
class SharedGpuRanks {
 public:
  SharedGpuRanks(int world, int device) {
    auto ex = pk::create_shared_gpu_exchanges(world, device);
    throw_if_error(ex.is_ok() ? pk::Status::ok() : ex.status());
    ex_ = std::move(*ex);
  }
  int world() const { return static_cast<int>(ex_.size()); }
  TorchContext* context(int rank) {
    if (rank < 0 || rank >= world() || !ex_[rank])
      throw std::runtime_error("pk_torch: shared-GPU rank " + std::to_string(rank) +
                               " does not exist or already has its context");
    return new TorchContext(std::move(ex_[rank]));
  }

 private:
  std::vector<std::unique_ptr<pk::Exchange>> ex_;
};

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "pk kernels for PyTorch (use the pk_torch package)";
  py::class_<TorchContext>(m, "Context")
      .def(py::init<int, int, int, py::function>(), py::arg("rank"), py::arg("world"),
           py::arg("device"), py::arg("gather_bytes"))
      .def_property_readonly("rank", &TorchContext::rank)
      .def_property_readonly("world", &TorchContext::world)
      .def_property_readonly("ranks_per_device", &TorchContext::ranks_per_device)
      .def("empty", &TorchContext::empty, py::arg("shape"), py::arg("dtype"))
      .def("barrier", &TorchContext::barrier)
      .def("check_errors", &TorchContext::check_errors)
      .def("close", &TorchContext::close);
  py::class_<pk::jit::Kernel>(m, "Kernel")
      .def_property_readonly("name", [](const pk::jit::Kernel& k) { return k.info().name; })
      .def_property_readonly("from_cache", &pk::jit::Kernel::from_cache)
      .def("__call__", &launch);
  py::class_<SharedGpuRanks>(m, "SharedGpuRanks")
      .def(py::init<int, int>(), py::arg("world"), py::arg("device") = 0)
      .def_property_readonly("world", &SharedGpuRanks::world)
      .def("context", &SharedGpuRanks::context, py::arg("rank"), py::return_value_policy::take_ownership);
  m.def("compile", &compile, py::arg("spec"), py::arg("pkc"), py::arg("arch") = "",
        py::arg("kernel") = "", py::arg("templates") = true, py::arg("split_k") = true);
}
