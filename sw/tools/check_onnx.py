#!/usr/bin/env python3
"""ONNX export test (docs/export.md): supernets trained here (CASES), candidates exported with
`nasa export` (float and --int8), run by an independent runtime (onnxruntime-node from the npm
registry, CPU) on test images, compared with our float evaluator and our int8 result.

  check_onnx.py NASA ONNX_REFERENCE WORK_DIR NPM_DIR

Asserts, on IMAGES test images: float model max |logit difference| <= 1e-4 and the same argmax
for every image; int8 QDQ model accuracy within 0.3 points of `nasa eval` (reference backend) on
the same images, and its int8 logit codes (second output) within one code of the accelerator's,
at least 99% of them identical. The int8 model runs with onnxruntime's graph optimization at
`basic`: the ONNX QDQ semantics, computed in float. At its default level onnxruntime replaces
DequantizeLinear-Conv-QuantizeLinear by its own int8 kernels, whose results on AVX2 CPUs without
VNNI differ (docs/export.md "onnxruntime's int8 kernels"); that figure is printed too. Prints
the measured figures."""
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys

ORT_VERSION = "1.31.1"
IMAGES = 256
CALIB = 64
# (spec, candidates): fmnist-mb14 (the default space): MBConv with expansion and residuals,
# skip layers; a small space of its own with conv choices and a skip choice in its first layer,
# whose scales are tied across the skip (ReLU6 layers whose output scale exceeds 6/127).
SMALL_SPEC = {
    "name": "onnx-small", "input": {"h": 28, "w": 28, "c": 1}, "classes": 10, "act": "relu6",
    "stem": {"out_channels": 8, "k": 3, "stride": 2},
    "layers": [
        {"out_channels": 8, "stride": 1, "choices": ["mb_k3_e3", "conv_k3", "skip"]},
        {"out_channels": 16, "stride": 2, "choices": ["mb_k3_e3", "conv_k1"]},
        {"out_channels": 16, "stride": 1, "choices": ["mb_k3_e3", "conv_k3", "skip"]},
    ],
    "head": {"channels": 32},
}
CASES = [(None, ["3-2-4-3-1-0", "1-4-0-5-4-5"]), (SMALL_SPEC, ["1-1-1", "2-0-2"])]


def run(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, text=True, capture_output=True, **kw)
    if r.returncode != 0:
        sys.exit(f"FAILED ({r.returncode}): {' '.join(cmd)}\n{r.stdout}\n{r.stderr}")
    return r.stdout


def ensure_ort(npm_dir):
    """onnxruntime-node in npm_dir/node_modules (its install script fetches GPU libraries from a
    host that is not reachable: --ignore-scripts; the CPU runtime is inside the package)."""
    pkg = os.path.join(npm_dir, "node_modules", "onnxruntime-node", "package.json")
    if os.path.exists(pkg) and json.load(open(pkg))["version"] == ORT_VERSION:
        return os.path.join(npm_dir, "node_modules")
    os.makedirs(npm_dir, exist_ok=True)
    run(["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "--no-save",
         "--prefix", npm_dir, f"onnxruntime-node@{ORT_VERSION}"])
    return os.path.join(npm_dir, "node_modules")


def floats(path):
    b = open(path, "rb").read()
    return struct.unpack(f"<{len(b) // 4}f", b)


def argmax_rows(v, classes):
    return [max(range(classes), key=lambda c: (v[i * classes + c], -c))
            for i in range(len(v) // classes)]


def main():
    nasa, reference, work, npm_dir = sys.argv[1:5]
    node_modules = ensure_ort(npm_dir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    ort_js = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_run.js")
    env = dict(os.environ, NODE_PATH=node_modules)
    report = {}
    for spec, archs in CASES:
        net = os.path.join(work, spec["name"] if spec else "supernet")
        cmd = [nasa, "train", "--out", net, "--train-images", "12000", "--batch", "64",
               "--epochs", "1", "--threads", "1", "--eval-candidates", "1", "--eval-images", "200",
               "--quiet"]
        if spec:
            with open(net + ".json", "w") as f:
                json.dump(spec, f)
            cmd += ["--supernet", net + ".json"]
        run(cmd)
        for arch in archs:
            check(nasa, reference, work, net, arch, ort_js, env, report)
    with open(os.path.join(work, "report.json"), "w") as f:
        json.dump(report, f, indent=1)
    print("ONNX EXPORT OK")


def check(nasa, reference, work, net, arch, ort_js, env, report):
    """One candidate: float and int8 models against ours (see the module's docstring)."""
    ref = os.path.join(work, f"ref-{arch}")
    run([reference, net, arch, str(IMAGES), str(CALIB), ref])
    our_codes = open(os.path.join(ref, "logits_int8.i8"), "rb").read()
    labels = open(os.path.join(ref, "labels.u8"), "rb").read()
    ours = floats(os.path.join(ref, "logits.f32"))
    classes = len(ours) // IMAGES
    results = {}
    for kind in ("float", "int8"):
        model = os.path.join(work, f"{arch}-{kind}.onnx")
        cmd = [nasa, "export", "--supernet", net, "--arch", arch, "--out", model]
        if kind == "int8":
            cmd += ["--int8", "--calib", str(CALIB)]
        run(cmd)
        levels = ["all"] if kind == "float" else ["basic", "all"]
        for level in levels:
            out = os.path.join(work, f"{arch}-{kind}-{level}")
            print(run(["node", ort_js, model, os.path.join(ref, "images.f32"), str(IMAGES),
                       "1", "28", "28", out],
                      env=dict(env, ORT_GRAPH_OPTIMIZATION=level)).strip())
            results[f"{kind}-{level}"] = floats(out + ".logits")
    results["float"] = results["float-all"]
    results["int8"] = results["int8-basic"]
    codes = open(os.path.join(work, f"{arch}-int8-basic.logits_int8"), "rb").read()
    default_correct = sum(p == l for p, l in
                          zip(argmax_rows(results["int8-all"], classes), labels))
    # float: every logit against our float evaluator
    diff = max(abs(a - b) for a, b in zip(results["float"], ours))
    same = argmax_rows(results["float"], classes) == argmax_rows(ours, classes)
    # int8: accuracy against our int8 pipeline (`nasa eval`, reference backend)
    ort_correct = sum(p == l for p, l in zip(argmax_rows(results["int8"], classes), labels))
    ev = json.loads(run([nasa, "eval", "--supernet", net, "--arch", arch, "--images",
                         str(IMAGES), "--calib", str(CALIB), "--json", "--quiet"]))
    points = 100.0 * abs(ort_correct - ev["correct"]) / IMAGES
    codes_identical = hashlib.sha256(codes).hexdigest() == ev["logits_sha256"]
    assert hashlib.sha256(our_codes).hexdigest() == ev["logits_sha256"]
    signed = lambda b: [x - 256 if x > 127 else x for x in b]
    code_diff = [abs(a - b) for a, b in zip(signed(codes), signed(our_codes))]
    float_correct = sum(p == l for p, l in zip(argmax_rows(ours, classes), labels))
    report[arch] = {"images": IMAGES, "float_max_abs_logit_diff": diff,
                    "float_argmax_identical": same,
                    "float_accuracy_ours": float_correct / IMAGES,
                    "int8_accuracy_onnxruntime": ort_correct / IMAGES,
                    "int8_accuracy_nasa": ev["correct"] / IMAGES,
                    "int8_difference_points": points,
                    "int8_logits_identical_to_accelerator": codes_identical,
                    "int8_logit_codes_differing": sum(d > 0 for d in code_diff),
                    "int8_logit_codes_max_diff": max(code_diff),
                    "int8_accuracy_onnxruntime_default_level": default_correct / IMAGES}
    print(json.dumps({arch: report[arch]}, indent=1), flush=True)
    if not (diff <= 1e-4 and same):
        sys.exit(f"{arch}: float model max |diff| {diff:.3g} (limit 1e-4), argmax identical "
                 f"{same}")
    if max(code_diff) > 1 or sum(d > 0 for d in code_diff) > 0.01 * len(code_diff):
        sys.exit(f"{arch}: int8 QDQ logit codes differ from the accelerator's in "
                 f"{sum(d > 0 for d in code_diff)} of {len(code_diff)}, by up to "
                 f"{max(code_diff)} (limits: 1%, 1 code)")
    if points > 0.3:
        sys.exit(f"{arch}: int8 QDQ accuracy {ort_correct}/{IMAGES} vs ours "
                 f"{ev['correct']}/{IMAGES}: {points:.2f} points (limit 0.3)")


if __name__ == "__main__":
    main()
