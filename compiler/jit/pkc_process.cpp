// The front end for processes without LLVM: runs a pkc executable on the spec.
#include <pk/jit/compile.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

extern char** environ;

namespace pk::jit {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A private directory for one run's files (spec copy, CUDA, stderr).
Result<std::string> make_temp_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/pk-jit-XXXXXX";
  if (!mkdtemp(pattern.data())) return Status::error("cannot create a temporary directory");
  return pattern;
}

}  // namespace

Frontend pkc_frontend(const std::string& pkc_path) {
  auto run = [pkc_path](const std::string& name, const std::string& text,
                        const Options& options) -> Result<std::string> {
    PK_ASSIGN_OR_RETURN(std::string dir, make_temp_dir());
    // pkc reads a file: the spec goes under its own base name so diagnostics name it.
    std::string base = name.substr(name.find_last_of('/') + 1);
    if (base.empty() || base[0] == '<') base = "spec.mlir";
    const std::string spec = dir + "/" + base, cuda = dir + "/out.cu", err = dir + "/stderr";
    { std::ofstream(spec, std::ios::binary) << text; }
    std::vector<std::string> argv_s = {pkc_path, spec, "--emit=cuda", "-o", cuda};
    // The copy lives in a temporary directory: its quoted includes are found beside the original.
    if (const std::size_t slash = name.find_last_of('/'); slash != std::string::npos && name[0] != '<')
      argv_s.push_back("-I" + name.substr(0, slash == 0 ? 1 : slash));
    if (!options.kernel.empty()) argv_s.push_back("--kernel=" + options.kernel);  // compile one
    if (!options.profile_path.empty()) argv_s.push_back("--profile=" + options.profile_path);
    if (options.allow_multicast) argv_s.push_back("--allow-multicast");
    if (options.tile_batch) argv_s.push_back("--tile-batch=" + std::to_string(options.tile_batch));
    if (options.tile_threads) argv_s.push_back("--tile-threads=" + std::to_string(options.tile_threads));
    if (options.tile_stages != 2) argv_s.push_back("--tile-stages=" + std::to_string(options.tile_stages));
    if (!options.templates) argv_s.push_back("--templates=false");
    if (!options.split_k) argv_s.push_back("--split-k=false");
    std::vector<char*> argv;
    for (std::string& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, pkc_path.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    int status = 0;
    if (rc == 0) waitpid(pid, &status, 0);
    const std::string out = slurp(cuda), log = slurp(err);
    for (const std::string& f : {spec, cuda, err}) std::remove(f.c_str());
    rmdir(dir.c_str());
    if (rc != 0) return Status::error("cannot run pkc '" + pkc_path + "': " + std::strerror(rc));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || out.empty()) {
      // Diagnostics name the temporary copy; show the caller's name instead.
      std::string shown = log;
      for (std::size_t at; (at = shown.find(spec)) != std::string::npos;)
        shown.replace(at, spec.size(), name);
      return Status::error(shown.empty() ? "pkc failed on " + name : shown);
    }
    return out;
  };
  return Frontend(run, file_identity(pkc_path));
}

}  // namespace pk::jit
