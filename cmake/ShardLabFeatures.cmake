# Feature detection: one line per feature at configure time.
# AUTO quietly does without what is missing; ON fails loudly.

set(_shardlab_feature_lines "")

function(shardlab_feature name value found detail)
  if(value STREQUAL "OFF")
    set(mark "✗ (off)")
    set(enabled FALSE)
  elseif(found)
    set(mark "✓")
    set(enabled TRUE)
  elseif(value STREQUAL "ON")
    message(FATAL_ERROR "SHARDLAB_WITH_${name}=ON but ${detail}")
  else()
    set(mark "✗")
    set(enabled FALSE)
  endif()
  set(SHARDLAB_HAVE_${name} ${enabled} PARENT_SCOPE)
  set(_shardlab_feature_lines "${_shardlab_feature_lines}  ${mark} ${name}: ${detail}\n" PARENT_SCOPE)
endfunction()

# CUDA: the toolkit at /usr/local/cuda (a GPU is not needed to build).
include(CheckLanguage)
set(_cuda_found FALSE)
if(NOT SHARDLAB_WITH_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # Default architectures: A100 (80), A10/3090 (86), L4/4090 (89), H100 (90).
    # Each adds compile time; pass -DCMAKE_CUDA_ARCHITECTURES=90 for one.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
      set(CMAKE_CUDA_ARCHITECTURES 80 86 89 90)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit QUIET)
    if(CUDAToolkit_FOUND AND TARGET CUDA::cudart AND TARGET CUDA::cublas)
      set(_cuda_found TRUE)
    endif()
  endif()
endif()
shardlab_feature(CUDA "${SHARDLAB_WITH_CUDA}" ${_cuda_found}
  "nvcc ${CMAKE_CUDA_COMPILER}, cudart and cuBLAS (archs ${CMAKE_CUDA_ARCHITECTURES}; a GPU is needed only to run)")

set(_nccl_found FALSE)
find_path(SHARDLAB_NCCL_INCLUDE nccl.h HINTS /usr/local/cuda/include ENV NCCL_HOME PATH_SUFFIXES include)
find_library(SHARDLAB_NCCL_LIB nccl HINTS /usr/local/cuda/lib64 ENV NCCL_HOME PATH_SUFFIXES lib lib64)
if(SHARDLAB_NCCL_INCLUDE AND SHARDLAB_NCCL_LIB AND _cuda_found)
  set(_nccl_found TRUE)
endif()
shardlab_feature(NCCL "${SHARDLAB_WITH_NCCL}" ${_nccl_found} "nccl.h and libnccl (${SHARDLAB_NCCL_LIB})")

set(_mpi_found FALSE)
if(NOT SHARDLAB_WITH_MPI STREQUAL "OFF")
  find_package(MPI QUIET COMPONENTS CXX)
  if(MPI_CXX_FOUND)
    set(_mpi_found TRUE)
  endif()
endif()
shardlab_feature(MPI "${SHARDLAB_WITH_MPI}" ${_mpi_found} "MPI (libopenmpi-dev, mpirun): the mpi backend")

# GUI: Debian's libimgui-dev ships headers, libimgui.a (with the GLFW and
# OpenGL3 backends) and a pkg-config file, but no CMake config: wrap it.
set(_gui_found FALSE)
set(_gui_detail "Dear ImGui (libimgui-dev, libstb-dev), GLFW (libglfw3-dev), OpenGL")
if(NOT SHARDLAB_WITH_GUI STREQUAL "OFF")
  find_path(SHARDLAB_IMGUI_INCLUDE imgui.h PATH_SUFFIXES imgui)
  find_library(SHARDLAB_IMGUI_LIB NAMES libimgui.a imgui)
  find_path(SHARDLAB_STB_INCLUDE stb_image_write.h PATH_SUFFIXES stb)
  find_library(SHARDLAB_STB_LIB stb)
  find_package(glfw3 QUIET)
  set(OpenGL_GL_PREFERENCE GLVND)
  find_package(OpenGL QUIET)
  if(SHARDLAB_IMGUI_INCLUDE AND SHARDLAB_IMGUI_LIB AND SHARDLAB_STB_INCLUDE AND SHARDLAB_STB_LIB
     AND glfw3_FOUND AND OpenGL_FOUND)
    set(_gui_found TRUE)
    add_library(shardlab::imgui INTERFACE IMPORTED)
    target_include_directories(shardlab::imgui INTERFACE ${SHARDLAB_IMGUI_INCLUDE}
                               ${SHARDLAB_IMGUI_INCLUDE}/backends ${SHARDLAB_STB_INCLUDE})
    target_link_libraries(shardlab::imgui INTERFACE ${SHARDLAB_IMGUI_LIB} ${SHARDLAB_STB_LIB}
                          ${CMAKE_DL_LIBS})
  endif()
endif()
shardlab_feature(GUI "${SHARDLAB_WITH_GUI}" ${_gui_found} "${_gui_detail}")

function(shardlab_print_features)
  message(STATUS "ShardLab features:\n${_shardlab_feature_lines}")
endfunction()

# Warnings for our own targets.
function(shardlab_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wno-unused-parameter)
endfunction()
