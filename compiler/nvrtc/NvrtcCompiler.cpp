// In-process NVRTC through dlopen, with the embedded device headers.
#include "pk/Nvrtc/NvrtcCompiler.h"
#include <pk/runtime/embedded_headers.h>

#include <dlfcn.h>
#include <cstdlib>

namespace pk {
namespace {

// The few NVRTC entry points pkc needs, resolved by name (nvrtc.h is not required).
using Program = void *;
struct NvrtcApi {
  int (*create)(Program *, const char *, const char *, int, const char *const *,
                const char *const *) = nullptr;
  int (*compile)(Program, int, const char *const *) = nullptr;
  int (*logSize)(Program, size_t *) = nullptr;
  int (*log)(Program, char *) = nullptr;
  int (*ptxSize)(Program, size_t *) = nullptr;
  int (*ptx)(Program, char *) = nullptr;
  int (*cubinSize)(Program, size_t *) = nullptr;
  int (*cubin)(Program, char *) = nullptr;
  int (*destroy)(Program *) = nullptr;
  const char *(*errorString)(int) = nullptr;
  std::string loadError;
};

const NvrtcApi &api() {
  static NvrtcApi a = [] {
    NvrtcApi a;
    std::vector<std::string> candidates = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
    for (const char *dir : {"/usr/local/cuda/lib", "/usr/local/cuda/lib64"})
      candidates.push_back(std::string(dir) + "/libnvrtc.so");
    if (const char *home = std::getenv("CUDA_HOME"))
      candidates.insert(candidates.begin(), std::string(home) + "/lib64/libnvrtc.so");
    void *lib = nullptr;
    for (const std::string &c : candidates)
      if ((lib = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib) {
      a.loadError = "cannot load libnvrtc (tried libnvrtc.so.13, /usr/local/cuda/lib and "
                    "$CUDA_HOME/lib64); install CUDA or use --emit=cuda";
      return a;
    }
    auto sym = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      if (!fn && a.loadError.empty()) a.loadError = std::string("libnvrtc lacks ") + name;
    };
    sym(a.create, "nvrtcCreateProgram");
    sym(a.compile, "nvrtcCompileProgram");
    sym(a.logSize, "nvrtcGetProgramLogSize");
    sym(a.log, "nvrtcGetProgramLog");
    sym(a.ptxSize, "nvrtcGetPTXSize");
    sym(a.ptx, "nvrtcGetPTX");
    sym(a.cubinSize, "nvrtcGetCUBINSize");
    sym(a.cubin, "nvrtcGetCUBIN");
    sym(a.destroy, "nvrtcDestroyProgram");
    sym(a.errorString, "nvrtcGetErrorString");
    return a;
  }();
  return a;
}

} // namespace

NvrtcResult compileWithNvrtc(const std::string &source, const std::string &sourceName,
                             const std::string &arch, NvrtcTarget target, bool fastCompile) {
  NvrtcResult r;
  const NvrtcApi &a = api();
  if (!a.loadError.empty()) {
    r.log = a.loadError;
    return r;
  }
  std::string virtualArch = arch;
  if (virtualArch.rfind("sm_", 0) == 0) virtualArch.replace(0, 3, "compute_");
  r.options = {"--gpu-architecture=" + (target == NvrtcTarget::Ptx ? virtualArch : arch),
               "-std=c++17", "--device-as-default-execution-space"};
  // ptxas's notes name performance losses it introduces (wgmmas serialised, C7520): the
  // driver passes them on as warnings.
  if (target == NvrtcTarget::Cubin) r.options.push_back("--ptxas-options=-v");
  if (fastCompile) r.options.push_back("--Ofast-compile=max");
  std::vector<const char *> names, texts, opts;
  for (const EmbeddedHeader &h : embedded_headers()) {
    names.push_back(h.name);
    texts.push_back(h.text);
  }
  for (const std::string &o : r.options) opts.push_back(o.c_str());
  Program prog = nullptr;
  int rc = a.create(&prog, source.c_str(), sourceName.c_str(), int(names.size()), texts.data(),
                    names.data());
  if (rc != 0) {
    r.log = std::string("nvrtcCreateProgram: ") + a.errorString(rc);
    return r;
  }
  rc = a.compile(prog, int(opts.size()), opts.data());
  size_t size = 0;
  a.logSize(prog, &size);
  r.log.resize(size);
  a.log(prog, r.log.data());
  while (!r.log.empty() && (r.log.back() == '\0' || r.log.back() == '\n')) r.log.pop_back();
  if (rc == 0) {
    bool ptx = target == NvrtcTarget::Ptx;
    (ptx ? a.ptxSize : a.cubinSize)(prog, &size);
    r.output.resize(size);
    (ptx ? a.ptx : a.cubin)(prog, r.output.data());
    if (ptx && !r.output.empty() && r.output.back() == '\0') r.output.pop_back();
    r.ok = true;
  }
  a.destroy(&prog);
  return r;
}

} // namespace pk
