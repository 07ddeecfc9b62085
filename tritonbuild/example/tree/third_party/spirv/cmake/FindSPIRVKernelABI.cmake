# Shaped like Intel's third_party/intel/cmake/FindSPIRVToLLVMTranslator.cmake: the spirv backend fetches a
# dependency while CMake configures, at the tag kept in a .conf file next to the CMakeLists.txt that calls
# find_package, into a SOURCE_DIR it keeps in its own variable, and patches the fetched source with git apply.
include(FetchContent)

if(NOT SPIRVKernelABI_FOUND)
  set(SPIRVKernelABI_SOURCE_DIR "${CMAKE_CURRENT_BINARY_DIR}/SPIRVKernelABI")
  file(READ spirv-kernel-abi.conf SPIRVKernelABI_TAG)
  string(STRIP "${SPIRVKernelABI_TAG}" SPIRVKernelABI_TAG)
  FetchContent_Declare(spirv-kernel-abi
    GIT_REPOSITORY https://github.com/tritonbuild-example/spirv-kernel-abi.git
    GIT_TAG        ${SPIRVKernelABI_TAG}
    SOURCE_DIR     ${SPIRVKernelABI_SOURCE_DIR}
  )
  FetchContent_GetProperties(spirv-kernel-abi)
  if(NOT spirv-kernel-abi_POPULATED)
    FetchContent_MakeAvailable(spirv-kernel-abi)
    execute_process(COMMAND git apply --check ${CMAKE_CURRENT_LIST_DIR}/kernel-abi.patch
                    WORKING_DIRECTORY ${spirv-kernel-abi_SOURCE_DIR} ERROR_QUIET RESULT_VARIABLE _patch)
    if(_patch EQUAL 0)
      execute_process(COMMAND git apply ${CMAKE_CURRENT_LIST_DIR}/kernel-abi.patch
                      WORKING_DIRECTORY ${spirv-kernel-abi_SOURCE_DIR} RESULT_VARIABLE _patch)
    else()  # already applied by an earlier configure
      execute_process(COMMAND git apply --reverse --check ${CMAKE_CURRENT_LIST_DIR}/kernel-abi.patch
                      WORKING_DIRECTORY ${spirv-kernel-abi_SOURCE_DIR} ERROR_QUIET RESULT_VARIABLE _patch)
    endif()
    if(NOT _patch EQUAL 0)
      message(FATAL_ERROR "Failed to apply kernel-abi.patch to spirv-kernel-abi")
    endif()
  endif()
  # The tree's own variable, not spirv-kernel-abi_SOURCE_DIR: the source must really be where it declared.
  set(SPIRVKernelABI_INCLUDE_DIR "${SPIRVKernelABI_SOURCE_DIR}/include" CACHE INTERNAL "spirv-kernel-abi headers")
  include(FindPackageHandleStandardArgs)
  find_package_handle_standard_args(SPIRVKernelABI FOUND_VAR SPIRVKernelABI_FOUND
                                    REQUIRED_VARS SPIRVKernelABI_SOURCE_DIR)
endif()
