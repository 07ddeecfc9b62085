# Injected by tritonbuild through CMAKE_PROJECT_TOP_LEVEL_INCLUDES when --dep supplies a configure-time download.
# A FetchContent dependency provider (CMake >= 3.24) answers FetchContent_MakeAvailable for each supplied name:
#  - it copies the supplied dir into the build dir: where the tree's FetchContent_Declare put its SOURCE_DIR
#    when that is inside the build dir (trees keep that path in their own variables, e.g. Intel's
#    SPIRVToLLVMTranslator_SOURCE_DIR), else FetchContent's own <name>-src dir;
#  - it points FETCHCONTENT_SOURCE_DIR_<NAME> at the copy, so FetchContent neither downloads nor updates it.
# Patches a tree applies to the fetched source (Intel runs `git apply` on the translator) change the copy, never
# the user's checkout. The copy keeps file times (file(COPY) skips files already copied), so a re-configure does
# not rebuild the dependency. Names not supplied fall through to FetchContent's normal download.
# TRITONBUILD_DEPS: "name=path;..." with lower-case names.
include_guard(GLOBAL)

macro(tritonbuild_provide_dependency _tb_method _tb_name)
  string(TOLOWER "${_tb_name}" _tb_lc)
  set(_tb_from "")
  foreach(_tb_entry IN LISTS TRITONBUILD_DEPS)
    string(FIND "${_tb_entry}" "=" _tb_eq)
    string(SUBSTRING "${_tb_entry}" 0 ${_tb_eq} _tb_key)
    math(EXPR _tb_start "${_tb_eq} + 1")
    if(_tb_key STREQUAL _tb_lc)
      string(SUBSTRING "${_tb_entry}" ${_tb_start} -1 _tb_from)
    endif()
  endforeach()
  if(_tb_from)
    cmake_parse_arguments(_tb_decl "" "SOURCE_DIR" "" ${ARGN})
    if(NOT FETCHCONTENT_BASE_DIR)
      set(FETCHCONTENT_BASE_DIR "${CMAKE_BINARY_DIR}/_deps")
    endif()
    set(_tb_dest "${FETCHCONTENT_BASE_DIR}/${_tb_lc}-src")
    if(_tb_decl_SOURCE_DIR)
      cmake_path(IS_PREFIX CMAKE_BINARY_DIR "${_tb_decl_SOURCE_DIR}" NORMALIZE _tb_in_build)
      if(_tb_in_build)
        set(_tb_dest "${_tb_decl_SOURCE_DIR}")
      endif()
    endif()
    set(_tb_stamp "${CMAKE_BINARY_DIR}/tritonbuild-deps/${_tb_lc}.from")
    set(_tb_was "")
    if(EXISTS "${_tb_stamp}")
      file(READ "${_tb_stamp}" _tb_was)
    endif()
    if(NOT _tb_was STREQUAL "${_tb_from}")
      file(REMOVE_RECURSE "${_tb_dest}")  # another checkout before: no stale files from it
    endif()
    message(STATUS "tritonbuild: ${_tb_name} from ${_tb_from} (--dep), copied to ${_tb_dest}")
    file(COPY "${_tb_from}/" DESTINATION "${_tb_dest}")
    file(WRITE "${_tb_stamp}" "${_tb_from}")
    string(TOUPPER "${_tb_name}" _tb_uc)
    set(FETCHCONTENT_SOURCE_DIR_${_tb_uc} "${_tb_dest}")
    FetchContent_MakeAvailable(${_tb_name})
  endif()
endmacro()

cmake_language(SET_DEPENDENCY_PROVIDER tritonbuild_provide_dependency
               SUPPORTED_METHODS FETCHCONTENT_MAKEAVAILABLE_SERIAL)
