# cmake --install: pkc, pkc-opt, the runtime library and headers, the shipped specs, and the
# CMake package (pkcConfig.cmake, version, exported targets, pkc_add_kernels).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(PKC_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/pkc)
set(PKC_INSTALL_SPECSDIR ${CMAKE_INSTALL_DATADIR}/pkc/specs)

# Without the compiler in this build, install the pkc it was pointed at.
if(NOT TARGET pkc AND PKC_EXECUTABLE)
  install(PROGRAMS ${PKC_EXECUTABLE} DESTINATION ${CMAKE_INSTALL_BINDIR} RENAME pkc)
endif()

install(TARGETS pk_runtime pk_host_check pk_embedded_headers pk_profile pk_device EXPORT pkcTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PKC_SOURCE_DIR}/runtime/include/pk/runtime ${PKC_SOURCE_DIR}/runtime/include/pk/device
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/pk)
install(DIRECTORY ${PKC_SOURCE_DIR}/templates/specs/ DESTINATION ${PKC_INSTALL_SPECSDIR})
# Headers that specs include, when the tree ships them.
if(EXISTS ${PKC_SOURCE_DIR}/templates/include)
  install(DIRECTORY ${PKC_SOURCE_DIR}/templates/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endif()

install(EXPORT pkcTargets NAMESPACE pkc:: DESTINATION ${PKC_INSTALL_CMAKEDIR})
get_filename_component(_nccl_lib_dir "${NCCL_LIBRARY}" DIRECTORY)
get_filename_component(PKC_NCCL_ROOT_HINT "${_nccl_lib_dir}/.." ABSOLUTE)
configure_package_config_file(${PKC_SOURCE_DIR}/cmake/pkcConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/pkcConfig.cmake
  INSTALL_DESTINATION ${PKC_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_BINDIR PKC_INSTALL_SPECSDIR)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/pkcConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/pkcConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/pkcConfigVersion.cmake
              ${PKC_SOURCE_DIR}/cmake/pkcKernels.cmake
              ${PKC_SOURCE_DIR}/runtime/cmake/FindNCCL.cmake
        DESTINATION ${PKC_INSTALL_CMAKEDIR})
