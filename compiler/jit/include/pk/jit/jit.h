// JIT from C++: compile a spec in this process (the same pipeline as pkc) into a Kernel.
#pragma once
#include <string>

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

}  // namespace pk::jit
