# ctest driver: installs the pkc build tree into a clean prefix, configures and builds the
# consumer project against it, then checks that the build re-runs pkc when the spec changes
# and only then.   cmake -DPKC_BUILD=... -DCONSUMER_SOURCE=... -DWORK=... [-DNCCL_ROOT=...] -P
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK})
set(prefix ${WORK}/prefix)
run("cmake --install" ${CMAKE_COMMAND} --install ${PKC_BUILD} --prefix ${prefix})
foreach(f bin/pkc include/pk/runtime/context.h include/pk/device/all.cuh
          lib/cmake/pkc/pkcConfig.cmake lib/cmake/pkc/pkcConfigVersion.cmake
          lib/cmake/pkc/pkcKernels.cmake share/pkc/specs/all_reduce.mlir)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "the install lacks ${f}")
  endif()
endforeach()

set(args -S ${CONSUMER_SOURCE} -B ${WORK}/build -G Ninja -DCMAKE_BUILD_TYPE=Release
         -DCMAKE_PREFIX_PATH=${prefix})
if(NCCL_ROOT)
  list(APPEND args -DNCCL_ROOT=${NCCL_ROOT})
endif()
run("configuring the consumer" ${CMAKE_COMMAND} ${args})
run("building the consumer" ${CMAKE_COMMAND} --build ${WORK}/build)
foreach(f consumer consumer_kernels.pk/pk_kernels/all_reduce.h)
  if(NOT EXISTS ${WORK}/build/${f})
    message(FATAL_ERROR "the consumer build did not produce ${f}")
  endif()
endforeach()
file(READ ${WORK}/build/consumer_kernels.pk/pk_kernels/all_reduce.h header)
if(NOT header MATCHES "pk::Status all_reduce\\(pk::Context& ctx, pk::SymTensor<pk::bf16> x, pk::SymTensor<pk::bf16> y, cudaStream_t stream\\);")
  message(FATAL_ERROR "unexpected launcher declaration in all_reduce.h:\n${header}")
endif()

# Up to date: nothing re-runs. A changed spec: pkc runs again.
run("a no-op rebuild" ${CMAKE_COMMAND} --build ${WORK}/build)
if(last_output MATCHES "pkc: ")
  message(FATAL_ERROR "a no-op rebuild re-ran pkc:\n${last_output}")
endif()
file(APPEND ${prefix}/share/pkc/specs/all_reduce.mlir "// touched by the consumer test\n")
run("a rebuild after a spec change" ${CMAKE_COMMAND} --build ${WORK}/build)
if(NOT last_output MATCHES "pkc: kernels and launchers for all_reduce.mlir")
  message(FATAL_ERROR "changing the spec did not re-run pkc:\n${last_output}")
endif()
message(STATUS "consumer built against ${prefix}")
