// Runs an ONNX model with onnxruntime-node (CPU) on float32 NCHW images and writes each of its
// outputs' raw bytes to OUT.<output name>: the independent runtime of the export test
// (sw/tools/check_onnx.py).
//   node ort_run.js MODEL.onnx IMAGES.f32 N C H W OUT
// NODE_PATH must reach onnxruntime-node (installed with npm --ignore-scripts).
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

async function main() {
  const [model, imagesPath, n, c, h, w, outPrefix] = process.argv.slice(2);
  const dims = [Number(n), Number(c), Number(h), Number(w)];
  const buf = fs.readFileSync(imagesPath);
  const data = new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4);
  if (data.length !== dims.reduce((a, b) => a * b, 1)) {
    throw new Error(`${imagesPath}: ${data.length} floats, expected ${dims.join('x')}`);
  }
  // ORT_GRAPH_OPTIMIZATION: disabled, basic, extended or all (onnxruntime's default: all)
  const level = process.env.ORT_GRAPH_OPTIMIZATION || 'all';
  const session = await ort.InferenceSession.create(
      model, {executionProviders: ['cpu'], graphOptimizationLevel: level});
  const feeds = {};
  feeds[session.inputNames[0]] = new ort.Tensor('float32', data, dims);
  const out = await session.run(feeds);
  const shapes = [];
  for (const name of session.outputNames) {
    const y = out[name];
    fs.writeFileSync(
        `${outPrefix}.${name}`, Buffer.from(y.data.buffer, y.data.byteOffset, y.data.byteLength));
    shapes.push(`${name} ${y.type} [${y.dims}]`);
  }
  console.log(
      `${model}: ${session.inputNames[0]} [${dims}] -> ${shapes.join(', ')} ` +
      `(onnxruntime-node ${require('onnxruntime-node/package.json').version})`);
}

main().catch((e) => {
  console.error(`ort_run: ${e.message}`);
  process.exit(1);
});
