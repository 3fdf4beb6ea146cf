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
target_include_directories(nasa_train PUBLIC ${CMAKE_CURRENT_LIST_DIR}/include)
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
    PASS_REGULAR_EXPRESSION "\"val_accuracy_float\".*\"complete\": true.*\"correct\".*already holds a supernet or training run.*exit=1")
  # --data (docs/data.md): a 32x32x3 spec trained and searched on a generated CIFAR-10
  # directory, the validation split a seeded quarter of its training split; the search's output
  # is the same for the same seed; a split that leaves no training images is named
  add_test(NAME cli_train_search_cifar
    COMMAND sh -c "rm -rf \"$1\" && mkdir -p \"$1\" && python3 \"$3\" spec32 \"$2\" \"$1/s.json\" && python3 \"$3\" cifar10 \"$1/c\" 96 && \"$0\" train --supernet \"$1/s.json\" --data \"$1/c\" --val-split 0.25 --batch 32 --epochs 1 --threads 1 --eval-candidates 1 --out \"$1/t\" --json && for r in a b; do \"$0\" search --supernet \"$1/t\" --data \"$1/c\" --val-split 0.25 --val-images 24 --calib 8 --population 4 --generations 1 --out \"$1/$r\" >/dev/null || exit 1; done && cmp \"$1/a/result.json\" \"$1/b/result.json\" && echo IDENTICAL && \"$0\" train --supernet \"$1/s.json\" --data \"$1/c\" --val-split 96 --out \"$1/t2\" 2>&1; echo exit=$? && test ! -e \"$1/t2\" && echo NOTHING-WRITTEN"
            $<TARGET_FILE:nasa> ${CMAKE_BINARY_DIR}/cli_train_search_cifar
            ${CMAKE_SOURCE_DIR}/docs/spaces/fmnist-mb.json ${CMAKE_SOURCE_DIR}/sw/tools/make_data_fixture.py)
  set_tests_properties(cli_train_search_cifar PROPERTIES LABELS "unit;cli"
    PASS_REGULAR_EXPRESSION "\"complete\": true.*IDENTICAL\nnasa: error: --val-split 96: the training split holds 96 images[^\n]*\nexit=1\nNOTHING-WRITTEN")
  # `nasa run --data` (docs/data.md) on a generated CIFAR-10 directory and on a generated PNG
  # folder, a 32x32x3 spec: each completes with the RTL cross-check and records its data; a folder
  # with an image of another size stops before anything is written
  set(_run_data --epochs 1 --batch 32 --finetune-epochs 1 --population 4 --generations 1 --topk 2
      --mutations 2 --crossovers 2 --val-split 0.25 --val-images 8 --calib 8 --test-images 8
      --rtl-images 2 --threads 1)
  string(JOIN " " _run_data ${_run_data})
  add_test(NAME cli_run_data
    COMMAND sh -c "rm -rf \"$1\" && mkdir -p \"$1\" && python3 \"$3\" spec32 \"$2\" \"$1/s.json\" && for k in cifar10 folder; do python3 \"$3\" $k \"$1/$k\" 64 && \"$0\" run --supernet \"$1/s.json\" --data \"$1/$k\" --runs-dir \"$1/runs\" --name $k ${_run_data} > \"$1/$k.out\" 2>&1 || { cat \"$1/$k.out\"; exit 1; }; python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))[\"data\"]; print(d[\"format\"], d[\"classes\"][:2], d[\"train_images\"], d[\"val_split_images\"], d[\"shape\"])' \"$1/runs/$k/result.json\" && grep -o 'logits and cycles identical' \"$1/$k.out\"; done && python3 -c 'import struct, sys, zlib; open(sys.argv[1], \"wb\").write(b\"\\x89PNG\\r\\n\\x1a\\n\")' \"$1/folder/train/c1/bad.png\" && \"$0\" run --supernet \"$1/s.json\" --data \"$1/folder\" --runs-dir \"$1/runs\" --name bad ${_run_data} 2>&1; echo exit=$? && test ! -e \"$1/runs/bad\" && echo NOTHING-WRITTEN"
            $<TARGET_FILE:nasa> ${CMAKE_BINARY_DIR}/cli_run_data
            ${CMAKE_SOURCE_DIR}/docs/spaces/fmnist-mb.json ${CMAKE_SOURCE_DIR}/sw/tools/make_data_fixture.py)
  set_tests_properties(cli_run_data PROPERTIES LABELS "cli" TIMEOUT 900
    PASS_REGULAR_EXPRESSION "cifar10 \\['class0', 'class1'\\] 48 16 \\[32, 32, 3\\]\nlogits and cycles identical\nfolder \\['c0', 'c1'\\] 48 16 \\[32, 32, 3\\]\nlogits and cycles identical\nrun: preset 'default': no MAC limit \\(the smallest candidate of 'fmnist-mb' has [0-9]+ MACs[^\n]*\nnasa: error: [^\n]*bad.png: unreadable PNG[^\n]*\nexit=1\nNOTHING-WRITTEN")
  add_test(NAME cli_train_corrupt_checkpoint
    COMMAND sh -c "rm -rf \"$1\" && \"$0\" train --out \"$1\" ${_tiny} >/dev/null 2>&1 && printf garbage > \"$1/checkpoint.pt\" && \"$0\" train --out \"$1\" ${_tiny} --resume 2>&1; echo exit=$?"
            $<TARGET_FILE:nasa> ${CMAKE_BINARY_DIR}/cli_train_corrupt_checkpoint)
  set_tests_properties(cli_train_corrupt_checkpoint PROPERTIES LABELS "unit;cli"
    PASS_REGULAR_EXPRESSION "nasa: error: checkpoint '[^\n]*checkpoint.pt' is corrupt.*exit=1")

  # `nasa run` end to end on a tiny budget (the default job is `make run`): two runs in separate
  # run trees give byte-identical result.json; a second run reuses the trained supernet; a taken
  # --name, an impossible constraint, a corrupt checkpoint and a truncated weights file each stop
  # with a clear error and exit 1, and never touch an earlier run's files.
  set(_run --epochs 1 --train-images 256 --batch 64 --finetune-epochs 1 --population 6
      --generations 2 --topk 3 --mutations 3 --crossovers 3 --val-images 40 --calib 8
      --test-images 60 --rtl-images 4 --threads 1 --finalists 2 --finalist-images 100
      --recal-images 32)
  set(_run_args ${_run})  # (as a list: one argument each)
  string(JOIN " " _run ${_run})
  add_test(NAME cli_run_reproducible
    COMMAND sh -c "rm -rf \"$1\" && mkdir -p \"$1\" && for t in a b; do \"$0\" run --runs-dir \"$1/$t\" --name r ${_run} > \"$1/$t.out\" 2>&1 || { cat \"$1/$t.out\"; exit 1; }; done && cmp \"$1/a/r/result.json\" \"$1/b/r/result.json\" && echo IDENTICAL && \"$0\" run --runs-dir \"$1/a\" --name r2 ${_run} 2>&1 | grep -o 'train: reused' && grep -o '\"test_accuracy_int8\"' \"$1/a/r/result.json\" | head -1 && grep -o '\"max_macs\": 1500000' \"$1/a/r/result.json\" | head -1 && grep -o '\"preset\": \"default\"' \"$1/a/r/result.json\" && grep -o '\"logits_identical\": true' \"$1/a/r/result.json\" && ls \"$1/a/r\" && \"$0\" export --supernet \"$1/a/r/final/model\" --out \"$1/final.onnx\" --quiet"
            $<TARGET_FILE:nasa> ${CMAKE_BINARY_DIR}/cli_run_reproducible)
  set_tests_properties(cli_run_reproducible PROPERTIES LABELS "unit;cli" TIMEOUT 900
    PASS_REGULAR_EXPRESSION "IDENTICAL.*train: reused.*test_accuracy_int8.*max_macs\": 1500000\n\"preset\": \"default\".*logits_identical\": true.*final.*pareto.svg.*report.md.*result.json.*search.*timeline.svg.*timing.json\nwrote [^\n]*final.onnx [^\n]*float32 \\(BatchNorm folded\\); input 'input' float32 \\[N, 1, 28, 28\\] = pixel / 255 \\(normalized inside: mean 0.28")
  # --supernet naming a trained (here: initialized) supernet directory is searched as it is:
  # no training stage, result.json records the directory and its weights' SHA-256
  add_test(NAME cli_run_given_supernet
    COMMAND sh -c "rm -rf \"$1\" && \"$0\" init --seed 3 --out \"$1/net\" --quiet >/dev/null && \"$0\" run --supernet \"$1/net\" --runs-dir \"$1/runs\" --name g ${_run} 2>&1 >/dev/null | grep -E 'searching the trained supernet|^train: (none|supernet)' && sha256sum \"$1/net/weights.safetensors\" | cut -c1-64 > \"$1/sum\" && grep -c \"$(cat \"$1/sum\")\" \"$1/runs/g/result.json\" && test ! -e \"$1/runs/supernets\" && echo NO TRAINING"
            $<TARGET_FILE:nasa> ${CMAKE_BINARY_DIR}/cli_run_given_supernet)
  set_tests_properties(cli_run_given_supernet PROPERTIES LABELS "unit;cli" TIMEOUT 900
    PASS_REGULAR_EXPRESSION "run: searching the trained supernet in [^\n]*/net [^\n]*\ntrain: none, the supernet is the trained one in [^\n]*/net\n1\nNO TRAINING")
  nasa_cli_error_test(cli_run_name_taken
    "rm -rf $1 && mkdir -p $1/runs/x && echo keep > $1/runs/x/result.json && $0 run --runs-dir $1/runs --name x ${_run}; st=$?; cat $1/runs/x/result.json; (exit $st)"
    "nasa: error: run directory '[^\n]*runs/x' already exists[^\n]*never overwritten.*keep.*exit=1")
  # --preset (docs/nas-job.md "Presets"): an unknown name is an error before any work; a preset's
  # MAC limit below a space's smallest candidate is not applied, and the job says so
  nasa_cli_error_test(cli_run_preset
    "rm -rf $1 && $0 run --runs-dir $1/runs --preset bogus ${_run}; echo exit=$?; $0 run --supernet $2 --runs-dir $1/runs --preset long --max-cycles 10 ${_run}; st=$?; ls $1/runs 2>&1; (exit $st)"
    "^nasa: error: --preset 'bogus': unknown \\(available: default, long\\)\nexit=1\nrun: preset 'long': no MAC limit \\(the smallest candidate of 'fmnist-mb' has [0-9]+ MACs, more than the preset's 1000000; --max-macs sets one\\)\nnasa: error: constraint impossible: --max-cycles 10.*No such file.*exit=1")
  nasa_cli_error_test(cli_run_impossible_constraint
    "rm -rf $1 && $0 run --runs-dir $1/runs --max-cycles 10 --max-macs 0 ${_run}; st=$?; ls $1/runs 2>&1; (exit $st)"
    "nasa: error: constraint impossible: --max-cycles 10[^\n]*.*No such file.*exit=1")
  # preflight (docs/cli.md "Preflight"): a spec with an op the configuration cannot run fails
  # before any training, naming the spec's layer and choice, and leaves no run directory
  add_test(NAME cli_run_preflight
    COMMAND sh -c "rm -rf \"$1\" && \"$0\" run --supernet \"$2\" --runs-dir \"$1/runs\" 2>&1; echo exit=$?; test -e \"$1/runs\" && echo LEFT || echo NOTHING LEFT"
            $<TARGET_FILE:nasa> ${CMAKE_BINARY_DIR}/cli_run_preflight
            ${CMAKE_SOURCE_DIR}/tb/specs/conv_k7_too_wide.json)
  set_tests_properties(cli_run_preflight PROPERTIES LABELS "unit;cli"
    PASS_REGULAR_EXPRESSION "^nasa: error: supernet 'conv-k7-too-wide' cannot run on config 'sim' \\(1 problem\\):\n  layers\\[1\\]\\.choices\\[1\\] 'conv_k7': its conv \\(Conv 7x7, 14x14x192 -> 32 channels\\): its reduction k\\*k\\*Cin = 9408 exceeds KredMax 8192, config 'sim'\nexit=1\nNOTHING LEFT\n$")
  # (the second run fails in its first stage: its directory goes, the first run's stays)
  nasa_cli_error_test(cli_run_corrupt_checkpoint
    "rm -rf $1 && $0 run --runs-dir $1/runs ${_run} >/dev/null 2>&1 && d=$(ls -d $1/runs/supernets/*) && rm $d/trained.json && printf garbage > $d/checkpoint.pt && $0 run --runs-dir $1/runs ${_run}; st=$?; echo RUNS $(ls $1/runs); (exit $st)"
    "nasa: error: checkpoint '[^\n]*checkpoint.pt' is corrupt.*\nRUNS [a-z0-9-]+-seed[0-9]+ supernets\nexit=1")
  nasa_cli_error_test(cli_run_weights_mismatch
    "rm -rf $1 && $0 run --runs-dir $1/runs ${_run} >/dev/null 2>&1 && d=$(ls -d $1/runs/supernets/*) && sed 's/\"channels\": 128/\"channels\": 64/' $d/supernet.json > $d/s && mv $d/s $d/supernet.json && $0 run --runs-dir $1/runs ${_run}"
    "nasa: error: [^\n]*weights.safetensors[^\n]*head[^\n]*expected.*exit=1")

  # ONNX export (docs/export.md): a supernet trained here, two candidates exported float and
  # --int8, run by onnxruntime-node (npm, --ignore-scripts, CPU) on 256 test images against our
  # float evaluator and our int8 pipeline (sw/tools/check_onnx.py)
  add_test(NAME onnx_export_ort
    COMMAND python3 ${CMAKE_SOURCE_DIR}/sw/tools/check_onnx.py $<TARGET_FILE:nasa>
            $<TARGET_FILE:onnx_reference> ${CMAKE_BINARY_DIR}/onnx_export_ort
            ${CMAKE_BINARY_DIR}/npm)
  set_tests_properties(onnx_export_ort PROPERTIES LABELS "cli;onnx" TIMEOUT 900
    PASS_REGULAR_EXPRESSION "ONNX EXPORT OK")

  # Crash safety (docs/reliability.md): `nasa run` killed with SIGKILL at 20 random moments
  # spread over the job leaves no truncated file, and each rerun with --resume gives a
  # result.json byte-identical to an uninterrupted run's; Ctrl-C stops it cleanly (exit 130).
  add_test(NAME cli_run_kill_resume
    COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/../tools/kill_resume.py $<TARGET_FILE:nasa>
            ${CMAKE_BINARY_DIR}/cli_run_kill_resume --trials 20 -- ${_run_args})
  set_tests_properties(cli_run_kill_resume PROPERTIES LABELS "unit;cli;crash" TIMEOUT 1800
    COST 300 PASS_REGULAR_EXPRESSION "20 of 20 kill-and-rerun trials identical; SIGINT ok")
  # --resume: needs --name; starts a run killed before its run.json was written (kill_resume
  # seed 81703); refuses other settings (naming the first that differs); leaves a complete run
  # as it is.
  nasa_cli_error_test(cli_run_resume_checks
    "rm -rf $1 && $0 run --runs-dir $1/runs --resume ${_run}; mkdir -p $1/runs/r && printf '{\\\"se' > $1/runs/r/run.json.tmp.99 && $0 run --runs-dir $1/runs --name r --resume ${_run} >/dev/null 2>&1 && ls $1/runs/r | grep -c tmp; $0 run --runs-dir $1/runs --name r --resume ${_run} && $0 run --runs-dir $1/runs --name r --resume ${_run} --population 7"
    "nasa: error: --resume needs --name.*\n0\n.*run '[^\n]*runs/r' is already complete; nothing to resume.*nasa: error: --resume: run '[^\n]*runs/r' was started with other settings \\(search.population: 6 vs 7 now\\).*exit=1")
endif()

# tb/train_*.cpp: GoogleTest benches of the training library.
file(GLOB NASA_TRAIN_TESTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tb/train_*.cpp)
foreach(_src IN LISTS NASA_TRAIN_TESTS)
  nasa_gtest(${_src} unit 600 nasa_train nasa_core)
endforeach()

# Data-parallel training (docs/mpi.md): a step's gradients summed over 2 ranks equal one
# process's gradients of the same paths and shares (tb/mpi_train_grads.cpp).
if(NASA_WITH_MPI AND MPIEXEC_EXECUTABLE)
  add_executable(mpi_train_grads ${CMAKE_SOURCE_DIR}/tb/mpi_train_grads.cpp)
  target_link_libraries(mpi_train_grads PRIVATE nasa_train nasa_core)
  nasa_project_target(mpi_train_grads)
  add_test(NAME mpi_train_grads
    COMMAND ${CMAKE_COMMAND} -E env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
            OMPI_MCA_btl_vader_single_copy_mechanism=none
            ${MPIEXEC_EXECUTABLE} -np 2 --oversubscribe --bind-to none $<TARGET_FILE:mpi_train_grads>)
  set_tests_properties(mpi_train_grads PROPERTIES LABELS "cli;mpi" TIMEOUT 300
    PASS_REGULAR_EXPRESSION "MPI GRADIENTS OK" RUN_SERIAL TRUE)
endif()
