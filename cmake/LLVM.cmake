# Finds LLVM/MLIR/Clang 22.1 (Debian's packages) and, with PKC_STATIC_LLVM, rewires every
# imported MLIR/Clang target to static LLVM archives instead of libLLVM.so.
find_package(MLIR 22.1 REQUIRED CONFIG HINTS /usr/lib/llvm-22/lib/cmake/mlir)
find_package(Clang REQUIRED CONFIG NO_DEFAULT_PATH HINTS ${LLVM_LIBRARY_DIR}/cmake/clang)
message(STATUS "pkc: LLVM ${LLVM_PACKAGE_VERSION} at ${LLVM_DIR}")

list(APPEND CMAKE_MODULE_PATH ${MLIR_CMAKE_DIR} ${LLVM_CMAKE_DIR})
set(LLVM_RUNTIME_OUTPUT_INTDIR ${CMAKE_BINARY_DIR}/bin)
set(LLVM_LIBRARY_OUTPUT_INTDIR ${CMAKE_BINARY_DIR}/lib)
set(MLIR_BINARY_DIR ${CMAKE_BINARY_DIR})
include(TableGen)
include(AddLLVM)
include(AddMLIR)
include(HandleLLVMOptions)

include_directories(SYSTEM ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS} ${CLANG_INCLUDE_DIRS})
add_definitions(${LLVM_DEFINITIONS})

if(PKC_STATIC_LLVM)
  set(LLVM_LINK_LLVM_DYLIB OFF)
  set(pkc_llvm_components Core Support Demangle TargetParser BinaryFormat IRReader BitReader
      BitWriter BitstreamReader Remarks Passes Linker MC MCParser Target Analysis
      TransformUtils FrontendOpenMP FrontendOffloading FrontendHLSL FrontendAtomic
      FrontendDirective NVPTXDesc NVPTXInfo Option WindowsDriver ProfileData Object
      TextAPI AsmParser Frontend DebugInfoDWARF DebugInfoDWARFLowLevel Coverage
      CodeGenTypes Symbolize DebugInfoCodeView DebugInfoPDB DebugInfoMSF DebugInfoBTF
      ObjectYAML)
  set(pkc_llvm_archives)
  foreach(c ${pkc_llvm_components})
    if(EXISTS ${LLVM_LIBRARY_DIR}/libLLVM${c}.a)
      list(APPEND pkc_llvm_archives ${LLVM_LIBRARY_DIR}/libLLVM${c}.a)
    endif()
  endforeach()
  find_library(PKC_LIBZ_STATIC libz.a REQUIRED)
  find_library(PKC_LIBZSTD_STATIC libzstd.a REQUIRED)
  add_library(pkc_llvm_static INTERFACE)
  target_link_libraries(pkc_llvm_static INTERFACE
    -Wl,--start-group ${pkc_llvm_archives} -Wl,--end-group
    ${PKC_LIBZ_STATIC} ${PKC_LIBZSTD_STATIC} pthread dl)
  # Rewrite LLVM (the dylib) to the static archives in every imported target.
  get_property(pkc_imported DIRECTORY PROPERTY IMPORTED_TARGETS)
  foreach(t ${pkc_imported})
    get_target_property(libs ${t} INTERFACE_LINK_LIBRARIES)
    if(libs)
      list(TRANSFORM libs REPLACE "^LLVM$" "pkc_llvm_static")
      list(TRANSFORM libs REPLACE "^\\$<LINK_ONLY:LLVM>$" "$<LINK_ONLY:pkc_llvm_static>")
      list(FILTER libs EXCLUDE REGEX "libz3")
      set_target_properties(${t} PROPERTIES INTERFACE_LINK_LIBRARIES "${libs}")
    endif()
  endforeach()
  set(PKC_LLVM_LIBS pkc_llvm_static)
else()
  set(PKC_LLVM_LIBS LLVM)
endif()
