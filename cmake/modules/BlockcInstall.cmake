#===- BlockcInstall.cmake - what cmake --install puts where ---------------===#
#
# <prefix>/bin          blockc, blockc-run, blockc-import, blockc-opt,
#                        blockc-tokenize
# <prefix>/lib          libblockc_emulator_runtime.so (and
#                       libblockc_cuda_runtime.so when built)
# <prefix>/include/blockc/Runtime
#                       the runtimes' C headers (CudaRuntime.h,
#                       EmulatorRuntime.h)
# <prefix>/lib/libblockc_session.so, <prefix>/include/blockc/Session.h
#                       the serving C API (docs/RuntimeABI.md)
# <prefix>/lib/python3/site-packages/blockc
#                       the Python package (BLOCKC_INSTALL_PYTHONDIR,
#                       python/CMakeLists.txt; docs/Python.md)
# <prefix>/lib/cmake/blockc
#                       blockcConfig.cmake: imported targets and
#                       blockc_add_object() (docs/Install.md)
# <prefix>/lib/pkgconfig
#                       blockc.pc (CPU objects), blockc-emulator.pc and
#                       blockc-cuda.pc (GPU objects)
#
# Components: "runtime" (libraries, headers, CMake package, pkg-config
# files), "tools" and "python".
#
#===----------------------------------------------------------------------===#

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(BLOCKC_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/blockc)
set(BLOCKC_INSTALL_PKGCONFIGDIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The tools find libMLIR.so in Debian's LLVM directory and blockc's runtime
# libraries beside them (BlockJit looks in <bin>/../lib first).
set(blockc_tools blockc blockc-run blockc-import blockc-opt blockc-tokenize)
foreach(tool ${blockc_tools})
  set_target_properties(${tool} PROPERTIES
    INSTALL_RPATH "\$ORIGIN/../${CMAKE_INSTALL_LIBDIR};${LLVM_LIBRARY_DIR}")
endforeach()
install(TARGETS ${blockc_tools}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tools)

set(blockc_runtimes blockc_emulator_runtime)
if(TARGET blockc_cuda_runtime)
  list(APPEND blockc_runtimes blockc_cuda_runtime)
endif()
install(TARGETS ${blockc_runtimes}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime)
# The serving library finds libMLIR.so in Debian's LLVM directory.
set_target_properties(blockc_session PROPERTIES
  INSTALL_RPATH "${LLVM_LIBRARY_DIR}")
install(TARGETS blockc_session
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime)
install(FILES ${PROJECT_SOURCE_DIR}/include/blockc/Session.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/blockc COMPONENT runtime)
install(FILES
  ${PROJECT_SOURCE_DIR}/include/blockc/Runtime/CudaRuntime.h
  ${PROJECT_SOURCE_DIR}/include/blockc/Runtime/EmulatorRuntime.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/blockc/Runtime COMPONENT runtime)

# The CMake package.
set(BLOCKC_HAVE_CUDA_RUNTIME OFF)
if(TARGET blockc_cuda_runtime)
  set(BLOCKC_HAVE_CUDA_RUNTIME ON)
endif()
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/install/blockcConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/blockcConfig.cmake
  INSTALL_DESTINATION ${BLOCKC_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_BINDIR CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/blockcConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/cmake/blockcConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/blockcConfigVersion.cmake
  DESTINATION ${BLOCKC_INSTALL_CMAKEDIR} COMPONENT runtime)

# pkg-config files, relocatable (${pcfiledir}).
set(blockc_pc_files blockc blockc-emulator)
if(TARGET blockc_cuda_runtime)
  list(APPEND blockc_pc_files blockc-cuda)
endif()
foreach(pc ${blockc_pc_files})
  configure_file(${PROJECT_SOURCE_DIR}/cmake/install/${pc}.pc.in
    ${PROJECT_BINARY_DIR}/pkgconfig/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/${pc}.pc
    DESTINATION ${BLOCKC_INSTALL_PKGCONFIGDIR} COMPONENT runtime)
endforeach()
