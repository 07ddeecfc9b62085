# Injected by tritonbuild into Triton's own top-level project through CMAKE_PROJECT_triton_INCLUDE.
# Triton's CMake must stay the top-level project (it uses CMAKE_BINARY_DIR everywhere), so instead of a
# wrapper project this file runs right after project(triton), sets what a wheel builder must provide,
# and defers the install rules to the end of the top-level CMakeLists.txt, when `triton` exists.
# Nothing in the source tree is edited. Everything is installed in one component
# (TRITONBUILD_INSTALL_COMPONENT) so that Triton's own install() rules are never run.
include_guard(GLOBAL)

if(NOT TRITONBUILD_INSTALL_COMPONENT)
  set(TRITONBUILD_INSTALL_COMPONENT tritonbuild)
endif()

# Where Triton copies FileCheck (it requires the variable) and where libtriton.so is linked.
if(NOT DEFINED TRITON_WHEEL_DIR)
  set(TRITON_WHEEL_DIR "${CMAKE_BINARY_DIR}/tritonbuild-stage/triton" CACHE PATH "Where Triton puts FileCheck")
endif()
if(NOT CMAKE_LIBRARY_OUTPUT_DIRECTORY)
  set(CMAKE_LIBRARY_OUTPUT_DIRECTORY "${TRITON_WHEEL_DIR}/_C")
endif()

# Build-tree run paths relative to $ORIGIN: a library's build RUNPATH (and so its GNU build-id, a hash of the
# linked file) must not name the build dir, or two builds of one plan in different dirs would differ.
set(CMAKE_BUILD_RPATH_USE_ORIGIN ON)

# Split a "name=path" entry of TRITONBUILD_BACKENDS or TRITONBUILD_NVIDIA_TOOLS at its first "=".
function(_tritonbuild_split entry name_out path_out)
  string(FIND "${entry}" "=" _eq)
  string(SUBSTRING "${entry}" 0 ${_eq} _name)
  math(EXPR _start "${_eq} + 1")
  string(SUBSTRING "${entry}" ${_start} -1 _path)
  set(${name_out} "${_name}" PARENT_SCOPE)
  set(${path_out} "${_path}" PARENT_SCOPE)
endfunction()

# Reproducible wheels: no build machine directories in the objects (__FILE__, debug info), so the GNU build-id
# depends on content only. Each directory is mapped in both forms the compiler may see it in: absolute, and
# relative to the build dir (Ninja's working dir), because ccache's base_dir rewrites absolute paths under it
# into relative ones before the compiler runs, and an absolute map does not match those.
function(_tritonbuild_prefix_map path new)
  add_compile_options("-ffile-prefix-map=${path}=${new}")
  file(RELATIVE_PATH _rel "${CMAKE_BINARY_DIR}" "${path}")
  if(NOT _rel STREQUAL "" AND NOT IS_ABSOLUTE "${_rel}")
    add_compile_options("-ffile-prefix-map=${_rel}=${new}")
  endif()
endfunction()
if(TRITONBUILD_REPRODUCIBLE)
  _tritonbuild_prefix_map("${CMAKE_SOURCE_DIR}" /triton)
  _tritonbuild_prefix_map("${CMAKE_BINARY_DIR}" /build)
  foreach(entry IN LISTS TRITONBUILD_BACKENDS)
    _tritonbuild_split("${entry}" _name _path)
    _tritonbuild_prefix_map("${_path}" "/backends/${_name}")
  endforeach()
  # the build environment's headers (pybind11 from the build venv, the interpreter's include dir)
  foreach(entry IN LISTS TRITONBUILD_PREFIX_MAPS)
    _tritonbuild_split("${entry}" _name _path)
    _tritonbuild_prefix_map("${_path}" "/${_name}")
  endforeach()
endif()

# Stable paths (tritonbuild.resolve.pathviews): the source is seen through a link in the build dir. gcc resolves
# links in the names of system headers (-isystem dirs of the tree, like proton's ROCm headers), which would put
# the checkout's real path into the preprocessed output (compiler-cache keys) and debug info; this keeps the
# link's name.
if(TRITONBUILD_STABLE_PATHS)
  add_compile_options("$<$<OR:$<COMPILE_LANG_AND_ID:CXX,GNU>,$<COMPILE_LANG_AND_ID:C,GNU>>:-fno-canonical-system-headers>")
endif()

# The debug-info lever (--debug-info): a -g level after the build type's flags, where the last -g wins.
if(TRITONBUILD_DEBUG_FLAG)
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${TRITONBUILD_DEBUG_FLAG}>")
endif()

# The unity-build lever (--unity-build N): every target joins N of its sources into one translation unit, so the
# heavy MLIR headers are parsed once per N files; targets whose files clash when joined (--unity-exclude) are
# compiled file by file. The exclusions run when the top-level directory is done, after every target exists.
if(TRITONBUILD_UNITY_BATCH)
  set(CMAKE_UNITY_BUILD ON)
  set(CMAKE_UNITY_BUILD_BATCH_SIZE ${TRITONBUILD_UNITY_BATCH})
  # CMake 4.0+: the unity files include sources by relative path, so their text (and the compiler cache's key)
  # does not hold the build dir; older CMake writes absolute paths, so unity objects miss across checkouts.
  set(CMAKE_UNITY_BUILD_RELOCATABLE ON)
  # Each of Triton's files defines DEBUG_TYPE for LLVM_DEBUG; joined, the next definition breaks -Werror
  # (clang's -Wmacro-redefined). Undefining it after each file is no cure: some files use the one a header defined.
  add_compile_options("$<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:$<TARGET_PROPERTY:UNITY_BUILD>>>:-Wno-macro-redefined>")
  # A joined unit that clashes stops at its first error (-Wfatal-errors), so the round tritonbuild learns from
  # wastes little; the target is then built file by file, where a real error shows in full.
  add_compile_options("$<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:$<TARGET_PROPERTY:UNITY_BUILD>>>:-Wfatal-errors>")
  # The targets tritonbuild learned clash when joined (tritonbuild.execute.unity writes the file next to this build
  # dir before every build, and adds a target after a round where its unity unit failed): a change re-configures.
  set(_tritonbuild_learned "${CMAKE_BINARY_DIR}/../unity-learned.txt")
  if(EXISTS "${_tritonbuild_learned}")
    file(STRINGS "${_tritonbuild_learned}" _tritonbuild_learned_targets REGEX "^[^#]")
    list(APPEND TRITONBUILD_UNITY_EXCLUDE ${_tritonbuild_learned_targets})
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_tritonbuild_learned}")
    if(_tritonbuild_learned_targets)
      message(STATUS "tritonbuild: unity builds, learned file by file: ${_tritonbuild_learned_targets}")
    endif()
  endif()
  function(_tritonbuild_unity_exclude)
    foreach(_t IN LISTS TRITONBUILD_UNITY_EXCLUDE)
      if(TARGET ${_t})
        get_target_property(_aliased ${_t} ALIASED_TARGET)
        if(_aliased)
          set(_t ${_aliased})
        endif()
        set_target_properties(${_t} PROPERTIES UNITY_BUILD OFF)
      else()
        message(STATUS "tritonbuild: --unity-exclude ${_t}: no such target")
      endif()
    endforeach()
  endfunction()
  cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _tritonbuild_unity_exclude)
endif()

# An LLVM that is not the pinned commit deprecates APIs the source still uses, and Triton builds with -Werror.
# A compile option comes after CMAKE_CXX_FLAGS on the command line, so it outlives -Werror; and mid-2024
# trees reset CMAKE_CXX_FLAGS from CMAKE_C_FLAGS, which would drop a flag passed in CMAKE_CXX_FLAGS.
if(TRITONBUILD_DEPRECATED_NOT_ERROR)
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:-Wno-error=deprecated-declarations>")
endif()

# Mid-2026 trees' configure downloads NVIDIA's parts into the source tree for each TRITON_*_PATH left empty
# (build_helpers.py download_and_copy_dependencies): the staged dirs, "VAR=dir under tritonbuild-nvidia" entries.
# Set here, right after project(triton), before the tree declares them: its empty CACHE default then keeps these.
if(TRITONBUILD_NVIDIA_PATHS)
  get_filename_component(_tb_paths_stage "${CMAKE_BINARY_DIR}/../tritonbuild-nvidia" ABSOLUTE)
  foreach(entry IN LISTS TRITONBUILD_NVIDIA_PATHS)
    _tritonbuild_split("${entry}" _tb_var _tb_rel)
    set(${_tb_var} "${_tb_paths_stage}/${_tb_rel}" CACHE PATH "Staged by tritonbuild" FORCE)
  endforeach()
endif()

# NVIDIA files that setup.py downloads into third_party/nvidia/backend (CUDA and CUPTI headers, CUPTI libraries):
# tritonbuild stages them in <build dir>/tritonbuild-nvidia (mirroring the wheel's backends/nvidia) and installs
# that dir. 2024 trees' nvidia C++ includes "backend/include/cuda.h": those compile against the staged include
# dir through a link placed last on the include path; the source stays untouched. Proton compiles against it
# too when no toolkit dir holds CUPTI and CUDA headers together (setup.py puts them in one dir).
if(TRITONBUILD_NVIDIA_STAGE)
  get_filename_component(_tb_nvidia_stage "${CMAKE_BINARY_DIR}/../tritonbuild-nvidia" ABSOLUTE)
  if(TRITONBUILD_CUPTI_FROM_STAGE)
    set(CUPTI_INCLUDE_DIR "${_tb_nvidia_stage}/include" CACHE PATH "CUPTI headers (staged by tritonbuild)" FORCE)
  endif()
  if(TRITONBUILD_CUDA_HEADERS)
    set(_tb_cuda_overlay "${CMAKE_BINARY_DIR}/tritonbuild-include")
    set(_tb_link "${_tb_cuda_overlay}/backend/include")
    file(MAKE_DIRECTORY "${_tb_cuda_overlay}/backend")
    set(_tb_current "")
    if(IS_SYMLINK "${_tb_link}")
      file(READ_SYMLINK "${_tb_link}" _tb_current)
    endif()
    if(NOT _tb_current STREQUAL "${_tb_nvidia_stage}/include")
      if(IS_SYMLINK "${_tb_link}")
        file(REMOVE "${_tb_link}")  # the link only, never the headers behind it
      elseif(EXISTS "${_tb_link}")
        file(REMOVE_RECURSE "${_tb_link}")  # a copy left by an older tritonbuild
      endif()
      file(CREATE_LINK "${_tb_nvidia_stage}/include" "${_tb_link}" SYMBOLIC)
    endif()
    include_directories(AFTER "${_tb_cuda_overlay}")
  endif()
endif()

# Distribution LLVMs built as one shared libLLVM (LLVM_LINK_LLVM_DYLIB=ON, e.g. Debian's): MLIR's static
# libraries link libLLVM.so while Triton links LLVM component archives too, so libtriton would carry two
# copies of LLVM and abort at import ("Option ... registered more than once"). Two ways to make it one copy:
#  - TRITONBUILD_LLVM_LINK=shared: point every static LLVM* imported target at libLLVM.so (fast links; the wheel
#    then has to carry libLLVM.so and what it needs: see the bundling step at the end);
#  - TRITONBUILD_LLVM_LINK=static: point the `LLVM` dylib target (what MLIR and LLD link) at a linker script that
#    groups every LLVM component archive, so libtriton links LLVM statically, like official wheels.
function(_tritonbuild_llvm_dylib_fix)
  if(NOT TRITONBUILD_LLVM_DYLIB_FIX OR NOT LLVM_LINK_LLVM_DYLIB)
    return()
  endif()
  if(TRITONBUILD_LLVM_LINK STREQUAL "static")
    _tritonbuild_llvm_static()
    return()
  endif()
  find_library(_tb_libllvm NAMES LLVM "LLVM-${LLVM_VERSION_MAJOR}" PATHS "${LLVM_LIBRARY_DIR}" NO_DEFAULT_PATH)
  if(NOT _tb_libllvm)
    message(WARNING "tritonbuild: LLVM_LINK_LLVM_DYLIB is set but libLLVM.so was not found in ${LLVM_LIBRARY_DIR}")
    return()
  endif()
  _tritonbuild_static_llvm_targets(_static)
  foreach(lib IN LISTS _static)
    _tritonbuild_set_location(${lib} "${_tb_libllvm}")
  endforeach()
  list(LENGTH _static _count)
  message(STATUS "tritonbuild: pointed ${_count} static LLVM libraries at ${_tb_libllvm} (LLVM_LINK_LLVM_DYLIB)")
endfunction()

# The imported static LLVM component targets (LLVMSupport, LLVMCore, ...).
function(_tritonbuild_static_llvm_targets out)
  set(_found "")
  foreach(lib IN LISTS LLVM_AVAILABLE_LIBS)
    if(NOT lib MATCHES "^LLVM" OR lib STREQUAL "LLVM" OR NOT TARGET ${lib})
      continue()
    endif()
    get_target_property(_type ${lib} TYPE)
    get_target_property(_imported ${lib} IMPORTED)
    if(_type STREQUAL "STATIC_LIBRARY" AND _imported)
      list(APPEND _found ${lib})
    endif()
  endforeach()
  set(${out} "${_found}" PARENT_SCOPE)
endfunction()

function(_tritonbuild_set_location target path)
  set_target_properties(${target} PROPERTIES IMPORTED_LOCATION "${path}")
  get_target_property(_configs ${target} IMPORTED_CONFIGURATIONS)
  if(_configs)
    foreach(cfg IN LISTS _configs)
      string(TOUPPER "${cfg}" cfg)
      set_target_properties(${target} PROPERTIES IMPORTED_LOCATION_${cfg} "${path}")
    endforeach()
  endif()
endfunction()

function(_tritonbuild_imported_file target out)
  get_target_property(_loc ${target} IMPORTED_LOCATION)
  get_target_property(_configs ${target} IMPORTED_CONFIGURATIONS)
  foreach(cfg IN LISTS _configs)
    string(TOUPPER "${cfg}" cfg)
    if(NOT _loc)
      get_target_property(_loc ${target} IMPORTED_LOCATION_${cfg})
    endif()
  endforeach()
  set(${out} "${_loc}" PARENT_SCOPE)
endfunction()

function(_tritonbuild_llvm_static)
  if(NOT TARGET LLVM)
    message(WARNING "tritonbuild: TRITONBUILD_LLVM_LINK=static but this LLVM has no `LLVM` target")
    return()
  endif()
  _tritonbuild_static_llvm_targets(_static)
  set(_archives "")
  set(_system "")
  foreach(lib IN LISTS _static)
    _tritonbuild_imported_file(${lib} _file)
    if(EXISTS "${_file}")
      list(APPEND _archives "${_file}")
    endif()
    get_target_property(_deps ${lib} INTERFACE_LINK_LIBRARIES)
    foreach(dep IN LISTS _deps)
      # system libraries (rt, a libz3.so path, ZLIB::ZLIB); a target this LLVM's CMake did not define
      # (CURL::libcurl of LLVMDebuginfod) or whose file is missing
      # (Polly of LLVMExtensions when libPolly.a is not installed) belongs to an archive libtriton never pulls
      if(NOT dep OR dep MATCHES "^LLVM" OR dep MATCHES "^\\$<" OR (dep MATCHES "::" AND NOT TARGET "${dep}"))
        continue()
      endif()
      if(NOT TARGET "${dep}" AND dep MATCHES "^[A-Za-z0-9_+.-]+$" AND NOT dep MATCHES "^-")
        # a bare library name (rt, pfm of LLVMExegesis): only when this machine has it
        find_library(_tb_found_${dep} NAMES "${dep}")
        if(NOT _tb_found_${dep})
          continue()
        endif()
      endif()
      if(TARGET "${dep}")
        get_target_property(_dep_type "${dep}" TYPE)
        if(_dep_type MATCHES "^(STATIC|SHARED)_LIBRARY$")
          _tritonbuild_imported_file("${dep}" _dep_file)
          if(NOT EXISTS "${_dep_file}")
            continue()
          endif()
        endif()
      endif()
      list(APPEND _system "${dep}")
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES _system)
  # An input file the linker reads as a script: GROUP searches the archives repeatedly, so their order is moot.
  set(_script "${CMAKE_BINARY_DIR}/tritonbuild-llvm-static.ld")
  list(JOIN _archives "\n  " _lines)
  file(CONFIGURE OUTPUT "${_script}" CONTENT "/* tritonbuild: LLVM's component archives, linked statically */\nGROUP (\n  ${_lines}\n)\n" @ONLY)
  _tritonbuild_set_location(LLVM "${_script}")
  set_target_properties(LLVM PROPERTIES INTERFACE_LINK_LIBRARIES "${_system}")
  list(LENGTH _archives _count)
  message(STATUS "tritonbuild: LLVM linked statically: `LLVM` points at ${_count} component archives (${_script})")
  _tritonbuild_mlir_static()
endfunction()

# The same for the `MLIR` dylib target (Debian's libMLIR.so): libtriton links MLIR's archives, but a tool that a
# plugin builds beside it (triton-shared-opt) also got libMLIR.so from some MLIR target's link interface, so it held
# two copies of MLIR and every op's traits were two TypeIDs ("'tt.func' op symbol's parent must have the
# SymbolTable trait", its top-level options gone: docs/real-trees.md, #47). One copy: MLIR's archives, grouped.
function(_tritonbuild_mlir_static)
  if(NOT TARGET MLIR)
    return()
  endif()
  get_target_property(_type MLIR TYPE)
  if(NOT _type STREQUAL "SHARED_LIBRARY")
    return()
  endif()
  file(GLOB _archives "${LLVM_LIBRARY_DIR}/libMLIR*.a")
  if(NOT _archives)
    message(WARNING "tritonbuild: `MLIR` is libMLIR.so and ${LLVM_LIBRARY_DIR} has no MLIR archives: a tool that "
            "links it holds a second copy of MLIR")
    return()
  endif()
  set(_script "${CMAKE_BINARY_DIR}/tritonbuild-mlir-static.ld")
  list(JOIN _archives "\n  " _lines)
  file(CONFIGURE OUTPUT "${_script}" CONTENT "/* tritonbuild: MLIR's archives, linked statically */\nGROUP (\n  ${_lines}\n)\n" @ONLY)
  _tritonbuild_set_location(MLIR "${_script}")
  set_target_properties(MLIR PROPERTIES INTERFACE_LINK_LIBRARIES "LLVM")
  list(LENGTH _archives _count)
  message(STATUS "tritonbuild: MLIR linked statically: `MLIR` points at ${_count} archives (${_script})")
endfunction()

function(_tritonbuild_install_backend name path)
  set(comp COMPONENT ${TRITONBUILD_INSTALL_COMPONENT})
  install(DIRECTORY "${path}/backend/" DESTINATION "triton/backends/${name}" ${comp}
          PATTERN "__pycache__" EXCLUDE)
  foreach(kind language tools)
    if(IS_DIRECTORY "${path}/${kind}")
      file(GLOB _extras LIST_DIRECTORIES true "${path}/${kind}/*")
      foreach(extra IN LISTS _extras)
        # a dir CMake builds (triton-shared's tools/triton-shared-opt) is C++ source, not package data
        if(IS_DIRECTORY "${extra}" AND NOT EXISTS "${extra}/CMakeLists.txt")
          get_filename_component(_x "${extra}" NAME)
          install(DIRECTORY "${extra}/" DESTINATION "triton/${kind}/extra/${_x}" ${comp}
                  PATTERN "__pycache__" EXCLUDE)
        endif()
      endforeach()
    endif()
  endforeach()
endfunction()

# Shared libraries that backends and proton build next to libtriton, and those the tree places into the package
# itself (LIBRARY_OUTPUT_DIRECTORY under TRITON_WHEEL_DIR: triton/instrumentation): Triton's setup.py builds every target
# with CMAKE_LIBRARY_OUTPUT_DIRECTORY=triton/_C, so e.g. triton-cpu's libTritonCPURuntime.so (linked into
# each CPU kernel) and libsleef.so, and proton's libproton.so (imported as triton._C.libproton) land in the
# wheel. tritonbuild builds only `triton`, so it makes `triton` depend on them and installs them too.
function(_tritonbuild_collect_targets dir out)
  get_property(_excluded DIRECTORY "${dir}" PROPERTY EXCLUDE_FROM_ALL)
  if(_excluded)
    set(${out} "" PARENT_SCOPE)
    return()
  endif()
  get_property(_targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(_subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS _subdirs)
    _tritonbuild_collect_targets("${sub}" _more)
    list(APPEND _targets ${_more})
  endforeach()
  set(${out} "${_targets}" PARENT_SCOPE)
endfunction()

function(_tritonbuild_companion_libraries roots out)
  _tritonbuild_collect_targets("${CMAKE_SOURCE_DIR}" _all)
  set(_found "")
  foreach(t IN LISTS _all)
    if(t STREQUAL "triton")
      continue()
    endif()
    get_target_property(_type ${t} TYPE)
    get_target_property(_skip ${t} EXCLUDE_FROM_ALL)
    if(NOT _type MATCHES "^(SHARED|MODULE)_LIBRARY$" OR _skip)
      continue()
    endif()
    # A library that links libtriton itself (mid-2026 upstream's examples/plugins with TRITON_EXT_ENABLED) cannot
    # be a dependency of triton: that is a cycle CMake refuses. It is left out of the wheel (a test plugin).
    get_target_property(_links ${t} LINK_LIBRARIES)
    if("triton" IN_LIST _links)
      message(STATUS "tritonbuild: ${t} links libtriton; not built with it or put into the wheel")
      continue()
    endif()
    # a library the tree itself puts into the package (test/lib/Instrumentation -> triton/instrumentation)
    get_target_property(_outdir ${t} LIBRARY_OUTPUT_DIRECTORY)
    if(_outdir)
      cmake_path(IS_PREFIX TRITON_WHEEL_DIR "${_outdir}" NORMALIZE _into_package)
      if(_into_package)
        list(APPEND _found ${t})
        continue()
      endif()
    endif()
    get_target_property(_dir ${t} SOURCE_DIR)
    foreach(root IN LISTS roots)
      cmake_path(IS_PREFIX root "${_dir}" NORMALIZE _inside)
      if(_inside)
        list(APPEND _found ${t})
        break()
      endif()
    endforeach()
  endforeach()
  set(${out} "${_found}" PARENT_SCOPE)
endfunction()

# Where setup.py would leave a companion library: its LIBRARY_OUTPUT_DIRECTORY relative to the package
# when that is inside it, else triton/_C.
function(_tritonbuild_companion_dest t out)
  set(_dest triton/_C)
  get_target_property(_outdir ${t} LIBRARY_OUTPUT_DIRECTORY)
  if(_outdir)
    cmake_path(NORMAL_PATH _outdir)
    cmake_path(IS_PREFIX TRITON_WHEEL_DIR "${_outdir}" NORMALIZE _inside)
    if(_inside)
      cmake_path(RELATIVE_PATH _outdir BASE_DIRECTORY "${TRITON_WHEEL_DIR}" OUTPUT_VARIABLE _rel)
      set(_dest triton)
      cmake_path(APPEND _dest "${_rel}")
      string(REGEX REPLACE "/(\\.)?$" "" _dest "${_dest}")
    endif()
  endif()
  set(${out} "${_dest}" PARENT_SCOPE)
endfunction()

# Install one built library (libtriton or a companion). install(FILES) keeps the build RPATH to the LLVM
# prefix when LLVM is a shared library; `cmake --install --strip` (scikit-build-core's install.strip) only
# strips install(TARGETS), so stripping is done here.
function(_tritonbuild_install_library t dest)
  set(comp COMPONENT ${TRITONBUILD_INSTALL_COMPONENT})
  install(FILES "$<TARGET_FILE:${t}>" DESTINATION "${dest}" ${comp})
  # A wheel holds no symlinks: a versioned library (libsleef.so -> .so.3 -> .so.3.6) also goes in under the
  # names the linker (-lsleef) and the loader (its SONAME) look for.
  get_target_property(_type ${t} TYPE)
  get_target_property(_soversion ${t} SOVERSION)
  get_target_property(_version ${t} VERSION)
  set(_strip "")
  if(CMAKE_STRIP)
    set(_strip "if(CMAKE_INSTALL_DO_STRIP)
      execute_process(COMMAND \"${CMAKE_STRIP}\" --strip-unneeded \"\${_d}/$<TARGET_FILE_NAME:${t}>\")
    endif()")
  endif()
  set(_aliases "")
  if(_type STREQUAL "SHARED_LIBRARY" AND (_soversion OR _version))
    set(_aliases "$<TARGET_LINKER_FILE_NAME:${t}>;$<TARGET_SONAME_FILE_NAME:${t}>")
  endif()
  install(CODE "set(_d \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${dest}\")
    ${_strip}
    foreach(_n IN ITEMS ${_aliases})
      if(NOT _n STREQUAL \"$<TARGET_FILE_NAME:${t}>\")
        file(COPY_FILE \"\${_d}/$<TARGET_FILE_NAME:${t}>\" \"\${_d}/\${_n}\")
      endif()
    endforeach()" ${comp})
endfunction()

# Every generated header before any compile: a tree whose library includes another dialect's generated header
# without a DEPENDS on its tablegen target (triton-cpu 5066a56e9: lib/Analysis includes TritonCPU's
# TritonCPUAttrInterfaces.h.inc) builds with setup.py only when Ninja happens to run that tablegen step first; at
# 2 jobs it did not ("No such file or directory" in a fresh build dir). The tablegen targets are the ones LLVM's
# add_public_tablegen_target puts in a ".../Tablegenning" folder; every compiled target of the tree waits for them.
function(_tritonbuild_tablegen_first)
  _tritonbuild_collect_targets("${CMAKE_SOURCE_DIR}" _all)
  set(_gen "")
  set(_compiled "")
  foreach(t IN LISTS _all)
    get_target_property(_type ${t} TYPE)
    get_target_property(_folder ${t} FOLDER)
    if(_type STREQUAL "UTILITY" AND _folder MATCHES "Tablegenning$")
      list(APPEND _gen ${t})
    elseif(_type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$")
      list(APPEND _compiled ${t})
    endif()
  endforeach()
  if(_gen)
    add_custom_target(tritonbuild_generated_headers)
    add_dependencies(tritonbuild_generated_headers ${_gen})
    foreach(t IN LISTS _compiled)
      add_dependencies(${t} tritonbuild_generated_headers)
    endforeach()
  endif()
endfunction()

function(_tritonbuild_finish)
  _tritonbuild_llvm_dylib_fix()
  _tritonbuild_tablegen_first()
  if(NOT TARGET triton)
    message(WARNING "tritonbuild: no `triton` target (is TRITON_BUILD_PYTHON_MODULE ON?); nothing to install")
    return()
  endif()
  set(comp COMPONENT ${TRITONBUILD_INSTALL_COMPONENT})
  # language/tools extras that setup.py links or copies in from backends are left out; extras that are part
  # of the package itself (2024 trees keep language/extra/{cuda,hip,cpu} in python/triton) are kept.
  set(_tb_extra_excludes "")
  foreach(kind language tools)
    file(GLOB _entries LIST_DIRECTORIES true "${CMAKE_SOURCE_DIR}/python/triton/${kind}/extra/*")
    foreach(e IN LISTS _entries)
      get_filename_component(_n "${e}" NAME)
      file(GLOB _providers LIST_DIRECTORIES true "${CMAKE_SOURCE_DIR}/third_party/*/${kind}/${_n}")
      if(IS_SYMLINK "${e}" OR _providers)
        list(APPEND _tb_extra_excludes REGEX "/triton/${kind}/extra/${_n}$" EXCLUDE)
      endif()
    endforeach()
  endforeach()
  # The Python package, without what setup.py-based builds leave behind in the source tree (symlinked
  # backends and extras, an in-tree libtriton, FileCheck, a linked profiler).
  install(DIRECTORY "${CMAKE_SOURCE_DIR}/python/triton/" DESTINATION triton ${comp}
          PATTERN "__pycache__" EXCLUDE
          REGEX "/triton/backends/[^/.]+$" EXCLUDE
          ${_tb_extra_excludes}
          REGEX "/triton/profiler$" EXCLUDE
          REGEX "/triton/FileCheck$" EXCLUDE
          REGEX "/triton/include$" EXCLUDE
          REGEX "/triton/_C/include$" EXCLUDE
          REGEX "/triton/_C/[^/]*\\.(so|pyd|dylib)(\\.[0-9]+)*$" EXCLUDE
          REGEX "/triton/_C/\\.keep$" EXCLUDE)
  _tritonbuild_install_library(triton triton/_C)
  set(_roots "")
  foreach(entry IN LISTS TRITONBUILD_BACKENDS)
    _tritonbuild_split("${entry}" _name _path)
    _tritonbuild_install_backend("${_name}" "${_path}")
    list(APPEND _roots "${_path}")
  endforeach()
  if(TRITON_BUILD_PROTON)
    list(APPEND _roots "${CMAKE_SOURCE_DIR}/third_party/proton")
  endif()
  _tritonbuild_companion_libraries("${_roots}" _companions)
  if(_companions)
    add_dependencies(triton ${_companions})
    message(STATUS "tritonbuild: companion libraries built with triton and installed: ${_companions}")
  endif()
  foreach(t IN LISTS _companions)
    _tritonbuild_companion_dest(${t} _dest)
    _tritonbuild_install_library(${t} "${_dest}")
  endforeach()
  if(_tb_nvidia_stage AND IS_DIRECTORY "${_tb_nvidia_stage}")
    install(DIRECTORY "${_tb_nvidia_stage}/" DESTINATION triton/backends/nvidia USE_SOURCE_PERMISSIONS ${comp})
  endif()
  # ptxas, cuobjdump, nvdisasm where the nvidia backend looks without TRITON_<TOOL>_PATH (setup.py copies
  # them into backends/nvidia/bin); "name=path" entries, paths already resolved to the binaries.
  foreach(entry IN LISTS TRITONBUILD_NVIDIA_TOOLS)
    _tritonbuild_split("${entry}" _tool _tool_path)
    install(PROGRAMS "${_tool_path}" DESTINATION triton/backends/nvidia/bin RENAME "${_tool}" ${comp})
  endforeach()
  if(TRITON_BUILD_PROTON AND IS_DIRECTORY "${CMAKE_SOURCE_DIR}/third_party/proton/proton")
    install(DIRECTORY "${CMAKE_SOURCE_DIR}/third_party/proton/proton/" DESTINATION triton/profiler ${comp}
            PATTERN "__pycache__" EXCLUDE)
  endif()
  install(PROGRAMS "${TRITON_WHEEL_DIR}/FileCheck" DESTINATION triton ${comp} OPTIONAL)
  # Extension headers (--ext-headers): the set upstream's wheel_headers component installs since #10847
  # (Triton's *.h and TableGen *.td, the build's generated *.h and *.h.inc, python/'s *.h), for every tree
  # generation, so out-of-tree extensions compile against the wheel.
  if(TRITONBUILD_EXT_HEADERS)
    install(DIRECTORY "${CMAKE_SOURCE_DIR}/include/" DESTINATION triton/include ${comp} OPTIONAL
            FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
    install(DIRECTORY "${CMAKE_BINARY_DIR}/include/" DESTINATION triton/include ${comp} OPTIONAL
            FILES_MATCHING PATTERN "*.h" PATTERN "*.h.inc")
    install(DIRECTORY "${CMAKE_SOURCE_DIR}/python/" DESTINATION triton/include/python ${comp} OPTIONAL
            FILES_MATCHING PATTERN "*.h" PATTERN "triton" EXCLUDE)
  endif()
  # tritonbuild writes the provenance file next to the CMake build dir (<build dir>/build_info.json).
  if(NOT TRITONBUILD_BUILD_INFO AND EXISTS "${CMAKE_BINARY_DIR}/../build_info.json")
    get_filename_component(TRITONBUILD_BUILD_INFO "${CMAKE_BINARY_DIR}/../build_info.json" ABSOLUTE)
  endif()
  if(TRITONBUILD_BUILD_INFO)
    install(FILES "${TRITONBUILD_BUILD_INFO}" DESTINATION triton RENAME _build_info.json ${comp})
  endif()
  _tritonbuild_bundle_step()
endfunction()

# Last install step: copy the shared libraries the installed files need from outside the manylinux allow-list
# into triton/_C and give every ELF file an $ORIGIN run path (tritonbuild/wheel/bundle.py says how), so the wheel
# imports on a machine without this build's LLVM.
function(_tritonbuild_bundle_step)
  if(NOT TRITONBUILD_BUNDLE_PYTHON)
    return()
  endif()
  set(_args "")
  if(LLVM_LIBRARY_DIR)
    string(APPEND _args " --search \"${LLVM_LIBRARY_DIR}\"")
  endif()
  foreach(lib IN LISTS TRITONBUILD_SYSTEM_LIBS)
    string(APPEND _args " --system \"${lib}\"")
  endforeach()
  install(CODE "execute_process(
      COMMAND \"${TRITONBUILD_BUNDLE_PYTHON}\" -m tritonbuild.wheel.bundle \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}\"
              --into triton/_C --report \"${CMAKE_BINARY_DIR}/../bundle.json\" ${_args}
      RESULT_VARIABLE _tb_rc)
    if(NOT _tb_rc EQUAL 0)
      message(FATAL_ERROR \"tritonbuild: making the wheel self-contained failed (see above)\")
    endif()" COMPONENT ${TRITONBUILD_INSTALL_COMPONENT})
endfunction()

cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _tritonbuild_finish)
