// The reference side of the ONNX export test (sw/tools/check_onnx.py): writes the first N test
// images of Fashion-MNIST as the exported model's input (float32 NCHW, pixel / 255), their labels
// and the logits of our float evaluator (floatnet::forward, normalized as the weights record) and
// of our int8 pipeline (quantized on the first CALIB training images, the reference backend).
//   onnx_reference SUPERNET_DIR ARCH N CALIB OUT_DIR
// OUT_DIR/images.f32, labels.u8, logits.f32 (N x classes float), logits_int8.i8 (N x classes).
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include "nasa/compiler.h"
#include "nasa/data.h"
#include "nasa/device.h"
#include "nasa/files.h"
#include "nasa/float_eval.h"
#include "nasa/runtime.h"

namespace {

template <typename T>
void write(const std::filesystem::path& p, const std::vector<T>& v) {
  nasa::write_file_atomic(
      p, std::string_view(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: onnx_reference SUPERNET_DIR ARCH N CALIB OUT_DIR\n");
    return 2;
  }
  try {
    const auto [net, w] = nasa::runtime::load_supernet_dir(argv[1]);
    const auto cand = nasa::spec::parse_candidate(argv[2], net);
    const size_t n = std::stoul(argv[3]);
    const size_t calib = std::stoul(argv[4]);
    const std::filesystem::path out = argv[5];
    std::filesystem::create_directories(out);
    const auto test = nasa::data::load_fashion_mnist("test", n);
    const auto norm = nasa::floatnet::read_normalization(w, net.in_c, argv[1]);
    std::vector<float> images, logits;
    std::vector<uint8_t> labels;
    for (size_t i = 0; i < n; ++i) {
      const auto raw = nasa::floatnet::image_from_u8(test.image(i).data(), net.in_h, net.in_w,
                                                     net.in_c);  // pixel / 255: the ONNX input
      images.insert(images.end(), raw.v.begin(), raw.v.end());
      const auto x =
          nasa::floatnet::image_from_u8(test.image(i).data(), net.in_h, net.in_w, net.in_c, norm);
      const auto l = nasa::floatnet::forward(net, w, cand, x);
      logits.insert(logits.end(), l.begin(), l.end());
      labels.push_back(test.labels[i]);
    }
    write(out / "images.f32", images);
    write(out / "labels.u8", labels);
    write(out / "logits.f32", logits);
    nasa::runtime::Runtime rt(
        nasa::compile::quantize(net, w, nasa::data::load_fashion_mnist("train", calib), calib),
        nasa::config_by_name("sim"),
        [](const nasa::hw::Config& c, uint64_t m) { return nasa::device::make_ref_device(c, m); },
        "ref");
    const auto r = rt.evaluate(cand, test.byte_images(0, n), labels);
    write(out / "logits_int8.i8", r.logits);
    fmt::print("{} images, {} classes: {}\n", n, net.classes, out.string());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "onnx_reference: %s\n", e.what());
    return 1;
  }
}
