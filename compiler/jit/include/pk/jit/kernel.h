// A JIT-compiled pk kernel: its launch facts, its binary, per-device loading and typed launch.
#pragma once
#include <cuda_runtime_api.h>

#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <pk/runtime/context.h>
#include <pk/runtime/copy_engine.h>
#include <pk/runtime/dtype.h>
#include <pk/runtime/host_check.h>
#include <pk/runtime/status.h>
#include <pk/runtime/template_params.h>

namespace pk::jit {

enum class ArgKind { sym_tensor, tensor, scalar };

// One kernel argument as the spec types it (from the emitted `// pk-launch` line).
struct ArgSpec {
  ArgKind kind = ArgKind::scalar;
  std::string element;            // bf16, f16, f32, f64, i32, i64, index
  std::vector<long long> shape;   // -1 for `?`; empty for scalars
  std::string text;               // !pk.sym<?xbf16>
};

struct KernelInfo {
  std::string name;
  int threads = 0, blocks = 0, flag_slots = 0, blocks_per_sm = 1;
  unsigned shared_bytes = 0;  // dynamic shared memory a block takes (`smem=`: prefetch rings)
  // Its waits count signals that follow the sizes (`flags_by_size=1`): each size signature
  // takes its own flag region and epoch (pk/runtime/flag_key.h).
  bool flags_by_size = false;
  std::vector<ArgSpec> args;
  std::optional<CopyEngineRoute> copy_engine;  // launches above its size skip the kernel
  std::vector<HostCheck> checks;  // the kernel's `// pk-host-check` lines
  // Kernels that instantiate a template (the GEMMs): how to fill their parameter block, the
  // grid and the shared memory (`// pk-template`, `// pk-param`); kernel empty otherwise.
  TemplateLaunch tmpl;
  // A kernel pkc runs as several launches (`// pk-sequence`): its parts' names, in order; each
  // part has its own KernelInfo with the same arguments. Empty for a kernel of one launch.
  std::vector<std::string> parts;
  // Host loops of launches (`loop=<first>:<count>:<lb>;<ub>;<step>`): parts first..first+count-1
  // run once per trip, given the trip's induction variable as a trailing index argument.
  struct PartLoop {
    int first = 0, count = 0;
    HostExpr lb, ub, step;
  };
  std::vector<PartLoop> loops;
};

// Every `// pk-launch` and `// pk-sequence` line of pkc's CUDA, in order, with the kernel's
// `// pk-host-check` lines.
Result<std::vector<KernelInfo>> parse_launch_lines(const std::string& cuda);

// A launch argument with its type erased (SymTensor<T> and Tensor<T> have one layout for all T).
struct ArgValue {
  ArgKind kind = ArgKind::scalar;
  std::string element;
  SymTensor<unsigned char> sym{};
  Tensor<unsigned char> tensor{};
  long long integer = 0;  // index, i32, i64 scalars
  double real = 0;        // f32, f64 scalars
};

// The element name pk uses for T ("bf16", "f32", ...); other types do not compile.
template <class T> struct unsupported_element : std::false_type {};
template <class T> const char* element_name() {
  static_assert(unsupported_element<T>::value,
                "pk tensors hold bf16, f16, f8e4m3, f8e5m2, float, double, int, long long or signed char "
                "(i8: signed char, not char or unsigned char; no bool)");
  return nullptr;
}
template <> inline const char* element_name<bf16>() { return "bf16"; }
template <> inline const char* element_name<f16>() { return "f16"; }
// fp8 as MLIR prints it (the launch line's argument types).
template <> inline const char* element_name<f8e4m3>() { return "f8E4M3FN"; }
template <> inline const char* element_name<f8e5m2>() { return "f8E5M2"; }
template <> inline const char* element_name<float>() { return "f32"; }
template <> inline const char* element_name<double>() { return "f64"; }
template <> inline const char* element_name<int>() { return "i32"; }
template <> inline const char* element_name<long long>() { return "i64"; }
template <> inline const char* element_name<signed char>() { return "i8"; }

template <class T>
ArgValue arg_value(const SymTensor<T>& t) {
  ArgValue v;
  v.kind = ArgKind::sym_tensor;
  v.element = element_name<T>();
  for (int r = 0; r < PK_MAX_RANKS; ++r) v.sym.peer[r] = reinterpret_cast<unsigned char*>(t.peer[r]);
  for (int k = 0; k < 4; ++k) v.sym.shape[k] = t.shape[k];
  v.sym.numel = t.numel;
  return v;
}
template <class T>
ArgValue arg_value(const Tensor<T>& t) {
  ArgValue v;
  v.kind = ArgKind::tensor;
  v.element = element_name<T>();
  v.tensor.data = reinterpret_cast<unsigned char*>(t.data);
  for (int k = 0; k < 4; ++k) v.tensor.shape[k] = t.shape[k];
  v.tensor.numel = t.numel;
  return v;
}
// Scalars: a value of any integer type for index, i32 and i64 parameters, of any floating type
// for f32 and f64 ones (128, 0.5 and a size_t as C++ would pass them); the launch checks the
// value against the parameter's type. bool is neither.
template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
ArgValue arg_value(I i) {
  ArgValue v;
  v.integer = static_cast<long long>(i);
  v.element = "index";
  if constexpr (std::is_unsigned_v<I> && sizeof(I) >= sizeof(long long))
    if (i > static_cast<unsigned long long>(std::numeric_limits<long long>::max()))
      v.element = "an unsigned integer past 2^63 - 1";
  return v;
}
template <class F, std::enable_if_t<std::is_floating_point_v<F>, int> = 0>
ArgValue arg_value(F f) {
  ArgValue v;
  v.real = static_cast<double>(f);
  v.element = "f32";
  return v;
}

// Host checks before a launch: argument count, kinds, element types, ranks and static extents,
// extents not negative (0 is an empty tensor), peers mapped for every rank of `world`, world
// within [1, PK_MAX_RANKS], then the kernel's own checks (info.checks: "expected 1024, got
// 1000"), so a call the kernel would refuse fails at the call.
Status check_launch_args(const KernelInfo& info, const std::vector<ArgValue>& args, int world);

// True when the kernel has tensor arguments and every one is empty: there is nothing to move
// or compute, and the launch is skipped (see Kernel::launch_values).
bool all_tensors_empty(const std::vector<ArgValue>& args);

class Kernel {
 public:
  // `parts`: a kernel of several launches (info.parts), their infos in order. `fallbacks`: the
  // general-path twins (tmpl.fallback) that template launches take when the sizes or addresses
  // break the template's rules.
  Kernel(KernelInfo info, std::vector<char> image, bool from_cache, std::vector<KernelInfo> parts = {},
         std::vector<KernelInfo> fallbacks = {});

  const KernelInfo& info() const;
  const std::vector<KernelInfo>& parts() const;
  const std::vector<char>& image() const;  // cubin (sm_*) or PTX
  bool from_cache() const { return from_cache_; }

  // Loads the binary on ctx's device; once per device, safe from every rank's thread.
  Status load(Context& ctx) const;

  // Checks the arguments, then launches for ctx's next epoch on `stream` (a kernel of several
  // launches: every part's checks first, then the parts in order; a template kernel whose
  // rules the arguments break: its general-path twin, when it has one). Collective: every
  // rank launches the same kernels in the same order. When every tensor argument is empty it
  // returns ok without launching: sizes are the same on every rank (symmetric tensors, and
  // the checks tie the others to them), so every rank skips alike and no epoch is spent.
  Status launch_values(Context& ctx, cudaStream_t stream, const std::vector<ArgValue>& args) const;

  template <class... A>
  Status launch(Context& ctx, cudaStream_t stream, const A&... args) const {
    return launch_values(ctx, stream, {arg_value(args)...});
  }

 private:
  Status launch_one(Context& ctx, cudaStream_t stream, const std::vector<ArgValue>& args,
                    const KernelInfo& info, std::size_t function) const;

  struct State;
  std::shared_ptr<State> state_;
  bool from_cache_ = false;
};

}  // namespace pk::jit
