# Builds pk_torch._C against a CMake build of pkc's runtime and JIT libraries:
#   PK_BUILD_DIR=<cmake build dir> python3 setup.py build_ext --inplace
import os
import re

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = os.path.abspath(os.environ.get("PK_BUILD_DIR", os.path.join(root, "build")))


def cache_var(name):
    text = open(os.path.join(build, "CMakeCache.txt")).read()
    m = re.search(r"^%s:[A-Z]+=(.*)$" % name, text, re.M)
    return m.group(1) if m else ""


nccl = cache_var("NCCL_LIBRARY")
cuda_lib = cache_var("CUDAToolkit_LIBRARY_DIR") or "/usr/local/cuda/lib64"
static_libs = [os.path.join(build, p) for p in (
    "compiler/jit/libpk_jit.a", "runtime/libpk_runtime.a",
    "runtime/libpk_host_check.a", "runtime/libpk_embedded_headers.a", "runtime/libpk_profile.a")]

setup(
    name="pk_torch",
    packages=["pk_torch"],
    ext_modules=[CUDAExtension(
        "pk_torch._C", ["pk_torch/_C.cpp"],
        include_dirs=[os.path.join(root, "runtime/include"), os.path.join(root, "compiler/jit/include")],
        extra_link_args=static_libs + [nccl, "-L" + cuda_lib, "-lnvrtc", "-ldl",
                                       "-Wl,-rpath," + os.path.dirname(nccl)])],
    cmdclass={"build_ext": BuildExtension},
)
