# lit configuration for pkc's FileCheck tests.
import os
import lit.formats
from lit.llvm import llvm_config

config.name = "pkc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".cpp", ".test"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "CMakeLists.txt", "Inputs", "specs", "unit", "gpu", "consumer"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.pkc_obj_root, "test")
# A fresh build has no timings of its own: lit then reads test/.lit_test_times.txt (a committed snapshot) and
# starts the longest tests first, so two CI cores do not end on one long test.
config.substitutions.append(("%pkc_src", config.pkc_src_root))
config.substitutions.append(("%specs", os.path.join(config.pkc_src_root, "templates", "specs")))
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.pkc_tools_dir, append_path=True)
for var in ["NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS"]:
    config.environment[var] = "1" if var != "NCCL_NVLS_ENABLE" else "0"
# The compile tier only checks that kernels compile for sm_90a: pkc --emit=ptx/cubin builds them
# with most device optimisations off (--fast-compile), four to five times faster. A test of what
# the optimised build gives (ptxas's notes) passes --fast-compile=false.
config.environment["PKC_FAST_COMPILE"] = "1"
llvm_config.add_tool_substitutions(["pkc", "pkc-opt"], [config.pkc_tools_dir])
if config.pkc_static_llvm.upper() in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("static-llvm")
config.substitutions.append(("%pkc_bin", os.path.join(config.pkc_tools_dir, "pkc")))
# nvcc checks the offsets of template parameter blocks (the emitted offsetof asserts, which
# NVRTC cannot evaluate): %nvcc_frontend runs nvcc's front end on emitted CUDA (nvcc --cuda
# also builds the device code, with optimisations off here: only the front end's verdict counts).
nvcc = os.environ.get("CUDACXX") or "/usr/local/cuda/bin/nvcc"
if os.path.exists(nvcc):
    config.available_features.add("nvcc")
    includes = " ".join("-I" + os.path.join(config.pkc_src_root, d, "include") for d in ("templates", "runtime"))
    config.substitutions.append(("%nvcc_frontend", nvcc + " -gencode arch=compute_90a,code=sm_90a -std=c++17 --Ofast-compile=max " +
                                 includes + " --cuda -x cu"))
