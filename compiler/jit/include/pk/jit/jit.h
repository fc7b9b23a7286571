// JIT from C++: compile a spec in this process (the same pipeline as pkc) into a Kernel.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <pk/jit/compile.h>

namespace pk::jit {

// Compiles the spec file at `path` (cached on disk; see compile_spec).
Result<Kernel> compile_file(const std::string& path, const Options& options = {});

// Compiles spec text; `name` is the file name diagnostics show.
Result<Kernel> compile_string(const std::string& spec, const Options& options = {},
                              const std::string& name = "<string>");

// The in-process front end: parse, run the device pipeline, emit CUDA.
Result<std::string> emit_cuda_in_process(const std::string& name, const std::string& text,
                                         const Options& options);

// Kernel argument index -> extents, the sizes a roofline is computed for.
using Shapes = std::map<int, std::vector<long long>>;

// The roofline of the spec's kernels (of options.kernel alone when set) at these argument sizes
// and world size, as `pkc --roofline` prints it: text, or JSON (docs/roofline.md).
Result<std::string> roofline_in_process(const std::string& name, const std::string& text,
                                        const Options& options, const Shapes& shapes, int world = 1,
                                        bool json = false);

}  // namespace pk::jit
