// Spec -> kernel through the on-disk cache: key, cache entry format, NVRTC, front ends' output.
#include <pk/jit/compile.h>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <pk/runtime/capabilities.h>
#include <pk/runtime/compile_cache.h>
#include <pk/runtime/cuda_check.h>
#include <pk/runtime/nvrtc_compile.h>

namespace pk::jit {
namespace {

constexpr char kImageMarker[] = "\n--pk-jit-image--\n";

Result<std::string> read_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::error(std::string("cannot read ") + what + " '" + path + "'");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Result<std::string> current_arch() {
  int dev = 0, major = 0, minor = 0;
  PK_CUDA_TRY(cudaGetDevice(&dev));
  PK_CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  PK_CUDA_TRY(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  return arch_for(major, minor);
}

// A cache entry: the kernel's pk-launch line and pk-host-check lines, then the binary.
std::vector<char> pack(const std::string& launch_lines, const std::vector<char>& image) {
  std::vector<char> out(launch_lines.begin(), launch_lines.end());
  out.insert(out.end(), kImageMarker, kImageMarker + sizeof(kImageMarker) - 1);
  out.insert(out.end(), image.begin(), image.end());
  return out;
}

// Whether `k` is a general-path twin pkc added beside a template kernel of `infos`.
bool is_twin(const std::vector<KernelInfo>& infos, const KernelInfo& k) {
  return std::any_of(infos.begin(), infos.end(), [&](const KernelInfo& t) { return t.tmpl.fallback == k.name; });
}

Result<Kernel> unpack(const std::vector<char>& entry, bool from_cache) {
  const std::string marker = kImageMarker;
  auto at = std::search(entry.begin(), entry.end(), marker.begin(), marker.end());
  if (at == entry.end()) return Status::error("corrupt pk-jit cache entry");
  PK_ASSIGN_OR_RETURN(std::vector<KernelInfo> infos,
                      parse_launch_lines(std::string(entry.begin(), at)));
  // A kernel of several launches: its pk-sequence line comes first, then its parts'.
  std::vector<KernelInfo> parts, fallbacks;
  for (const std::string& name : infos.front().parts)
    for (const KernelInfo& k : infos)
      if (k.name == name) parts.push_back(k);
  for (const KernelInfo& k : infos)
    if (is_twin(infos, k)) fallbacks.push_back(k);
  return Kernel(infos.front(), std::vector<char>(at + marker.size(), entry.end()), from_cache,
                std::move(parts), std::move(fallbacks));
}

// The lines of `kernel` that parse_launch_lines reads: its pk-sequence or pk-launch line and
// pk-host-check lines,
// and a template kernel's launch description (pk-template, pk-param).
std::string launch_lines_of(const std::string& cuda, const std::string& kernel) {
  std::string out;
  for (const std::string& marker :
       {"// pk-sequence " + kernel + " ", "// pk-launch " + kernel + " ", "// pk-host-check " + kernel + " ",
        "// pk-template " + kernel + " ", "// pk-param " + kernel + " "})
    for (std::size_t at = cuda.find(marker); at != std::string::npos; at = cuda.find(marker, at + 1))
      if (at == 0 || cuda[at - 1] == '\n') out += cuda.substr(at, cuda.find('\n', at) - at) + "\n";
  return out;
}

}  // namespace

Result<std::string> read_spec(const std::string& path) { return read_file(path, "spec"); }

std::string file_identity(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return "";
  return path + " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

std::string cache_key(const std::string& text, const Options& options, const std::string& arch) {
  // Format 3: entries carry the pk-host-check lines and template launch descriptions too.
  std::string key = "pk-jit-kernel 3\npkc " + std::string(pkc_version()) + "\narch " + arch +
                    "\nkernel " + options.kernel + "\nmulticast " +
                    (options.allow_multicast ? "1" : "0") +
                    "\ntile-batch " + std::to_string(options.tile_batch) +
                    "\ntile-threads " + std::to_string(options.tile_threads) +
                    "\ntile-stages " + std::to_string(options.tile_stages) +
                    "\ntemplates " + (options.templates ? "1" : "0") +
                    "\nsplit-k " + (options.split_k ? "1" : "0") + "\ntoolchain " + toolchain_digest() +
                    "\nnvrtc";
  for (const std::string& o : options.nvrtc_options) key += " " + o;
  // The profile's content, not its path: a re-measured profile changes the decisions.
  auto profile = options.profile_path.empty() ? Result<std::string>(std::string())
                                              : read_file(options.profile_path, "profile");
  key += "\nprofile " + options.profile_path + "\n" + (profile.is_ok() ? *profile : "?") +
         "\nspec\n" + text;
  return key;
}

bool includes_user_files(const std::string& text) {
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::size_t i = text.find_first_not_of(" \t", at);
    if (i < end && text[i] == '#') {
      i = text.find_first_not_of(" \t", i + 1);
      if (i < end && text.compare(i, 7, "include") == 0) {
        i = text.find_first_not_of(" \t", i + 7);
        // <pk/...> and "pk/..." are pkc's own headers (in the toolchain digest); anything else,
        // or a macro as the name, is the user's.
        if (!(i < end && (text[i] == '<' || text[i] == '"') && text.compare(i + 1, 3, "pk/") == 0)) return true;
      }
    }
    at = end + 1;
  }
  return false;
}

Result<Kernel> compile_spec(const std::string& name, const std::string& text,
                            const Options& options, const Frontend& frontend) {
  std::string arch = options.arch;
  if (arch.empty()) {
    PK_ASSIGN_OR_RETURN(arch, current_arch());
  }
  // A spec that includes files of its own is never cached: the key holds the spec's text, not
  // what its headers say (a changed header would return the old kernel).
  const bool use_cache = options.use_cache && !includes_user_files(text);
  std::string dir;
  if (use_cache) {
    if (!options.cache_dir.empty()) {
      dir = options.cache_dir;
      // Made (with its parents) before any work, so a bad path fails at once, not after NVRTC.
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      if (ec) return Status::error("cannot create the cache directory '" + dir + "': " + ec.message());
    } else {
      PK_ASSIGN_OR_RETURN(dir, cache_dir());
    }
  }
  // The fast path: a hit needs no MLIR, no front end and no NVRTC.
  const std::string key = cache_key(text, options, arch) + "\nfrontend " + frontend.identity;
  if (use_cache)
    if (auto entry = cache_read(dir, key)) {
      auto k = unpack(*entry, true);
      if (k.is_ok()) return k;  // a corrupt entry is recompiled and overwritten
    }

  PK_ASSIGN_OR_RETURN(std::string cuda, frontend.run(name, text, options));
  PK_ASSIGN_OR_RETURN(std::vector<KernelInfo> infos, parse_launch_lines(cuda));
  // The spec's own kernels: not the general-path twins pkc adds beside GEMM templates.
  auto twin = [&](const KernelInfo& k) { return is_twin(infos, k); };
  const auto own = std::count_if(infos.begin(), infos.end(), [&](const KernelInfo& k) { return !twin(k); });
  const KernelInfo* chosen = nullptr;
  for (const KernelInfo& k : infos)
    if (k.name == options.kernel || (options.kernel.empty() && own == 1 && !twin(k))) chosen = &k;
  if (!chosen) {
    std::string names;
    for (const KernelInfo& k : infos)
      if (!twin(k)) names += " " + k.name;
    return Status::error(name + ": " +
                         (options.kernel.empty() ? "several kernels; choose one in Options::kernel:"
                                                 : "no kernel '" + options.kernel + "'; it has:") +
                         names);
  }

  CompileRequest req;
  req.source = cuda;
  req.program_name = name + ".cu";
  req.arch = arch;
  req.options = options.nvrtc_options;
  req.use_cache = false;  // the entry below, keyed by the spec, is the only one
  PK_ASSIGN_OR_RETURN(CompileOutput out, compile(req));
  std::string lines = launch_lines_of(cuda, chosen->name);
  for (const std::string& part : chosen->parts) lines += launch_lines_of(cuda, part);
  // The general-path twins the template launches fall back to, after everything else.
  for (const KernelInfo& k : infos)
    if (k.name == chosen->name || std::count(chosen->parts.begin(), chosen->parts.end(), k.name))
      if (!k.tmpl.fallback.empty()) lines += launch_lines_of(cuda, k.tmpl.fallback);
  const std::vector<char> entry = pack(lines, out.image);
  if (use_cache) PK_RETURN_IF_ERROR(cache_write(dir, key, entry));
  return unpack(entry, false);
}

}  // namespace pk::jit
