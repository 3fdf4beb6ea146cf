#!/usr/bin/env python3
"""ctest cli_eval_board_default_supernet: `nasa eval --json` of the default supernet on the board's
model (config up5k) and on sim, fused and one candidate alone, in directory argv[1]. The board
needs several batch runs (and programs) where sim needs one; every candidate's logits and
correct counts are the same on both. Prints BOARD RUNS OK, or what differs (exit 1)."""
import json
import sys


def load(name):
    with open(f"{sys.argv[1]}/{name}.json", encoding="utf-8") as f:
        return json.load(f)


def fail(msg):
    print(f"check_board_runs: {msg}")
    sys.exit(1)


fb, fs = load("fused_up5k"), load("fused_sim")
if fb["hw_config"] != "up5k" or fs["hw_config"] != "sim":
    fail("configs are not up5k and sim")
if fs["batch_runs"] != 1 or fb["batch_runs"] < 2:
    fail(f"batch runs: sim {fs['batch_runs']} (1 expected), up5k {fb['batch_runs']} (>= 2)")
key = lambda e: (e["arch"], e["correct"], e["logits_sha256"])
if [key(e) for e in fb["candidates"]] != [key(e) for e in fs["candidates"]]:
    fail("fused: the board's candidates, counts or logits differ from sim's")
ab, as_ = load("alone_up5k"), load("alone_sim")
if as_["programs"] != 1 or ab["programs"] < 2:
    fail(f"programs: sim {as_['programs']} (1 expected), up5k {ab['programs']} (>= 2)")
if key(ab) != key(as_):
    fail("alone: the board's counts or logits differ from sim's")
print(f"BOARD RUNS OK: {fb['batch_runs']} batch runs, {ab['programs']} programs")
