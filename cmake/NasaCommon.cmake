# What every NASA build shares, the whole tree's and the standalone host library's (`cmake -S sw`):
# C++20, ccache, the host libraries, and the project's warning flags.
# The release version (`nasa --version`, the installed package)
set(NASA_VERSION 0.1.0)
set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)  # for clang-tidy / clangd
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
# Position-independent code everywhere: the RTL models other than the built-in one are plugins
# (sim/CMakeLists.txt) that link the Verilator runtime and the host code they use. Without
# semantic interposition the compiler still inlines and optimizes across a library's own global
# functions as it does for an executable.
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
add_compile_options(-fno-semantic-interposition)

# ccache: CCACHE_BASEDIR makes paths relative, so a fresh clone in another folder (CI) still hits
# the cache filled by a developer build on the same machine.
find_program(CCACHE_PROGRAM ccache)
if(CCACHE_PROGRAM)
  get_filename_component(_nasa_root ${CMAKE_CURRENT_LIST_DIR}/.. ABSOLUTE)
  set(NASA_LAUNCHER env CCACHE_BASEDIR=${_nasa_root} CCACHE_NOHASHDIR=1 ${CCACHE_PROGRAM})
  set(CMAKE_C_COMPILER_LAUNCHER ${NASA_LAUNCHER})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${NASA_LAUNCHER})
  message(STATUS "Using ccache: ${CCACHE_PROGRAM}")
endif()

find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(CLI11 REQUIRED)
find_package(ZLIB REQUIRED)
find_package(PNG REQUIRED)      # image-folder datasets (libpng)
find_package(JPEG REQUIRED)     # image-folder datasets (libjpeg)
find_package(OpenSSL REQUIRED)  # SHA-256 of logits (libcrypto)
find_package(Threads REQUIRED)
find_package(Protobuf REQUIRED)  # ONNX's protobuf definitions (libonnx-dev)
find_package(ONNX REQUIRED)      # `nasa export`: ONNX models written and checked with libonnx

# Sanitizer builds (`make sanitize`, docs/reliability.md): NASA_SANITIZE=address,undefined or
# thread instruments the project's own code (every nasa_project_target) and links the runtime
# into its executables. Verilator-generated models and the system libraries stay as they are,
# so their objects are the ones of the normal build (ccache hits). Any report is fatal.
set(NASA_SANITIZE "" CACHE STRING "sanitizers for the project's code: address,undefined | thread")
set(NASA_SANITIZE_FLAGS "")
if(NASA_SANITIZE)
  set(NASA_SANITIZE_FLAGS -fsanitize=${NASA_SANITIZE} -fno-sanitize-recover=all
                          -fno-omit-frame-pointer -g -O1)
  message(STATUS "Sanitizers: ${NASA_SANITIZE}")
endif()

# Warnings as errors on the project's own code only (never on Verilator-generated code).
function(nasa_project_target target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror ${NASA_SANITIZE_FLAGS})
  if(NASA_SANITIZE)
    get_target_property(_type ${target} TYPE)
    if(_type STREQUAL "EXECUTABLE")
      target_link_options(${target} PRIVATE -fsanitize=${NASA_SANITIZE})
    endif()
  endif()
endfunction()
