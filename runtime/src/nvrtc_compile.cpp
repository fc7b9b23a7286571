// NVRTC compilation with pk's embedded device headers, through the on-disk cache.
#include <pk/runtime/nvrtc_compile.h>

#include <nvrtc.h>

#include <pk/runtime/compile_cache.h>
#include <pk/runtime/embedded_headers.h>

namespace pk {
namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

}  // namespace

// What shapes a binary besides its source and options: the embedded headers (a fixed header with
// the same pkc version must not reuse a binary built from the old one) and NVRTC's version.
const std::string& toolchain_digest() {
  static const std::string digest = [] {
    std::string all;
    for (const auto& h : embedded_headers()) {
      const std::string name = h.name, text = h.text;
      all += std::to_string(name.size()) + " " + name + " " + std::to_string(text.size()) + " " + text;
    }
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    return "nvrtc " + std::to_string(major) + "." + std::to_string(minor) + " headers " + cache_key_hash(all);
  }();
  return digest;
}

std::vector<std::string> nvrtc_options(const CompileRequest& req) {
  std::vector<std::string> o = {"--gpu-architecture=" + req.arch, "-std=c++17",
                                "-DPK_NVRTC=1"};
  o.insert(o.end(), req.options.begin(), req.options.end());
  return o;
}

Result<CompileOutput> compile(const CompileRequest& req) {
  const std::vector<std::string> opts = nvrtc_options(req);
  const std::string key = cache_key_text(req.source, opts, req.arch, toolchain_digest());
  std::string dir;
  if (req.use_cache) {
    auto d = cache_dir();
    if (d.is_ok()) dir = *d;  // no cache directory: compile every time
    if (!dir.empty())
      if (auto hit = cache_read(dir, key)) return CompileOutput{std::move(*hit), "", true};
  }

  const auto& headers = embedded_headers();
  std::vector<const char*> names, texts;
  for (const auto& h : headers) {
    names.push_back(h.name);
    texts.push_back(h.text);
  }
  nvrtcProgram prog;
  nvrtcResult r = nvrtcCreateProgram(&prog, req.source.c_str(), req.program_name.c_str(),
                                     static_cast<int>(headers.size()), texts.data(), names.data());
  if (r != NVRTC_SUCCESS)
    return Status::error(std::string("nvrtcCreateProgram: ") + nvrtcGetErrorString(r));
  std::vector<const char*> copts;
  for (const auto& o : opts) copts.push_back(o.c_str());
  r = nvrtcCompileProgram(prog, static_cast<int>(copts.size()), copts.data());
  CompileOutput out;
  std::size_t log_size = 0;
  if (nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    out.log.resize(log_size);
    nvrtcGetProgramLog(prog, &out.log[0]);
    out.log.resize(log_size - 1);
  }
  if (r != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&prog);
    return Status::error("NVRTC failed to compile " + req.program_name + " (" +
                         nvrtcGetErrorString(r) + ") with options: " + join(opts) + "\n" +
                         out.log);
  }
  // sm_* targets produce a cubin; compute_* targets only PTX.
  const bool cubin = req.arch.rfind("sm_", 0) == 0;
  std::size_t size = 0;
  r = cubin ? nvrtcGetCUBINSize(prog, &size) : nvrtcGetPTXSize(prog, &size);
  if (r == NVRTC_SUCCESS) {
    out.image.resize(size);
    r = cubin ? nvrtcGetCUBIN(prog, out.image.data()) : nvrtcGetPTX(prog, out.image.data());
  }
  nvrtcDestroyProgram(&prog);
  if (r != NVRTC_SUCCESS)
    return Status::error(std::string("NVRTC: cannot read the compiled image: ") +
                         nvrtcGetErrorString(r));
  if (!dir.empty()) (void)cache_write(dir, key, out.image);  // a failed write only costs time
  return out;
}

}  // namespace pk
