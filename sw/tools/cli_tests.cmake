# The CLI's tests (included by sw/CMakeLists.txt once the `nasa` target exists): its JSON
# contract, and a clear error with a non-zero exit on every kind of bad input.
# CLI smoke tests: the JSON contract and a clear error with a non-zero exit on bad input.
if(TARGET nasa)
  add_test(NAME cli_info_json COMMAND nasa info --space fmnist-mb --json)
  set_tests_properties(cli_info_json PROPERTIES LABELS "unit;cli"
                       PASS_REGULAR_EXPRESSION "\"choices_per_layer\": \\[")
  add_test(NAME cli_info_bad_space
           COMMAND sh -c "\"$0\" info --space nope 2>&1; echo exit=$?" $<TARGET_FILE:nasa>)
  set_tests_properties(cli_info_bad_space PROPERTIES LABELS "unit;cli"
                       PASS_REGULAR_EXPRESSION "nasa: error: unknown built-in search space 'nope'.*exit=1")
  add_test(NAME cli_info_bad_file
           COMMAND sh -c "\"$0\" info --supernet /nonexistent/supernet.json 2>&1; echo exit=$?"
                   $<TARGET_FILE:nasa>)
  set_tests_properties(cli_info_bad_file PROPERTIES LABELS "unit;cli"
                       PASS_REGULAR_EXPRESSION "nasa: error: [^\n]*nonexistent.*exit=1")
  # init writes a spec + weights that info reads back; a second init refuses to overwrite.
  set(_init_dir ${CMAKE_BINARY_DIR}/test_init_supernet)
  add_test(NAME cli_init_then_info
           COMMAND sh -c "rm -rf \"$1\" && \"$0\" init --space fmnist-mb --seed 3 --out \"$1\" && \"$0\" info --supernet \"$1\" --json && \"$0\" init --out \"$1\" 2>&1; echo exit=$?"
                   $<TARGET_FILE:nasa> ${_init_dir})
  set_tests_properties(cli_init_then_info PROPERTIES LABELS "unit;cli"
                       PASS_REGULAR_EXPRESSION "\"choices_per_layer\".*already holds a supernet.*exit=1")
  # eval: the RTL and the reference model give the same logits (SHA-256) and correct count.
  set(_eval_dir ${CMAKE_BINARY_DIR}/test_eval_supernet)
  if(NASA_WITH_RTL)  # --backend rtl: the Verilated models (sim/)
    add_test(NAME cli_eval_ref_equals_rtl
             COMMAND sh -c "rm -rf \"$1\" && \"$0\" init --seed 5 --out \"$1\" >/dev/null && a=$(\"$0\" eval --supernet \"$1\" --arch 3-4-2-5-1-5 --images 4 --json | grep -E 'sha256|correct') && b=$(\"$0\" eval --supernet \"$1\" --arch 3-4-2-5-1-5 --images 4 --json --backend rtl | grep -E 'sha256|correct') && echo \"$a\" && test \"$a\" = \"$b\" && echo SAME"
                     $<TARGET_FILE:nasa> ${_eval_dir})
    set_tests_properties(cli_eval_ref_equals_rtl PROPERTIES LABELS "cli;cosim"
                         PASS_REGULAR_EXPRESSION "logits_sha256.*SAME")
  endif()
  add_test(NAME cli_eval_bad_arch
           COMMAND sh -c "\"$0\" init --seed 5 --out \"$1\" --force >/dev/null; \"$0\" eval --supernet \"$1\" --arch 3-4-9 2>&1; echo exit=$?"
                   $<TARGET_FILE:nasa> ${_eval_dir}_bad)
  set_tests_properties(cli_eval_bad_arch PROPERTIES LABELS "unit;cli"
                       PASS_REGULAR_EXPRESSION "nasa: error: .*3-4-9.*exit=1")
  # Bad inputs: each gets a message naming what and where, and exit code 1.
  add_test(NAME cli_eval_truncated_weights
           COMMAND sh -c "\"$0\" init --seed 5 --out \"$1\" --force >/dev/null && head -c 5000 \"$1/weights.safetensors\" > \"$1/w\" && mv \"$1/w\" \"$1/weights.safetensors\" && \"$0\" eval --supernet \"$1\" --arch 0-0-0-0-0-0 2>&1; echo exit=$?"
                   $<TARGET_FILE:nasa> ${_eval_dir}_trunc)
  set_tests_properties(cli_eval_truncated_weights PROPERTIES LABELS "unit;cli"
                       PASS_REGULAR_EXPRESSION "nasa: error: [^\n]*weights.safetensors.*exit=1")
  add_test(NAME cli_eval_corrupt_data
           COMMAND sh -c "\"$0\" init --seed 5 --out \"$1\" --force >/dev/null && printf 'garbage-not-idx' > \"$1/img.idx\" && \"$0\" eval --supernet \"$1\" --arch 0-0-0-0-0-0 --data \"$1/img.idx\" --labels \"$1/img.idx\" --calib 1 2>&1; echo exit=$?"
                   $<TARGET_FILE:nasa> ${_eval_dir}_data)
  set_tests_properties(cli_eval_corrupt_data PROPERTIES LABELS "unit;cli"
                       PASS_REGULAR_EXPRESSION "nasa: error: [^\n]*img.idx.*exit=1")
  add_test(NAME cli_info_bad_spec
           COMMAND sh -c "mkdir -p \"$1\" && sed 's/mb_k7_e3/mb_k4_e3/' \"$2\" > \"$1/supernet.json\" && \"$0\" info --supernet \"$1\" 2>&1; echo exit=$?"
                   $<TARGET_FILE:nasa> ${_eval_dir}_spec ${CMAKE_SOURCE_DIR}/docs/spaces/fmnist-mb.json)
  set_tests_properties(cli_info_bad_spec PROPERTIES LABELS "unit;cli"
                       PASS_REGULAR_EXPRESSION "nasa: error: [^\n]*layers\\[2\\]\\.choices\\[2\\][^\n]*mb_k4_e3.*exit=1")
  # More bad inputs through the CLI: message names the problem, exit code 1.
  function(nasa_cli_error_test name script regex)
    add_test(NAME ${name} COMMAND sh -c "${script} 2>&1; echo exit=$?" $<TARGET_FILE:nasa>
                                          ${CMAKE_BINARY_DIR}/${name}
                                          ${CMAKE_SOURCE_DIR}/docs/spaces/fmnist-mb.json)
    set_tests_properties(${name} PROPERTIES LABELS "unit;cli" PASS_REGULAR_EXPRESSION "${regex}")
  endfunction()
  # `nasa export` (docs/export.md): a supernet of several choices needs --arch; a candidate out
  # of the spec, an existing --out without --force: each an error, exit 1, nothing written; a
  # valid export writes a model the ONNX checker accepts (the ORT comparison: onnx_export_ort)
  nasa_cli_error_test(cli_export_errors
    "rm -rf $1 && $0 init --seed 2 --out $1/n --quiet >/dev/null && $0 export --supernet $1/n --out $1/a.onnx; echo exit=$?; test ! -e $1/a.onnx && echo NOTHING-WRITTEN; $0 export --supernet $1/n --arch 0-9-0-0-0-0 --out $1/a.onnx; echo exit=$?; test ! -e $1/a.onnx && echo NOTHING-WRITTEN; $0 export --supernet $1/n --arch 0-1-2-3-4-5 --out $1/a.onnx --int8 --calib 4 --quiet && $0 export --supernet $1/n --arch 0-1-2-3-4-5 --out $1/a.onnx"
    "nasa: error: --arch: supernet 'fmnist-mb14' has several choices per layer[^\n]*\nexit=1\nNOTHING-WRITTEN\nnasa: error: [^\n]*out of range[^\n]*\nexit=1\nNOTHING-WRITTEN\nwrote [^\n]*a.onnx [^\n]*int8 QDQ[^\n]*\nnasa: error: --out [^\n]*a.onnx: the file exists \\(--force replaces it\\)\nexit=1")
  nasa_cli_error_test(cli_spec_bad_stride
    "mkdir -p $1 && sed '0,/\"stride\": 2/s//\"stride\": 3/' $2 > $1/s.json && $0 info --supernet $1/s.json"
    "nasa: error: [^\n]*s.json: layers\\[[0-9]\\]\\.stride[^\n]*3.*exit=1")
  nasa_cli_error_test(cli_spec_missing_key
    "mkdir -p $1 && sed 's/\"classes\"/\"klasses\"/' $2 > $1/s.json && $0 info --supernet $1/s.json"
    "nasa: error: [^\n]*s.json[^\n]*classes.*exit=1")
  nasa_cli_error_test(cli_weights_shape_mismatch
    "rm -rf $1 && $0 init --seed 2 --out $1 >/dev/null && sed 's/\"channels\": 128/\"channels\": 64/' $1/supernet.json > $1/t && mv $1/t $1/supernet.json && $0 eval --supernet $1 --arch 0-0-0-0-0-0"
    "nasa: error: [^\n]*weights.safetensors[^\n]*head[^\n]*expected.*exit=1")
  nasa_cli_error_test(cli_data_truncated
    "rm -rf $1 && $0 init --seed 2 --out $1 >/dev/null && zcat /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz | head -c 5000 > $1/i.idx && zcat /usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz > $1/l.idx && $0 eval --supernet $1 --arch 0-0-0-0-0-0 --data $1/i.idx --labels $1/l.idx --calib 1"
    "nasa: error: [^\n]*i.idx[^\n]*(truncated|short|need).*exit=1")
  # --data DIR (docs/data.md): a 32x32x3 spec evaluated on a generated CIFAR-10 directory, by the
  # reference model and by the RTL (same logits and correct count)
  if(NASA_WITH_RTL)
    add_test(NAME cli_eval_cifar_ref_equals_rtl
             COMMAND sh -c "rm -rf \"$1\" && mkdir -p \"$1\" && python3 \"$3\" spec32 \"$2\" \"$1/s.json\" && \"$0\" init --supernet \"$1/s.json\" --seed 4 --out \"$1/net\" >/dev/null && python3 \"$3\" cifar10 \"$1/c\" 16 && a=$(\"$0\" eval --supernet \"$1/net\" --arch 1-0-2-0-1-0 --data \"$1/c\" --images 3 --calib 16 --json | grep -E 'sha256|correct|\"images\"') && b=$(\"$0\" eval --supernet \"$1/net\" --arch 1-0-2-0-1-0 --data \"$1/c\" --images 3 --calib 16 --json --backend rtl | grep -E 'sha256|correct|\"images\"') && echo \"$a\" && test \"$a\" = \"$b\" && echo SAME"
                     $<TARGET_FILE:nasa> ${CMAKE_BINARY_DIR}/test_eval_cifar
                     ${CMAKE_SOURCE_DIR}/docs/spaces/fmnist-mb.json
                     ${CMAKE_CURRENT_LIST_DIR}/make_data_fixture.py)
    set_tests_properties(cli_eval_cifar_ref_equals_rtl PROPERTIES LABELS "cli;cosim"
                         PASS_REGULAR_EXPRESSION "\"images\": 3.*logits_sha256.*SAME")
  endif()
  # --data DIR (docs/data.md): a CIFAR-10 directory against a 28x28x1 spec, a truncated batch, an
  # empty class folder
  nasa_cli_error_test(cli_data_shape_mismatch
    "rm -rf $1 && $0 init --seed 2 --out $1 >/dev/null && mkdir -p $1/c && dd if=/dev/zero bs=3073 count=2 of=$1/c/data_batch_1.bin 2>/dev/null && cp $1/c/data_batch_1.bin $1/c/test_batch.bin && $0 eval --supernet $1 --arch 0-0-0-0-0-0 --data $1/c --calib 1"
    "nasa: error: spec '[^']*' expects 28x28x1, the data is 32x32x3[^
]*.*exit=1")
  nasa_cli_error_test(cli_data_truncated_cifar
    "rm -rf $1 && $0 init --seed 2 --out $1 >/dev/null && mkdir -p $1/c && dd if=/dev/zero bs=3000 count=1 of=$1/c/data_batch_1.bin 2>/dev/null && $0 eval --supernet $1 --arch 0-0-0-0-0-0 --data $1/c --calib 1"
    "nasa: error: [^
]*data_batch_1.bin: truncated CIFAR batch.*exit=1")
  nasa_cli_error_test(cli_data_empty_class_folder
    "rm -rf $1 && $0 init --seed 2 --out $1 >/dev/null && mkdir -p $1/f/shirts && $0 eval --supernet $1 --arch 0-0-0-0-0-0 --data $1/f --calib 1"
    "nasa: error: [^
]*shirts: empty class folder.*exit=1")
  nasa_cli_error_test(cli_data_count_mismatch
    "rm -rf $1 && $0 init --seed 2 --out $1 >/dev/null && zcat /usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz > $1/l.idx && $0 eval --supernet $1 --arch 0-0-0-0-0-0 --data /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz --labels $1/l.idx --calib 1"
    "nasa: error: [^\n]*(10000|60000)[^\n]*.*exit=1")

  # The parse contract (docs/cli.md "Errors and exit codes"): every misuse of the command line is
  # one `nasa: error: ...` line naming the command and the option, exit 1, before any work.
  nasa_cli_error_test(cli_misuse_option_did_you_mean
    "$0 search --supernet $1 --out $1/o --generation 2"
    "^nasa: error: search: unknown option '--generation' \\(did you mean '--generations'\\?\\)[^\n]*\nexit=1")
  # option values that name one of a few things get a did-you-mean too
  nasa_cli_error_test(cli_misuse_value_did_you_mean
    "rm -rf $1 && $0 init --seed 1 --out $1 --quiet >/dev/null && $0 info --config up5; $0 eval --supernet $1 --arch 0-0-0-0-0-0 --backend uratt"
    "^nasa: error: unknown hardware configuration 'up5' \\(did you mean 'up5k'\\?\\) \\(valid: [^\n]*\nnasa: error: --backend 'uratt' \\(did you mean 'uart'\\?\\): expected one of [^\n]*\nexit=1")
  nasa_cli_error_test(cli_misuse_command_did_you_mean
    "$0 serach --population 3"
    "^nasa: error: unknown command 'serach' \\(did you mean 'search'\\?\\); the commands are info, init, eval[^\n]*\nexit=1")
  nasa_cli_error_test(cli_misuse_no_command
    "$0" "^nasa: error: a command is required: info, init, eval[^\n]*\nexit=1")
  nasa_cli_error_test(cli_misuse_negative_count
    "$0 search --supernet $1 --out $1/o --population -3"
    "^nasa: error: search: --population: expected an integer in 1\\.\\.1000000, got '-3'[^\n]*\nexit=1")
  nasa_cli_error_test(cli_misuse_negative_images
    "$0 eval --supernet $1 --arch 0 --images -1"
    "^nasa: error: eval: --images: expected an integer in 1\\.\\.1000000, got '-1'[^\n]*\nexit=1")
  nasa_cli_error_test(cli_misuse_probability_not_a_fraction
    "$0 eval --supernet $1 --generate 4 --mode mutate --mut-prob 70000"
    "^nasa: error: eval: --mut-prob: expected a number in \\[0, 1\\], got '70000'[^\n]*\nexit=1")
  nasa_cli_error_test(cli_misuse_not_an_integer
    "$0 search --supernet $1 --out $1/o --topk 2.5"
    "^nasa: error: search: --topk: expected an integer in 1\\.\\.1000000, got '2\\.5'[^\n]*\nexit=1")
  nasa_cli_error_test(cli_misuse_too_large
    "$0 search --supernet $1 --out $1/o --max-macs 99999999999999999999999"
    "^nasa: error: search: --max-macs: expected an integer in 0\\.\\.9223372036854775807[^\n]*\nexit=1")
  nasa_cli_error_test(cli_misuse_stray_argument
    "$0 info extra" "^nasa: error: info: unexpected argument 'extra'[^\n]*\nexit=1")
  nasa_cli_error_test(cli_misuse_missing_required
    "$0 search --supernet $1" "^nasa: error: search: --out is required[^\n]*\nexit=1")
  nasa_cli_error_test(cli_misuse_excluded_options
    "$0 info --space fmnist-mb --supernet $2" "^nasa: error: info: --space excludes --supernet[^\n]*\nexit=1")
  nasa_cli_error_test(cli_misuse_spec_file_without_weights
    "$0 eval --supernet $2 --arch 0-0-0-0-0-0"
    "^nasa: error: supernet '[^\n]*fmnist-mb.json' is a spec file without weights[^\n]*\nexit=1")
  # which ops a configuration runs (docs/cli.md "Preflight")
  add_test(NAME cli_info_config
           COMMAND nasa info --supernet ${CMAKE_SOURCE_DIR}/tb/specs/conv_k7_too_wide.json --config sim --json)
  set_tests_properties(cli_info_config PROPERTIES LABELS "unit;cli"
    PASS_REGULAR_EXPRESSION "\"op\": \"conv_k7\",[^}]*\"problem\": \"its conv \\(Conv 7x7[^\"]*KredMax 8192[^\"]*\",[^}]*\"runs\": false.*\"problems\": \\[[^]]*\"where\": \"layers\\[1\\]\\.choices\\[1\\] 'conv_k7'\"")
  nasa_cli_error_test(cli_search_out_not_a_directory
    "rm -rf $1 && $0 init --seed 2 --out $1/net --quiet >/dev/null && touch $1/f && $0 search --supernet $1/net --out $1/f"
    "^nasa: error: cannot write results to '[^\n]*/f': '[^\n]*/f' is not a directory\nexit=1")
  add_test(NAME cli_version COMMAND nasa --version)
  set_tests_properties(cli_version PROPERTIES LABELS "unit;cli"
                       PASS_REGULAR_EXPRESSION "^nasa [0-9]+\\.[0-9]+\\.[0-9]+ \\(commit [0-9a-z]+\\)\n$")
  # random argument vectors: never a crash, another exit code, a malformed error or a wrapped value
  add_test(NAME cli_fuzz_arguments
           COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/tools/cli_fuzz.py $<TARGET_FILE:nasa> --cases 100 --seed 1)
  set_tests_properties(cli_fuzz_arguments PROPERTIES LABELS "unit;cli" TIMEOUT 900
                       PASS_REGULAR_EXPRESSION "no crash, no wrap")

  # batch fusion and fused evaluation (docs/fusion.md)
  add_test(NAME cli_fuse_json COMMAND nasa fuse --space fmnist-mb --random 50 --seed 1 --json)
  set_tests_properties(cli_fuse_json PROPERTIES LABELS "unit;cli"
    PASS_REGULAR_EXPRESSION "\"candidate_count\": 50,.*\"macs_fused_per_image\": [1-9].*\"macs_unfused_per_image\": [1-9].*\"nodes\": [1-9].*\"schedules\": \\[.*\"unique_candidate_count\": 50")
  add_test(NAME cli_fuse_svg
    COMMAND sh -c "mkdir -p \"$1\" && \"$0\" fuse --space fmnist-mb --random 20 --seed 2 --svg \"$1/t.svg\" --quiet >/dev/null && head -c 200 \"$1/t.svg\" && grep -c '<circle' \"$1/t.svg\""
            $<TARGET_FILE:nasa> ${CMAKE_BINARY_DIR}/cli_fuse_svg)
  set_tests_properties(cli_fuse_svg PROPERTIES LABELS "unit;cli"
                       PASS_REGULAR_EXPRESSION "^<svg xmlns=[^\n]*\n.*[1-9][0-9]*\n$")
  nasa_cli_error_test(cli_fuse_bad_arch_line
    "mkdir -p $1 && printf '0-0-0-0-0-0\\n# ok\\n0-9-0-0-0-0\\n' > $1/a.txt && $0 fuse --space fmnist-mb --arch-file $1/a.txt"
    "nasa: error: [^\n]*a.txt:3[^\n]*.*exit=1")
  # the fused run's profile: PE utilization by run, op and node, cycles and MACs accounted for
  add_test(NAME cli_eval_fused_profile
    COMMAND sh -c "rm -rf \"$1\" && \"$0\" init --seed 4 --out \"$1\" >/dev/null && \"$0\" eval --supernet \"$1\" --random 6 --seed 3 --fused --images 4 --json | python3 \"$2\""
            $<TARGET_FILE:nasa> ${CMAKE_BINARY_DIR}/cli_fused_profile
            ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_eval_profile.py)
  set_tests_properties(cli_eval_fused_profile PROPERTIES LABELS "unit;cli"
                       PASS_REGULAR_EXPRESSION "PROFILE OK")
  nasa_cli_error_test(cli_eval_mini_batch_zero
    "rm -rf $1 && $0 init --seed 2 --out $1 >/dev/null && $0 eval --supernet $1 --random 2 --fused --mini-batch 0"
    "nasa: error: eval: --mini-batch: expected an integer in 1\\.\\.1048576, got '0'.*exit=1")
  nasa_cli_error_test(cli_eval_fused_needs_batch
    "rm -rf $1 && $0 init --seed 2 --out $1 >/dev/null && $0 eval --supernet $1 --arch 0-0-0-0-0-0 --fused"
    "nasa: error: [^\n]*exactly one of|--fused needs.*exit=1")
  if(NASA_WITH_RTL)  # --backend rtl: the Verilated models (sim/)
    add_test(NAME cli_eval_fused_ref_equals_rtl
      COMMAND sh -c "rm -rf \"$1\" && mkdir -p \"$1\" && \"$0\" init --seed 5 --out \"$1\" >/dev/null && printf '3-4-2-5-1-5\\n3-4-2-5-1-5\\n3-4-2-0-1-2\\n0-1-2-3-0-1\\n' > \"$1/a.txt\" && for b in ref rtl; do \"$0\" eval --supernet \"$1\" --arch-file \"$1/a.txt\" --fused --dump-logits --images 3 --backend $b --json > \"$1/$b.json\" || exit 1; done && e=$(grep '\"macs_executed\"' \"$1/rtl.json\" | tr -dc 0-9) && f=$(grep '\"macs_fused_per_image\"' \"$1/rtl.json\" | tr -dc 0-9) && test \"$e\" = \"$((f * 3))\" && a=$(grep -E 'correct|sha256|leaf|macs_executed|nodes|energy_pj|Cycles|Busy|Stall|Writes|Dram' \"$1/ref.json\") && b=$(grep -E 'correct|sha256|leaf|macs_executed|nodes|energy_pj|Cycles|Busy|Stall|Writes|Dram' \"$1/rtl.json\") && test \"$a\" = \"$b\" && echo \"SAME macs $e\""
              $<TARGET_FILE:nasa> ${CMAKE_BINARY_DIR}/cli_fused)
    set_tests_properties(cli_eval_fused_ref_equals_rtl PROPERTIES LABELS "cli;cosim"
                         PASS_REGULAR_EXPRESSION "SAME macs [1-9]")
  endif()
  # the documented board command on its model: the default supernet (225,186 weights) in as
  # many batch runs (and candidate programs) as the board's 128 KB hold, logits equal to sim's
  add_test(NAME cli_eval_board_default_supernet
    COMMAND sh -c "rm -rf \"$1\" && \"$0\" init --out \"$1\" >/dev/null && for c in up5k sim; do \"$0\" eval --supernet \"$1\" --random 3 --seed 2 --fused --dump-logits --images 3 --config $c --json > \"$1/fused_$c.json\" && \"$0\" eval --supernet \"$1\" --arch 3-2-0-4-2-4 --images 6 --config $c --json > \"$1/alone_$c.json\" || exit 1; done && python3 \"$2\" \"$1\""
            $<TARGET_FILE:nasa> ${CMAKE_BINARY_DIR}/cli_board_default
            ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_board_runs.py)
  set_tests_properties(cli_eval_board_default_supernet PROPERTIES LABELS "unit;cli"
                       PASS_REGULAR_EXPRESSION "BOARD RUNS OK")
  add_test(NAME cli_eval_generate
    COMMAND sh -c "rm -rf \"$1\" && \"$0\" init --seed 5 --out \"$1\" >/dev/null && \"$0\" eval --supernet \"$1\" --generate 6 --seed 3 --images 2 --json"
            $<TARGET_FILE:nasa> ${CMAKE_BINARY_DIR}/cli_generate)
  set_tests_properties(cli_eval_generate PROPERTIES LABELS "unit;cli"
    PASS_REGULAR_EXPRESSION "\"generated\": \\[[^]]*\"[0-9]-[0-9]-[0-9]-[0-9]-[0-9]-[0-9]\"")

  # search: outputs of both strategies on a tiny budget, byte-identical for the same seed; an
  # earlier result is never overwritten without --force; an impossible constraint is named.
  set(_search_tiny --population 4 --generations 2 --mutations 2 --crossovers 2 --topk 2 --val-images 4 --calib 2)
  string(JOIN " " _search_tiny ${_search_tiny})
  add_test(NAME cli_search_outputs
    COMMAND sh -c "rm -rf \"$1\" && \"$0\" init --seed 4 --out \"$1/net\" >/dev/null && for r in run run2; do \"$0\" search --supernet \"$1/net\" --out \"$1/$r\" --strategy both ${_search_tiny} >/dev/null || exit 1; done && cmp \"$1/run/result.json\" \"$1/run2/result.json\" && echo IDENTICAL && grep -c '<circle' \"$1/run/pareto.svg\" && grep -o '\"pareto\": \\[' \"$1/run/result.json\" | head -1 && grep -o 'Evolution vs random at equal evaluations' \"$1/run/report.md\""
            $<TARGET_FILE:nasa> ${CMAKE_BINARY_DIR}/cli_search_outputs)
  set_tests_properties(cli_search_outputs PROPERTIES LABELS "unit;cli"
    PASS_REGULAR_EXPRESSION "IDENTICAL\n[1-9][0-9]*\n\"pareto\": \\[\nEvolution vs random at equal evaluations")
  nasa_cli_error_test(cli_search_refuses_overwrite
    "rm -rf $1 && $0 init --seed 4 --out $1/net >/dev/null && $0 search --supernet $1/net --out $1/run ${_search_tiny} >/dev/null 2>&1 && $0 search --supernet $1/net --out $1/run ${_search_tiny}"
    "nasa: error: [^\n]*run[^\n]*already holds search results[^\n]*--force.*exit=1")
  # every file a command writes is named on stderr ("wrote PATH"), not with --quiet; with --json
  # stdout stays one JSON object
  add_test(NAME cli_files_announced
    COMMAND sh -c "rm -rf \"$1\" && mkdir -p \"$1\" && \"$0\" init --seed 4 --out \"$1/net\" 2>&1 >/dev/null && \"$0\" fuse --space fmnist-mb --random 20 --svg \"$1/t.svg\" --json 2>\"$1/err\" | python3 -c 'import json, sys; json.load(sys.stdin); print(\"JSON\")' && cat \"$1/err\" && \"$0\" search --supernet \"$1/net\" --out \"$1/run\" ${_search_tiny} --quiet 2>&1 >/dev/null | grep -c wrote; \"$0\" search --supernet \"$1/net\" --out \"$1/run2\" ${_search_tiny} 2>&1 >/dev/null | grep wrote"
            $<TARGET_FILE:nasa> ${CMAKE_BINARY_DIR}/cli_files_announced)
  set_tests_properties(cli_files_announced PROPERTIES LABELS "unit;cli"
    PASS_REGULAR_EXPRESSION "^wrote [^\n]*/net/supernet.json\nwrote [^\n]*/net/weights.safetensors\nJSON\nwrote [^\n]*/t.svg\n0\nwrote [^\n]*/run2/report.md\nwrote [^\n]*/run2/pareto.svg\nwrote [^\n]*/run2/result.json\n$")
  nasa_cli_error_test(cli_search_impossible_constraint
    "rm -rf $1 && $0 init --seed 4 --out $1/net >/dev/null && $0 search --supernet $1/net --out $1/run --max-macs 1000"
    "nasa: error: constraint impossible: --max-macs 1000[^\n]*.*exit=1")

  # mpirun (docs/mpi.md): result.json of a search on 3 ranks identical to one process's; a killed
  # rank and a device failing on one rank end the job non-zero, naming the rank, without
  # result.json; the cosim regression on 3 ranks gives one process's table (sw/tools/check_mpi.py). Registered when the build has MPI (`make deps`
  # installs Open MPI).
  if(NASA_WITH_MPI AND MPIEXEC_EXECUTABLE)
    add_test(NAME mpi_search_ranks
      COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_mpi.py $<TARGET_FILE:nasa>
              ${MPIEXEC_EXECUTABLE} ${CMAKE_BINARY_DIR}/mpi_search_ranks
              $<$<TARGET_EXISTS:nasa-cosim>:$<TARGET_FILE_DIR:nasa>/nasa-cosim>)
    set_tests_properties(mpi_search_ranks PROPERTIES LABELS "cli;mpi" TIMEOUT 900
      PASS_REGULAR_EXPRESSION "check_mpi: OK" RUN_SERIAL TRUE)
  endif()

endif()
