# nasa_verilate(): the one way this project turns SystemVerilog into a Verilated C++ model.
#
#   nasa_verilate(<target> PREFIX <C++ class> TOP <top module> SOURCES <.sv files...>
#                 [ARGS <more verilator arguments...>])
#
# Creates the static library <target> holding the generated model (class <PREFIX>, header
# <PREFIX>.h) and links it to nasa_verilated, the Verilator runtime compiled once for all models
# (sim/CMakeLists.txt builds it from the runtime sources the calls collect in the global property
# NASA_VERILATOR_RUNTIME_SOURCES). Every model gets:
#   - FST tracing (TRACE_FST; VM_TRACE=1 VM_TRACE_FST=1 for its users),
#   - --assert: the RTL's SystemVerilog assertions (`ifndef SYNTHESIS blocks) fire in every model,
#   - -O3 -Wno-fatal (lint is synth/lint.sh's job),
#   - --x-initial unique --x-assign unique: registers and memories without a reset, and X
#     values, power up as the context's randReset says (all zeros by default; random from a seed
#     with NASA_X_SEED, nasa::sim::apply_x_seed), so tests can check results do not depend on it,
#   - -O2 for the per-cycle code, -O1 for constructors (after the build type's -O3: they win),
#   - Verilator's headers as system includes for its users (no -Werror on code we do not own).
# Verilator runs when cmake configures, never in the middle of a build: a change to the RTL can
# change the set of generated .cpp files, which only a new configure picks up. So every source is
# a configure dependency and a hash of their contents is on the verilator command line
# (-DNASA_RTL_SHA1=...), which makes verilate() re-run verilator at configure time. Sources are
# passed relative to the calling directory, so the generated C++ carries no absolute path and
# ccache hits across clones. `include files (*.svh) come from rtl/ (-I), hashed the same way.
function(nasa_verilate target)
  cmake_parse_arguments(PARSE_ARGV 1 NV "" "PREFIX;TOP" "SOURCES;ARGS")
  if(NOT NV_PREFIX OR NOT NV_TOP OR NOT NV_SOURCES)
    message(FATAL_ERROR "nasa_verilate(${target}): PREFIX, TOP and SOURCES are required")
  endif()
  if(NV_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "nasa_verilate(${target}): unknown arguments ${NV_UNPARSED_ARGUMENTS}")
  endif()
  set(_rel "")
  set(_hashes "")
  foreach(_f IN LISTS NV_SOURCES)
    get_filename_component(_abs ${_f} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    if(NOT EXISTS ${_abs})
      message(FATAL_ERROR "nasa_verilate(${target}): source ${_f} not found")
    endif()
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_abs})
    file(SHA1 ${_abs} _h)
    string(APPEND _hashes ${_h})
    file(RELATIVE_PATH _r ${CMAKE_CURRENT_SOURCE_DIR} ${_abs})
    list(APPEND _rel ${_r})
  endforeach()
  file(GLOB _svh CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/rtl/*.svh)
  list(SORT _svh)
  foreach(_f IN LISTS _svh)
    file(SHA1 ${_f} _h)
    string(APPEND _hashes ${_h})
  endforeach()
  string(SHA1 _sha1 "${_hashes}")
  file(RELATIVE_PATH _inc_dir ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_SOURCE_DIR}/rtl)

  add_library(${target} STATIC)
  verilate(${target}
    PREFIX ${NV_PREFIX}
    TOP_MODULE ${NV_TOP}
    TRACE_FST
    SOURCES ${_rel}
    VERILATOR_ARGS -O3 --x-assign unique --x-initial unique -Wno-fatal --assert
                   -DNASA_RTL_SHA1=${_sha1} -I${_inc_dir} ${NV_ARGS}
    OPT_FAST -O2
    OPT_SLOW -O1
    OPT_GLOBAL -O2)

  # The runtime sources (verilated.cpp, the FST writer, ...) go to nasa_verilated instead.
  get_target_property(_srcs ${target} SOURCES)
  set(_rt ${_srcs})
  list(FILTER _rt INCLUDE REGEX "^${VERILATOR_ROOT}/include/.*\\.cpp$")
  list(FILTER _srcs EXCLUDE REGEX "^${VERILATOR_ROOT}/include/.*\\.cpp$")
  set_property(TARGET ${target} PROPERTY SOURCES ${_srcs})
  set_property(GLOBAL APPEND PROPERTY NASA_VERILATOR_RUNTIME_SOURCES ${_rt})

  get_target_property(_inc ${target} INTERFACE_INCLUDE_DIRECTORIES)
  set_property(TARGET ${target} APPEND PROPERTY INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${_inc})
  target_compile_definitions(${target} INTERFACE VM_TRACE=1 VM_TRACE_FST=1)
  target_link_libraries(${target} PUBLIC nasa_verilated)
endfunction()
