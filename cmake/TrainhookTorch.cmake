# trainhook_find_torch()
#
# Finds LibTorch and sets TRAINHOOK_TORCH_LIBRARIES, what the core links.
#
# Two LibTorch builds are supported (README, "LibTorch 2.x"):
#   - Debian's libtorch-dev (1.13, CPU only): the default, found in the system paths;
#     TRAINHOOK_TORCH_LIBRARIES is its TORCH_LIBRARIES, as before.
#   - the LibTorch inside PyTorch's PyPI wheel (2.x, a CUDA build), installed by
#     `scripts/install-deps --torch pypi` and passed as
#     -DCMAKE_PREFIX_PATH=<site-packages>/torch. Its `torch` target pulls in
#     libtorch_cuda, which needs cuDNN, NCCL, cuSPARSELt, ... at run time; a CPU-only
#     build links libtorch_cpu and libc10 alone (TRAINHOOK_TORCH_CUDA=OFF, the
#     default), which need only libcudart and libcupti (the CUDA toolkit's).
#     Configuring needs the CUDA toolkit either way: the wheel's Caffe2Config looks
#     for nvcc and the CUDA headers. TRAINHOOK_TORCH_CUDA=ON links `torch` whole.

# Gives torch_cpu what the wheel's TorchConfig puts on the `torch` target only
# (the C++ API include folder, the C++ standard, the ABI flag), so torch_cpu can
# stand in for `torch`. Called again by the installed package (TrainhookConfig.cmake).
function(trainhook_torch_cpu_only_targets)
  set_property(TARGET torch_cpu APPEND PROPERTY INTERFACE_INCLUDE_DIRECTORIES ${TORCH_INCLUDE_DIRS})
  # torch_cpu_library forwards torch_cpu's include folders and options, not its
  # compile features (2.x needs C++20): set them on both.
  get_target_property(_features torch INTERFACE_COMPILE_FEATURES)
  if(_features)
    set_property(TARGET torch_cpu torch_cpu_library APPEND PROPERTY INTERFACE_COMPILE_FEATURES ${_features})
  endif()
  get_target_property(_options torch INTERFACE_COMPILE_OPTIONS)
  if(_options)
    set_property(TARGET torch_cpu APPEND PROPERTY INTERFACE_COMPILE_OPTIONS ${_options})
  endif()
endfunction()

# PyTorch's wheel ships fmt's headers (fmt 12 in 2.15) in its include folder, which
# comes before /usr/include: spdlog (Debian's, built against the system fmt 9)
# would then compile against the wrong fmt. A folder holding only a link to the
# system's fmt, put before LibTorch's, keeps <fmt/...> the system's; LibTorch's
# public headers that the core includes do not use fmt.
function(trainhook_torch_fmt_shim)
  if(NOT EXISTS "${TORCH_INSTALL_PREFIX}/include/fmt" OR NOT TARGET fmt::fmt)
    return()
  endif()
  get_target_property(_fmt_dirs fmt::fmt INTERFACE_INCLUDE_DIRECTORIES)
  set(_fmt_dir "")
  foreach(_d IN LISTS _fmt_dirs)
    if(EXISTS "${_d}/fmt/core.h")
      set(_fmt_dir "${_d}/fmt")
      break()
    endif()
  endforeach()
  get_filename_component(_torch_fmt "${TORCH_INSTALL_PREFIX}/include/fmt" REALPATH)
  if(_fmt_dir AND EXISTS "${_fmt_dir}")
    get_filename_component(_fmt_real "${_fmt_dir}" REALPATH)
    if(_fmt_real STREQUAL _torch_fmt)
      return()  # Debian's LibTorch: its include folder is the system's
    endif()
  endif()
  if(NOT _fmt_dir)
    message(FATAL_ERROR "LibTorch at ${TORCH_INSTALL_PREFIX} ships its own fmt headers, and the system fmt "
      "that spdlog uses was not found (fmt::fmt include folders: ${_fmt_dirs})")
  endif()
  set(_shim "${CMAKE_BINARY_DIR}/trainhook-fmt-shim")
  file(MAKE_DIRECTORY "${_shim}")
  file(CREATE_LINK "${_fmt_dir}" "${_shim}/fmt" SYMBOLIC)
  foreach(_t torch_cpu torch)
    if(TARGET ${_t})
      get_target_property(_dirs ${_t} INTERFACE_INCLUDE_DIRECTORIES)
      if(NOT _dirs)
        set(_dirs "")
      endif()
      set_property(TARGET ${_t} PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${_shim}" ${_dirs})
    endif()
  endforeach()
endfunction()

# A CUDA build against the wheel: libtorch_cuda.so finds its CUDA libraries (the
# nvidia-* packages of `install-deps --torch pypi-cuda`, site-packages/nvidia/*/lib)
# through its own RUNPATH, but the link searches the `-rpath` CMake gives first,
# where the CUDA toolkit's older NCCL would be taken (undefined ncclSignal, ...).
# The wheel's folders go first, for the link (-rpath-link) and at run time (-rpath).
function(trainhook_torch_wheel_cuda_libraries)
  if(NOT TARGET torch_cuda)
    return()
  endif()
  file(GLOB _dirs LIST_DIRECTORIES true "${TORCH_INSTALL_PREFIX}/../nvidia/*/lib")
  if(NOT _dirs)
    return()
  endif()
  list(JOIN _dirs ":" _path)
  set_property(TARGET torch APPEND PROPERTY INTERFACE_LINK_OPTIONS "LINKER:-rpath-link,${_path}"
                                                                   "LINKER:-rpath,${_path}")
endfunction()

macro(trainhook_find_torch)
  option(TRAINHOOK_TORCH_CUDA "Link LibTorch's CUDA libraries (torch_cuda) when the LibTorch found has them" OFF)
  find_package(Torch REQUIRED)
  trainhook_torch_fmt_shim()
  set(TRAINHOOK_TORCH_CPU_ONLY OFF)
  if(TARGET torch_cuda AND NOT TRAINHOOK_TORCH_CUDA)
    # torch_cpu_library links libtorch_cpu with --no-as-needed: its static
    # initializers register the operators, and nothing may drop it.
    trainhook_torch_cpu_only_targets()
    set(TRAINHOOK_TORCH_LIBRARIES torch_cpu_library c10)
    set(TRAINHOOK_TORCH_CPU_ONLY ON)
  elseif(TRAINHOOK_TORCH_CUDA AND NOT TARGET torch_cuda)
    message(FATAL_ERROR "TRAINHOOK_TORCH_CUDA=ON, but the LibTorch found (${TORCH_INSTALL_PREFIX}, "
      "version ${Torch_VERSION}) has no CUDA libraries: configure with "
      "-DCMAKE_PREFIX_PATH=<site-packages>/torch of a CUDA wheel (scripts/install-deps --torch pypi), "
      "or without TRAINHOOK_TORCH_CUDA")
  else()
    set(TRAINHOOK_TORCH_LIBRARIES ${TORCH_LIBRARIES})
    trainhook_torch_wheel_cuda_libraries()
  endif()
  if(TRAINHOOK_TORCH_CPU_ONLY)
    message(STATUS "Trainhook: LibTorch ${Torch_VERSION} at ${TORCH_INSTALL_PREFIX} (CPU-only link: torch_cpu, c10)")
  else()
    message(STATUS "Trainhook: LibTorch ${Torch_VERSION} at ${TORCH_INSTALL_PREFIX}")
  endif()
endmacro()
