# Supernet training (libtorch): the static library nasa_train, the `nasa train` subcommand and
# the tb/train_*.cpp tests. Included at the end of sw/CMakeLists.txt; without libtorch the rest
# of the project (and `nasa` without `train`) still builds.
find_package(Torch QUIET)
if(NOT Torch_FOUND)
  message(STATUS "libtorch not found: `nasa train` and the train_* tests are not built")
  return()
endif()
message(STATUS "libtorch ${Torch_VERSION}: building nasa_train")

file(GLOB NASA_TRAIN_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
add_library(nasa_train STATIC ${NASA_TRAIN_SOURCES})
# torch stays out of nasa_core: only this library and what links it see its headers.
target_link_libraries(nasa_train PUBLIC nasa_core PRIVATE ${TORCH_LIBRARIES})
nasa_project_target(nasa_train)

if(TARGET nasa)
  target_link_libraries(nasa PRIVATE nasa_train)
  target_compile_definitions(nasa PRIVATE NASA_HAVE_TRAIN=1)

  # `nasa train` on a few images: its output is what `nasa eval` reads; a second run into the
  # same directory is refused; a corrupt checkpoint is named on --resume.
  set(_tiny --train-images 64 --batch 32 --epochs 2 --threads 1 --eval-candidates 1 --eval-images 50)
  string(JOIN " " _tiny ${_tiny})
  add_test(NAME cli_train_then_eval
    COMMAND sh -c "rm -rf \"$1\" && \"$0\" train --out \"$1\" ${_tiny} --json && \"$0\" eval --supernet \"$1\" --arch 3-4-2-5-1-5 --images 4 --calib 4 --json | grep correct && \"$0\" train --out \"$1\" ${_tiny} 2>&1; echo exit=$?"
            $<TARGET_FILE:nasa> ${CMAKE_BINARY_DIR}/cli_train_then_eval)
  set_tests_properties(cli_train_then_eval PROPERTIES LABELS "unit;cli"
    PASS_REGULAR_EXPRESSION "\"val_accuracy\".*\"complete\": true.*\"correct\".*already holds a supernet or training run.*exit=1")
  add_test(NAME cli_train_corrupt_checkpoint
    COMMAND sh -c "rm -rf \"$1\" && \"$0\" train --out \"$1\" ${_tiny} >/dev/null 2>&1 && printf garbage > \"$1/checkpoint.pt\" && \"$0\" train --out \"$1\" ${_tiny} --resume 2>&1; echo exit=$?"
            $<TARGET_FILE:nasa> ${CMAKE_BINARY_DIR}/cli_train_corrupt_checkpoint)
  set_tests_properties(cli_train_corrupt_checkpoint PROPERTIES LABELS "unit;cli"
    PASS_REGULAR_EXPRESSION "nasa: error: checkpoint '[^\n]*checkpoint.pt' is corrupt.*exit=1")
endif()

# tb/train_*.cpp: GoogleTest benches of the training library.
file(GLOB NASA_TRAIN_TESTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tb/train_*.cpp)
foreach(_src IN LISTS NASA_TRAIN_TESTS)
  nasa_gtest(${_src} unit 600 nasa_train nasa_core)
endforeach()
