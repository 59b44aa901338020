# ThreefishGen.cmake -- render a Threefish backend with threefish-gen and add it as a library.
#
#   find_package(ThreefishGen REQUIRED)          # cmake -DThreefishGen_DIR="$(threefish-gen --cmakedir)"
#   (or include(path/to/ThreefishGen.cmake); threefish-gen --cmakedir prints the folder)
#   threefish_gen_add_library(tf512 TARGET c ISA auto SIZE 512 CONSTANTS 1.3 PREFIX tf_)
#   target_link_libraries(app PRIVATE tf512)     # #include "tf_threefish512_csimd.h"
#
# Arguments (all but NAME optional):
#   TARGET     c | c-simd | nasm-x64 | nasm-x86            (default c; c with ISA is SIMD C)
#   ISA        sse2 | avx | avx2 | avx512 | neon | auto    (SIMD C; nasm-x64: gpr | sse2 | avx2 | avx512)
#   SIZE       256 | 512 | 1024                            (default 512)
#   CONSTANTS  1.1 | 1.2 | 1.3                             (default 1.3)
#   PREFIX     symbol prefix                               (default: <NAME>_)
#   OPTIONS    more render options, e.g. OPTIONS --keys table --interleave 2
#
# The files are rendered at configure time into ${CMAKE_CURRENT_BINARY_DIR}/threefish_gen/<NAME>/ (and
# again whenever the arguments change); the library's include directory is that folder.  nasm targets
# need NASM: the call enables CMake's ASM_NASM language.  THREEFISH_GEN_COMMAND names the
# generator (a list; default: the threefish-gen on PATH, else "python3 -m threefish_gen").  C backends
# build with the configuration's flags (the stack wipe of the generated C covers every level, -O0
# included).
include_guard(GLOBAL)

set(THREEFISH_GEN_COMMAND "" CACHE STRING "threefish-gen command line (a ;-list), empty: find it")

function(_threefish_gen_command out)
  if(THREEFISH_GEN_COMMAND)
    set(${out} "${THREEFISH_GEN_COMMAND}" PARENT_SCOPE)
    return()
  endif()
  find_program(_TFG_EXE threefish-gen)
  if(_TFG_EXE)
    set(${out} "${_TFG_EXE}" PARENT_SCOPE)
    return()
  endif()
  find_package(Python3 3.9 COMPONENTS Interpreter REQUIRED)
  set(${out} "${Python3_EXECUTABLE};-m;threefish_gen" PARENT_SCOPE)
endfunction()

# A macro, so that enable_language(ASM_NASM) runs in the caller's directory scope (CMake loses a
# language enabled inside a function); the work is done by the function below.
macro(threefish_gen_add_library name)
  cmake_parse_arguments(_TFG_M "" "TARGET" "" ${ARGN})
  if(_TFG_M_TARGET MATCHES "^nasm-" AND NOT CMAKE_ASM_NASM_COMPILER_LOADED)
    enable_language(ASM_NASM)
  endif()
  _threefish_gen_add_library(${name} ${ARGN})
endmacro()

function(_threefish_gen_add_library name)
  cmake_parse_arguments(TFG "" "TARGET;ISA;SIZE;CONSTANTS;PREFIX" "OPTIONS" ${ARGN})
  if(TFG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "threefish_gen_add_library(${name}): unknown arguments ${TFG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TFG_TARGET)
    set(TFG_TARGET c)
  endif()
  if(NOT TFG_SIZE)
    set(TFG_SIZE 512)
  endif()
  if(NOT TFG_CONSTANTS)
    set(TFG_CONSTANTS 1.3)
  endif()
  if(NOT TFG_PREFIX)
    set(TFG_PREFIX "${name}_")
  endif()
  set(args render --target ${TFG_TARGET} --size ${TFG_SIZE} --constants ${TFG_CONSTANTS} --prefix ${TFG_PREFIX})
  if(TFG_ISA)
    list(APPEND args --isa ${TFG_ISA})
  endif()
  list(APPEND args ${TFG_OPTIONS})
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/threefish_gen/${name}")
  _threefish_gen_command(cmd)
  string(SHA256 stamp "${cmd};${args}")
  if(NOT EXISTS "${dir}/.stamp-${stamp}")
    file(REMOVE_RECURSE "${dir}")
    execute_process(COMMAND ${cmd} ${args} --out "${dir}"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "threefish_gen_add_library(${name}): ${cmd} ${args} failed:\n${err}")
    endif()
    file(TOUCH "${dir}/.stamp-${stamp}")
    message(STATUS "threefish-gen: ${name}: ${TFG_TARGET} ${TFG_ISA} Threefish-${TFG_SIZE} v${TFG_CONSTANTS} in ${dir}")
  endif()
  file(GLOB sources "${dir}/*.c" "${dir}/*.asm")
  file(GLOB headers "${dir}/*.h")
  if(TFG_TARGET MATCHES "^nasm-")
    if(TFG_TARGET STREQUAL "nasm-x86")
      set_source_files_properties(${sources} PROPERTIES COMPILE_OPTIONS "-felf32")
    endif()
  endif()
  add_library(${name} STATIC ${sources} ${headers})
  target_include_directories(${name} PUBLIC "$<BUILD_INTERFACE:${dir}>")
  set_target_properties(${name} PROPERTIES THREEFISH_GEN_DIR "${dir}" POSITION_INDEPENDENT_CODE ON)
endfunction()
