// Per-device loading, host-side argument checks and launch of a JIT-compiled kernel.
#include <pk/jit/kernel.h>
#include <cstdint>

#include <functional>
#include <limits>
#include <map>
#include <mutex>

#include <pk/runtime/checks.h>
#include <pk/runtime/compile_cache.h>
#include <pk/runtime/cuda_check.h>
#include <pk/runtime/flag_key.h>
#include <pk/runtime/kernel_args.h>
#include <pk/runtime/module.h>
#include <pk/runtime/shared_gpu.h>
#include <pk/runtime/template_launch.h>

namespace pk::jit {

namespace {

// The key of a launch's flag region: the kernel's name, with every tensor's extents (as many as
// the spec gives it) and every scalar where the kernel's waits count by its sizes
// (pk/runtime/flag_key.h).
std::string flag_region_key(const KernelInfo& info, const std::string& name, const std::vector<ArgValue>& args) {
  if (!info.flags_by_size) return name;
  std::string key = name + "[sizes";
  for (std::size_t i = 0; i < args.size() && i < info.args.size(); ++i) {
    const ArgValue& a = args[i];
    const std::size_t rank = std::min<std::size_t>(info.args[i].shape.size(), 4);
    const long long* shape = a.kind == ArgKind::sym_tensor ? a.sym.shape : a.tensor.shape;
    if (a.kind == ArgKind::scalar) {
      const std::string& e = info.args[i].element;
      if (e == "f32" || e == "f64") flag_key_detail::add(key, a.real);
      else flag_key_detail::add(key, a.integer);
      continue;
    }
    for (std::size_t d = 0; d < rank; ++d) flag_key_detail::add(key, shape[d]);
  }
  return key + "]";
}

}  // namespace

struct Kernel::State {
  KernelInfo info;
  std::vector<KernelInfo> parts;
  std::vector<KernelInfo> fallbacks;  // general-path twins of template launches
  std::vector<char> image;
  // Beside the function's name in its flag region's key: two kernels of one name but other code
  // (a spec compiled with templates on and off, two specs naming a kernel alike) keep their own
  // epochs in one context, where one region's epoch would run ahead of the other's signals.
  std::string code_tag;  // made at the first launch: a warm compile stays a file read
  std::mutex mutex;
  // Modules belong to one device's context: one per device, loaded by the first rank there.
  std::map<int, std::unique_ptr<Module>> modules;
  // Per device, the functions launched in order (the kernel's, or each part's), then the
  // fallbacks'.
  std::map<int, std::vector<pk::Kernel>> functions;
};

Kernel::Kernel(KernelInfo info, std::vector<char> image, bool from_cache, std::vector<KernelInfo> parts,
               std::vector<KernelInfo> fallbacks)
    : state_(std::make_shared<State>()), from_cache_(from_cache) {
  state_->info = std::move(info);
  state_->parts = std::move(parts);
  state_->fallbacks = std::move(fallbacks);
  state_->image = std::move(image);
}

const KernelInfo& Kernel::info() const { return state_->info; }
const std::vector<KernelInfo>& Kernel::parts() const { return state_->parts; }
const std::vector<char>& Kernel::image() const { return state_->image; }

Status Kernel::load(Context& ctx) const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  const int dev = ctx.device();
  if (state_->functions.count(dev)) return Status::ok();
  PK_CUDA_TRY(cudaSetDevice(dev));
  PK_ASSIGN_OR_RETURN(std::unique_ptr<Module> m, Module::load(state_->image));
  std::vector<pk::Kernel> fs;
  if (state_->parts.empty()) {
    PK_ASSIGN_OR_RETURN(pk::Kernel f, m->kernel(state_->info.name));
    fs.push_back(f);
  }
  for (const KernelInfo& part : state_->parts) {
    PK_ASSIGN_OR_RETURN(pk::Kernel f, m->kernel(part.name));
    fs.push_back(f);
  }
  for (const KernelInfo& twin : state_->fallbacks) {
    PK_ASSIGN_OR_RETURN(pk::Kernel f, m->kernel(twin.name));
    fs.push_back(f);
  }
  state_->modules[dev] = std::move(m);
  state_->functions[dev] = std::move(fs);
  return Status::ok();
}

namespace {

// What the kernel's host checks read: the world size and the arguments' extents and integer
// scalars. Keeps references to `args`.
HostValues host_values(const KernelInfo& info, const std::vector<ArgValue>& args, int world) {
  const std::string who = "kernel " + info.name;
  HostValues values;
  values.world = world;
  values.extent = [&args, who](int a, int k) -> Result<long long> {
    if (a < 0 || a >= int(args.size()) || args[a].kind == ArgKind::scalar || k < 0 || k > 3)
      return Status::error(who + ": a host expression reads the extent of argument #" +
                           std::to_string(a) + ", not a tensor");
    return args[a].kind == ArgKind::sym_tensor ? args[a].sym.shape[k] : args[a].tensor.shape[k];
  };
  values.scalar = [&args, who](int a) -> Result<long long> {
    if (a < 0 || a >= int(args.size()) || args[a].kind != ArgKind::scalar)
      return Status::error(who + ": a host expression reads argument #" + std::to_string(a) +
                           " as a scalar");
    return args[a].integer;
  };
  return values;
}

}  // namespace

namespace {

int element_bytes(const std::string& e) {
  if (e == "f8E4M3FN" || e == "f8E5M2" || e == "i8") return 1;
  return e == "bf16" || e == "f16" ? 2 : e == "f64" || e == "i64" || e == "index" ? 8 : 4;
}

}  // namespace

Status check_launch_args(const KernelInfo& info, const std::vector<ArgValue>& args, int world) {
  const std::string who = "kernel " + info.name;
  PK_RETURN_IF_ERROR(check_world(world).with_context(who));
  if (args.size() != info.args.size())
    return Status::error(who + " takes " + std::to_string(info.args.size()) + " arguments, got " +
                         std::to_string(args.size()));
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgSpec& want = info.args[i];
    const ArgValue& got = args[i];
    const std::string arg = who + ", argument #" + std::to_string(i) + " (" + want.text + ")";
    if (got.kind != want.kind)
      return Status::error(arg + ": wrong kind (symmetric tensor, local tensor or scalar)");
    const bool int_scalar = want.element == "index" || want.element == "i64" || want.element == "i32";
    const bool compatible = got.element == want.element ||
                            (want.kind == ArgKind::scalar && int_scalar && got.element == "index") ||
                            (want.kind == ArgKind::scalar && want.element == "f64" && got.element == "f32");
    if (!compatible) return Status::error(arg + ": element type " + got.element + ", want " + want.element);
    if (want.kind == ArgKind::scalar && want.element == "i32" &&
        (got.integer < std::numeric_limits<int>::min() || got.integer > std::numeric_limits<int>::max()))
      return Status::error(arg + ": " + std::to_string(got.integer) + " does not fit the spec's int");
    if (want.kind == ArgKind::scalar) continue;
    const long long* shape = want.kind == ArgKind::sym_tensor ? got.sym.shape : got.tensor.shape;
    const long long numel = want.kind == ArgKind::sym_tensor ? got.sym.numel : got.tensor.numel;
    long long product = 1;
    for (std::size_t k = 0; k < 4; ++k) {
      const std::string dim = "shape[" + std::to_string(k) + "] = " + std::to_string(shape[k]);
      if (k < want.shape.size()) {
        if (want.shape[k] >= 0 && shape[k] != want.shape[k])
          return Status::error(arg + ": " + dim + ", the spec says " + std::to_string(want.shape[k]));
        if (shape[k] < 0) return Status::error(arg + ": " + dim + " must not be negative");
        product *= shape[k];
      } else if (shape[k] != 1) {
        return Status::error(arg + ": " + dim + " but the spec's rank is " +
                             std::to_string(want.shape.size()));
      }
    }
    if (numel != product) return Status::error(arg + ": numel does not match the shape");
    if (want.kind == ArgKind::sym_tensor)
      for (int r = 0; r < world; ++r)
        if (!got.sym.peer[r])
          return Status::error(arg + ": not mapped on rank " + std::to_string(r) +
                               " (allocate it on ctx's exchange)");
    if (want.kind == ArgKind::tensor && !got.tensor.data && numel > 0)
      return Status::error(arg + ": null data");
    // A base the element type does not align faults in the kernel (a sticky error): refused here.
    const std::size_t align = element_bytes(want.element);
    const void* base = want.kind == ArgKind::tensor ? static_cast<const void*>(got.tensor.data)
                       : world > 0 && got.sym.peer[0] ? static_cast<const void*>(got.sym.peer[0])
                                                      : nullptr;
    if (base && reinterpret_cast<std::uintptr_t>(base) % align != 0)
      return Status::error(arg + ": data at " + std::to_string(reinterpret_cast<std::uintptr_t>(base)) +
                           " is not aligned to its " + std::to_string(align) + "-byte elements");
  }
  // The kernel's own checks, on the host: the same rules, before anything is launched.
  const HostValues values = host_values(info, args, world);
  for (const HostCheck& c : info.checks) PK_RETURN_IF_ERROR(run_host_check(c, values).with_context(who));
  return Status::ok();
}


bool all_tensors_empty(const std::vector<ArgValue>& args) {
  bool any = false;
  for (const ArgValue& a : args) {
    if (a.kind == ArgKind::scalar) continue;
    any = true;
    if ((a.kind == ArgKind::sym_tensor ? a.sym.numel : a.tensor.numel) != 0) return false;
  }
  return any;
}

namespace {

// A template kernel's arguments as the runtime's template launch takes them.
std::vector<TemplateArg> template_args(const KernelInfo& info, const std::vector<ArgValue>& args,
                                       int rank) {
  std::vector<TemplateArg> out(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgValue& a = args[i];
    TemplateArg& t = out[i];
    if (a.kind == ArgKind::scalar) {
      t.scalar = a.integer;
      t.real = info.args[i].element == "f32" || info.args[i].element == "f64";
      t.real_value = a.real;
      continue;
    }
    const bool sym = a.kind == ArgKind::sym_tensor;
    t.tensor = true;
    t.local = sym ? a.sym.peer[rank] : a.tensor.data;
    if (sym) t.peers = reinterpret_cast<const void* const*>(a.sym.peer);
    for (int k = 0; k < 4; ++k) t.shape[k] = sym ? a.sym.shape[k] : a.tensor.shape[k];
    t.numel = sym ? a.sym.numel : a.tensor.numel;
    t.element_bytes = element_bytes(info.args[i].element);
  }
  return out;
}

}  // namespace

namespace {

// `info` without the template-only rules a general-path twin answers.
KernelInfo without_twin_rules(KernelInfo info) {
  info.checks.erase(std::remove_if(info.checks.begin(), info.checks.end(), [](const HostCheck& c) { return c.twin_rule; }),
                    info.checks.end());
  return info;
}

Status check_flag_slots(const Context& ctx, const KernelInfo& info) {
  if (ctx.flag_slots() < info.blocks * info.flag_slots)
    return Status::error("kernel " + info.name + " needs " +
                         std::to_string(info.blocks * info.flag_slots) +
                         " flag slots; the context has " + std::to_string(ctx.flag_slots()));
  return Status::ok();
}

}  // namespace

Status Kernel::launch_values(Context& ctx, cudaStream_t stream,
                             const std::vector<ArgValue>& args) const {
  const KernelInfo& info = state_->info;
  const std::vector<KernelInfo>& parts = state_->parts;
  if (parts.empty()) return launch_one(ctx, stream, args, info, 0);
  auto in_loop = [&](std::size_t i) {
    return std::any_of(info.loops.begin(), info.loops.end(), [&](const KernelInfo::PartLoop& l) {
      return int(i) >= l.first && int(i) < l.first + l.count;
    });
  };
  // Every part's checks before any launch, so the call runs all of its launches or none; the
  // parts of a host loop, whose checks may read the trip's variable, are checked each trip.
  // A template part's own rules (TMA rows and bases) are left to launch_one, which runs its
  // general-path twin when they fail.
  PK_RETURN_IF_ERROR(check_launch_args(info, args, ctx.world()));
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (!in_loop(i)) {
      const KernelInfo checked = parts[i].tmpl.fallback.empty() ? parts[i] : without_twin_rules(parts[i]);
      PK_RETURN_IF_ERROR(check_launch_args(checked, args, ctx.world()).with_context("kernel " + info.name));
    }
    PK_RETURN_IF_ERROR(check_flag_slots(ctx, parts[i]));
  }
  const HostValues values = host_values(info, args, ctx.world());
  // Parts [begin, end) with `trips` appended to the arguments; `entered` counts the loops (in
  // line order, outermost first) already being run around them.
  std::function<Status(int, int, const std::vector<ArgValue>&, std::size_t)> run =
      [&](int begin, int end, const std::vector<ArgValue>& with, std::size_t entered) -> Status {
    for (int i = begin; i < end;) {
      // The next loop starting here that is not one of those around us.
      const KernelInfo::PartLoop* l = nullptr;
      for (std::size_t j = 0; j < info.loops.size() && !l; ++j)
        if (info.loops[j].first == i && j >= entered && info.loops[j].first + info.loops[j].count <= end)
          l = &info.loops[j];
      if (!l) {
        PK_RETURN_IF_ERROR(launch_one(ctx, stream, with, parts[std::size_t(i)], std::size_t(i)));
        ++i;
        continue;
      }
      PK_ASSIGN_OR_RETURN(long long lb, evaluate_host_expr(l->lb, values));
      PK_ASSIGN_OR_RETURN(long long ub, evaluate_host_expr(l->ub, values));
      PK_ASSIGN_OR_RETURN(long long step, evaluate_host_expr(l->step, values));
      if (step <= 0) return Status::error("kernel " + info.name + ": a host loop's step must be positive");
      std::vector<ArgValue> with_trip = with;
      with_trip.push_back(arg_value(0LL));
      const std::size_t index = std::size_t(l - info.loops.data());
      for (long long trip = lb; trip < ub; trip += step) {
        with_trip.back().integer = trip;
        PK_RETURN_IF_ERROR(run(l->first, l->first + l->count, with_trip, index + 1));
      }
      i = l->first + l->count;
    }
    return Status::ok();
  };
  return run(0, int(parts.size()), args, 0);
}

Status Kernel::launch_one(Context& ctx, cudaStream_t stream, const std::vector<ArgValue>& args,
                          const KernelInfo& info, std::size_t function) const {
  if (!info.tmpl.fallback.empty()) {
    // The template's own rules (16-byte TMA rows and bases, extents TMA and an int take, a
    // reduce-scatter's tiles inside one owner) broken: its twin on the general tile path runs
    // instead, if it accepts the arguments; otherwise the template's error stands.
    Status fits = check_launch_args(info, args, ctx.world());
    if (fits.is_ok()) fits = check_template_fits(ctx, info.tmpl, template_args(info, args, ctx.rank()));
    if (!fits.is_ok()) {
      // Every check but the twin rules: those refusals stand.
      PK_RETURN_IF_ERROR(check_launch_args(without_twin_rules(info), args, ctx.world()));
      const std::vector<KernelInfo>& twins = state_->fallbacks;
      for (std::size_t j = 0; j < twins.size(); ++j)
        if (twins[j].name == info.tmpl.fallback && check_launch_args(twins[j], args, ctx.world()).is_ok())
          return launch_one(ctx, stream, args, twins[j],
                            (state_->parts.empty() ? 1 : state_->parts.size()) + j);
      return fits;
    }
  } else {
    PK_RETURN_IF_ERROR(check_launch_args(info, args, ctx.world()));
  }
  PK_RETURN_IF_ERROR(check_flag_slots(ctx, info));
  // Nothing to move or compute; every rank has the same sizes, so every rank skips alike.
  if (all_tensors_empty(args)) return Status::ok();
  if (info.copy_engine) {
    const CopyEngineRoute& route = *info.copy_engine;
    const ArgValue &x = args[route.x], &y = args[route.y];
    const int elem = element_bytes(info.args[route.x].element);
    const long long y_numel = y.kind == ArgKind::sym_tensor ? y.sym.numel : y.tensor.numel;
    const long long message = copy_engine_message_bytes(route.kind, x.sym.numel, y_numel,
                                                        ctx.world(), elem);
    if (takes_copy_engine(ctx, route, message)) {
      void* out = y.kind == ArgKind::sym_tensor ? y.sym.peer[ctx.rank()] : y.tensor.data;
      void* const* in = reinterpret_cast<void* const*>(x.sym.peer);
      return copy_engine_collective(ctx, info.name, route.kind, in, out, message,
                                    route.root >= 0 ? args[route.root].integer : -1, stream);
    }
  }
  PK_RETURN_IF_ERROR(load(ctx));
  pk::Kernel f;
  std::string code_tag;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    f = state_->functions.at(ctx.device()).at(function);
    if (state_->code_tag.empty())
      state_->code_tag = "#" + cache_key_hash(std::string(state_->image.begin(), state_->image.end())).substr(0, 16);
    code_tag = state_->code_tag;
  }
  if (!info.tmpl.kernel.empty())
    return launch_template(ctx, f, info.tmpl, template_args(info, args, ctx.rank()), stream, code_tag);
  // The kernel's own flag region and next epoch: only once the checks passed.
  const std::string region = flag_region_key(info, f.name() + code_tag, args);
  PK_ASSIGN_OR_RETURN(LaunchContext lc, ctx.make_launch_context(region));
  KernelArgs packed;
  packed.add(lc);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgValue& a = args[i];
    const std::string& e = info.args[i].element;
    if (a.kind == ArgKind::sym_tensor) packed.add(a.sym);
    else if (a.kind == ArgKind::tensor) packed.add(a.tensor);
    else if (e == "i32") packed.add(static_cast<int>(a.integer));
    else if (e == "f32") packed.add(static_cast<float>(a.real));
    else if (e == "f64") packed.add(a.real);
    else packed.add(a.integer);  // index and i64 are long long in emitted code
  }
  LaunchConfig cfg;
  cfg.grid = dim3(rank_grid(ctx, info.blocks, info.blocks_per_sm));  // 1/W of it when W ranks share the GPU
  cfg.block = dim3(info.threads);
  cfg.shared_bytes = info.shared_bytes;
  Status s = f.launch(cfg, stream, packed);
  if (!s.is_ok()) ctx.retract_launch(region);  // nothing ran: keep the epochs in step
  return s;
}

}  // namespace pk::jit
