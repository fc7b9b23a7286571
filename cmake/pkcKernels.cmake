# pkc_add_kernels(<target> SPECS <spec>... [NAMESPACE <ns>] [PKC_FLAGS <flag>...])
#
# Compiles pk specs at build time into a static library <target> with one typed launcher header
# per spec, pk_kernels/<spec name>.h (e.g. pk_kernels/all_reduce.h declares
# `pk::Status all_reduce(pk::Context&, pk::SymTensor<pk::bf16> x, pk::Tensor<pk::bf16> y,
# cudaStream_t)`). pkc writes depfiles, so a change to a spec or to a header it includes
# re-runs it. The kernels' CUDA is embedded in the library and compiled for the GPU in hand
# by NVRTC on first launch (cached on disk), so the library needs no CUDA compiler.
# Uses PKC_EXECUTABLE (set by find_package(pkc), or the in-tree pkc).
function(pkc_add_kernels target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "NAMESPACE" "SPECS;PKC_FLAGS")
  if(NOT arg_SPECS)
    message(FATAL_ERROR "pkc_add_kernels(${target}): give at least one spec with SPECS")
  endif()
  if(NOT PKC_EXECUTABLE)
    message(FATAL_ERROR "pkc_add_kernels(${target}): PKC_EXECUTABLE is not set")
  endif()
  if(NOT arg_NAMESPACE)
    set(arg_NAMESPACE pk_kernels)
  endif()
  set(pkc_dep ${PKC_EXECUTABLE})
  if(TARGET pkc)
    set(pkc_dep pkc)
  endif()
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${target}.pk)
  file(MAKE_DIRECTORY ${out}/pk_kernels)
  set(sources)
  foreach(spec IN LISTS arg_SPECS)
    get_filename_component(abs ${spec} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    get_filename_component(name ${abs} NAME)
    string(REGEX REPLACE "(\\.pk\\.cpp|\\.mlir|\\.cpp|\\.cc|\\.cxx)$" "" stem ${name})
    set(header ${out}/pk_kernels/${stem}.h)
    set(impl ${out}/${stem}.launcher.cpp)
    add_custom_command(OUTPUT ${header}
      COMMAND ${PKC_EXECUTABLE} ${abs} --emit=launcher -o ${header} -MD -MF ${header}.d
              --launcher-namespace=${arg_NAMESPACE} ${arg_PKC_FLAGS}
      DEPENDS ${abs} ${pkc_dep}
      DEPFILE ${header}.d
      COMMENT "pkc: launcher header for ${name}"
      VERBATIM)
    add_custom_command(OUTPUT ${impl}
      COMMAND ${PKC_EXECUTABLE} ${abs} --emit=launcher-impl -o ${impl} -MD -MF ${impl}.d
              --launcher-namespace=${arg_NAMESPACE} --launcher-include=pk_kernels/${stem}.h
              ${arg_PKC_FLAGS}
      DEPENDS ${abs} ${pkc_dep}
      DEPFILE ${impl}.d
      COMMENT "pkc: kernels and launchers for ${name}"
      VERBATIM)
    list(APPEND sources ${impl} ${header})
  endforeach()
  add_library(${target} STATIC ${sources})
  target_include_directories(${target} PUBLIC ${out})
  target_link_libraries(${target} PUBLIC pkc::pk_runtime)
  target_compile_features(${target} PUBLIC cxx_std_17)
endfunction()
