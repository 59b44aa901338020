# find_package(ThreefishGen) of an installed threefish-gen: point CMake here with
#   cmake -DThreefishGen_DIR="$(threefish-gen --cmakedir)" ...
# then threefish_gen_add_library() is defined (ThreefishGen.cmake, next to this file).  Unless
# THREEFISH_GEN_COMMAND is set, the generator is the threefish-gen installed with this folder
# (<prefix>/bin/threefish-gen of the venv or prefix whose site-packages holds it) where there is
# one, else the threefish-gen on PATH, else "python3 -m threefish_gen".
include("${CMAKE_CURRENT_LIST_DIR}/ThreefishGen.cmake")
if(NOT THREEFISH_GEN_COMMAND)
  # <prefix>/lib/pythonX.Y/site-packages/threefish_gen/share/cmake -> <prefix>
  get_filename_component(_tfg_prefix "${CMAKE_CURRENT_LIST_DIR}/../../../../../.." ABSOLUTE)
  if(EXISTS "${_tfg_prefix}/bin/threefish-gen")
    set(THREEFISH_GEN_COMMAND "${_tfg_prefix}/bin/threefish-gen")
  endif()
endif()
set(ThreefishGen_FOUND TRUE)
