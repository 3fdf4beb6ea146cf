// Writes the seed corpora of the fuzz targets (fuzz/corpus/<target>/): small real inputs of every
// format, each one the tools accept (plus a few they reject, to start the fuzzer on each error
// path): the built-in supernet specs, tiny supernet directories with their weights, Fashion-MNIST
// images (when the dataset is installed, else synthetic ones), architecture files, UART frames
// and engine programs of every opcode for every hardware configuration. Deterministic.
// Usage: nasa-fuzz-seeds <corpus dir>
#include <fmt/format.h>
#include <jpeglib.h>
#include <png.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "nasa/data.h"
#include "nasa/desc.h"
#include "nasa/fusion.h"
#include "nasa/hw_spec.h"
#include "nasa/memory_image.h"
#include "nasa/safetensors.h"
#include "nasa/spec.h"
#include "nasa/supernet_weights.h"
#include "nasa/uart_protocol.h"

namespace fs = std::filesystem;
namespace hw = nasa::hw;
namespace spec = nasa::spec;
namespace uart = nasa::uart;
namespace w = nasa::weights;
using Bytes = std::vector<uint8_t>;

namespace {

fs::path g_root;
size_t g_written = 0;

void put(const std::string& target, const std::string& name, const Bytes& bytes) {
  const fs::path dir = g_root / target;
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  ++g_written;
}

Bytes bytes_of(std::string_view s) { return {s.begin(), s.end()}; }

Bytes gzip(const Bytes& in) {
  z_stream zs{};
  if (deflateInit2(&zs, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("deflateInit2 failed");
  }
  Bytes out(deflateBound(&zs, static_cast<uLong>(in.size())) + 32);
  zs.next_in = const_cast<Bytef*>(in.data());  // zlib's API is not const-correct
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  if (deflate(&zs, Z_FINISH) != Z_STREAM_END) throw std::runtime_error("deflate failed");
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

Bytes safetensors_bytes(const w::TensorFile& f) {
  const fs::path tmp =
      fs::temp_directory_path() / fmt::format("nasa_seed_{}.safetensors", getpid());
  w::write_safetensors(tmp, f);
  std::ifstream in(tmp, std::ios::binary);
  Bytes b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  fs::remove(tmp);
  return b;
}

// Small supernets that load with their weights in a few KB: micro (2 KB of weights) keeps the
// fuzzers fast, the others cover strides, skips, expansion and every kernel size.
std::vector<spec::Supernet> tiny_nets() {
  using spec::OpKind;
  spec::Supernet m;
  m.name = "micro";
  m.in_h = m.in_w = 2;
  m.in_c = 1;
  m.classes = 2;
  m.stem = {1, 1, 1};
  m.layers = {{1, 1, {{OpKind::Conv, 1, 1}, {OpKind::Skip, 3, 1}}}};
  m.head = {1};
  spec::Supernet a;
  a.name = "tiny-mb";
  a.in_h = a.in_w = 6;
  a.in_c = 1;
  a.classes = 4;
  a.stem = {4, 3, 1};
  a.layers = {{4, 1, {{OpKind::MBConv, 3, 1}, {OpKind::MBConv, 3, 3}, {OpKind::Skip, 3, 1}}},
              {8, 2, {{OpKind::MBConv, 5, 1}, {OpKind::Conv, 3, 1}}}};
  a.head = {8};
  spec::Supernet b;
  b.name = "tiny-conv";
  b.in_h = 5;
  b.in_w = 7;
  b.in_c = 3;
  b.classes = 2;
  b.act = "relu";
  b.stem = {2, 1, 2};
  b.layers = {{2, 1, {{OpKind::Conv, 1, 1}, {OpKind::Skip, 3, 1}}},
              {3, 2, {{OpKind::Conv, 7, 1}}},
              {3, 1, {{OpKind::MBConv, 7, 6}, {OpKind::Conv, 5, 1}, {OpKind::Skip, 3, 1}}}};
  b.head = {4};
  for (const auto& n : {m, a, b}) spec::validate(n);
  return {m, a, b};
}

void spec_seeds() {
  for (const auto& name : spec::builtin_space_names()) {
    put("spec", name + ".json", bytes_of(spec::to_json(spec::builtin_space(name)).dump(2)));
  }
  for (const auto& n : tiny_nets())
    put("spec", n.name + ".json", bytes_of(spec::to_json(n).dump()));
  put("spec", "bad-stride.json",
      bytes_of(R"({"name":"x","input":{"h":8,"w":8,"c":1},"classes":2,"stem":{"out_channels":4},)"
               R"("layers":[{"out_channels":4,"stride":3,"choices":["skip"]}],)"
               R"("head":{"channels":8}})"));
}

void weight_seeds() {
  const auto nets = tiny_nets();
  for (size_t i = 0; i < nets.size(); ++i) {
    const Bytes st = safetensors_bytes(w::random_weights(nets[i], 7 + i));
    if (nets[i].name != "tiny-conv") put("safetensors", nets[i].name + ".safetensors", st);
    put("supernet_dir", nets[i].name,
        nasa::fuzz::join({bytes_of(spec::to_json(nets[i]).dump()), st}));
  }
  // micro's weights for a micro with two channels in its layer: a check_weights error
  spec::Supernet wide = nets[0];
  wide.layers[0].out_channels = 2;
  wide.layers[0].choices.pop_back();  // (no skip from 1 to 2 channels)
  put("supernet_dir", "micro-mismatch",
      nasa::fuzz::join({bytes_of(spec::to_json(wide).dump()),
                        safetensors_bytes(w::random_weights(nets[0], 1))}));
  // Every dtype, a scalar, an empty tensor and metadata.
  w::TensorFile f;
  f.metadata["format"] = "pt";
  const std::pair<const char*, std::vector<int64_t>> kinds[] = {
      {"BOOL", {3}}, {"U8", {2, 2}}, {"I8", {4}},  {"F16", {2}}, {"BF16", {1, 2}},
      {"I32", {2}},  {"F32", {}},    {"F64", {1}}, {"I64", {0}}, {"F8_E4M3", {2}}};
  uint8_t v = 1;
  for (const auto& [dtype, shape] : kinds) {
    w::Tensor t{dtype, shape, {}};
    t.data.resize(t.numel() * w::dtype_size(dtype));
    for (auto& b : t.data) b = v++;
    f.tensors.emplace(fmt::format("t.{}", dtype), t);
  }
  put("safetensors", "dtypes.safetensors", safetensors_bytes(f));
  put("safetensors", "empty.safetensors", safetensors_bytes(w::TensorFile{}));
}

Bytes idx_images(const nasa::data::Dataset& d) {
  Bytes b = {0, 0, 8, 3};
  for (uint32_t v : {static_cast<uint32_t>(d.size()), d.rows, d.cols}) {
    for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>(v >> s));
  }
  b.insert(b.end(), d.images.begin(), d.images.end());
  return b;
}

Bytes idx_labels(const nasa::data::Dataset& d) {
  Bytes b = {0, 0, 8, 1};
  const auto n = static_cast<uint32_t>(d.size());
  for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>(n >> s));
  b.insert(b.end(), d.labels.begin(), d.labels.end());
  return b;
}

void idx_seeds() {
  nasa::data::Dataset d;
  try {
    d = nasa::data::load_fashion_mnist("test", 3);  // real images when the dataset is installed
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_seeds: %s; synthetic IDX seeds only\n", e.what());
  }
  nasa::data::Dataset s;
  s.rows = 3;
  s.cols = 2;
  s.images = {0, 10, 20, 30, 40, 50, 255, 128, 1, 2, 3, 4};
  s.labels = {7, 9};
  for (const auto& [name, ds] : {std::pair<std::string, nasa::data::Dataset>{"fmnist3", d},
                                 std::pair<std::string, nasa::data::Dataset>{"synthetic", s}}) {
    if (ds.size() == 0) continue;
    const Bytes i = idx_images(ds), l = idx_labels(ds);
    put("idx", name + "-plain", nasa::fuzz::join({i, l}));
    put("idx", name + "-gzip", nasa::fuzz::join({gzip(i), gzip(l)}));
    put("idx", name + "-mixed", nasa::fuzz::join({gzip(i), l}));
  }
}

// fuzz_dataset: (file bytes, kind byte): a CIFAR-10 batch, a CIFAR-100 train.bin, a PNG, a JPEG
void dataset_seeds() {
  Bytes c10 = {3}, c100 = {1, 42};
  for (int i = 0; i < 3072; ++i) c10.push_back(static_cast<uint8_t>(i * 7));
  c100.insert(c100.end(), c10.begin() + 1, c10.end());
  put("dataset", "cifar10", nasa::fuzz::join({c10, {0}}));
  put("dataset", "cifar100", nasa::fuzz::join({c100, {1}}));
  for (const bool color : {false, true}) {
    png_image im{};
    im.version = PNG_IMAGE_VERSION;
    im.width = 5;
    im.height = 3;
    im.format = color ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY;
    Bytes px(PNG_IMAGE_SIZE(im));
    for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<uint8_t>(i * 17);
    png_alloc_size_t n = 0;
    if (png_image_write_to_memory(&im, nullptr, &n, 0, px.data(), 0, nullptr) == 0) {
      throw std::runtime_error(std::string("png: ") + im.message);
    }
    Bytes png(n);
    if (png_image_write_to_memory(&im, png.data(), &n, 0, px.data(), 0, nullptr) == 0) {
      throw std::runtime_error(std::string("png: ") + im.message);
    }
    png.resize(n);
    put("dataset", color ? "rgb.png" : "gray.png", nasa::fuzz::join({png, {2}}));

    jpeg_compress_struct cinfo{};
    jpeg_error_mgr jerr{};
    cinfo.err = jpeg_std_error(&jerr);
    jpeg_create_compress(&cinfo);
    unsigned char* out = nullptr;
    unsigned long out_size = 0;
    jpeg_mem_dest(&cinfo, &out, &out_size);
    cinfo.image_width = 5;
    cinfo.image_height = 3;
    cinfo.input_components = color ? 3 : 1;
    cinfo.in_color_space = color ? JCS_RGB : JCS_GRAYSCALE;
    jpeg_set_defaults(&cinfo);
    jpeg_start_compress(&cinfo, TRUE);
    while (cinfo.next_scanline < cinfo.image_height) {
      JSAMPROW row = px.data() + size_t{cinfo.next_scanline} * 5 * (color ? 3 : 1);
      jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    put("dataset", color ? "rgb.jpg" : "gray.jpg",
        nasa::fuzz::join({Bytes(out, out + out_size), {3}}));
    std::free(out);
  }
}

void arch_seeds() {
  const auto names = spec::builtin_space_names();
  for (size_t s = 0; s < names.size(); ++s) {
    const spec::Supernet net = spec::builtin_space(names[s]);
    const auto cands = nasa::fusion::random_candidates(net, 4, s + 1);
    std::string file = fmt::format("# candidates of {}\n\n", names[s]);
    for (const auto& c : cands) file += "  " + spec::format_candidate(c) + "\r\n";
    const Bytes head = {static_cast<uint8_t>(s)};
    auto with_head = [&](const std::string& text) {
      Bytes b = head;
      b.insert(b.end(), text.begin(), text.end());
      return b;
    };
    put("arch", names[s] + ".arch", with_head(file));
    put("arch", names[s] + ".one", with_head(spec::format_candidate(cands[0])));
    put("arch", names[s] + ".json", with_head(spec::candidate_to_json(cands[1]).dump()));
  }
}

void uart_seeds() {
  const Bytes words = {1, 2, 3, 4};
  Bytes page(uart::kMaxPayload);
  for (size_t i = 0; i < page.size(); ++i) page[i] = static_cast<uint8_t>(i * 7);
  const std::vector<std::pair<std::string, uart::Response>> responses = {
      {"ok-csr", {uart::Status::Ok, 1, words}},     {"ok-write", {uart::Status::Ok, 2, {}}},
      {"ok-page", {uart::Status::Ok, 3, page}},     {"bad-crc", {uart::Status::BadCrc, 4, {}}},
      {"bad-addr", {uart::Status::BadAddr, 5, {}}}, {"timeout", {uart::Status::Timeout, 6, {}}}};
  Bytes all = {0x00, 0xFF, 0x13};  // line noise before the first sync
  for (const auto& [name, r] : responses) {
    const Bytes f = uart::encode(r);
    put("uart", name, f);
    all.insert(all.end(), f.begin(), f.end());
  }
  put("uart", "stream", all);
  Bytes corrupt = uart::encode(responses[0].second);
  corrupt[6] ^= 0x10;
  put("uart", "corrupt", corrupt);

  // Requests for the bridge, in the target's chunk framing: gap byte, then (n | idle) chunks.
  auto chunked = [](const std::vector<Bytes>& frames, uint8_t gap) {
    Bytes b = {gap};
    for (const Bytes& f : frames) {
      for (size_t off = 0; off < f.size(); off += 127) {
        const size_t n = std::min<size_t>(127, f.size() - off);
        b.push_back(static_cast<uint8_t>(n | (off + n == f.size() ? 0x80 : 0)));
        b.insert(b.end(), f.begin() + static_cast<std::ptrdiff_t>(off),
                 f.begin() + static_cast<std::ptrdiff_t>(off + n));
      }
    }
    return b;
  };
  const Bytes wr = uart::encode(uart::write_mem(1, 0x100, page));
  const Bytes rd = uart::encode(uart::read_mem(2, 0x100, 16));
  const Bytes wc = uart::encode(uart::write_csr(3, 0x10, 0xDEADBEEF));
  const Bytes rc = uart::encode(uart::read_csr(4, 0x10));
  const Bytes oob = uart::encode(uart::read_mem(5, 4090, 16));
  put("uart_bridge", "write-read", chunked({wr, rd}, 3));
  put("uart_bridge", "csr", chunked({wc, rc, rc}, 3));
  put("uart_bridge", "retry", chunked({wr, wr, rd}, 3));
  put("uart_bridge", "out-of-range", chunked({oob}, 3));
  Bytes bad = wc;
  bad[5] ^= 0x01;
  put("uart_bridge", "bad-crc", chunked({bad, wc}, 3));
  Bytes cut(wc.begin(), wc.begin() + 6);
  put("uart_bridge", "truncated", chunked({cut, rc}, 3));
}

// --- engine programs: [cfg][count][desc_addr][win_base][win_limit] + memory image ---

constexpr uint32_t kIn = 0x100, kIn2 = 0x600, kOut = 0xA00, kWgt = 0xE00, kPrm = 0x1800;
constexpr uint32_t kMem = 16384;

nasa::Desc layer(hw::Op op, uint8_t k, uint8_t stride, uint16_t h, uint16_t wd, uint16_t cin,
                 uint16_t cout) {
  nasa::Desc d;
  d.op = static_cast<uint8_t>(op);
  d.act = static_cast<uint8_t>(hw::Act::Relu);
  d.k = k;
  d.stride = stride;
  d.h = h;
  d.w = wd;
  d.cin = cin;
  d.cout = cout;
  d.in_addr = kIn;
  d.in2_addr = kIn2;
  d.out_addr = kOut;
  d.wgt_addr = kWgt;
  d.prm_addr = kPrm;
  d.m = 19000;
  d.s = 14;
  d.mb = 21000;
  d.sb = 15;
  return d;
}

Bytes program(size_t cfg, const std::vector<nasa::Desc>& descs, uint32_t win_limit = kMem,
              uint8_t record_shift = 12) {
  Bytes mem(kPrm + 8 * 64, 0);
  uint32_t seed = 12345;
  for (uint32_t a = kIn; a < kPrm; ++a) {
    seed = seed * 1103515245u + 12345u;
    mem[a] = static_cast<uint8_t>(seed >> 16);
  }
  for (uint32_t c = 0; c < 64; ++c) {
    nasa::write_param(
        mem, kPrm + 8 * c,
        {static_cast<int32_t>(c * 37) - 500, static_cast<uint16_t>(20000 + c), record_shift});
  }
  for (size_t i = 0; i < descs.size(); ++i) nasa::write_desc(mem, 64 * i, descs[i]);
  Bytes in = {static_cast<uint8_t>(cfg),       static_cast<uint8_t>(descs.size()),  0, 0, 0, 0,
              static_cast<uint8_t>(win_limit), static_cast<uint8_t>(win_limit >> 8)};
  in.insert(in.end(), mem.begin(), mem.end());
  return in;
}

void desc_seeds() {
  using hw::Op;
  const std::vector<std::pair<std::string, nasa::Desc>> layers = {
      {"conv3", layer(Op::Conv, 3, 1, 4, 4, 4, 8)},
      {"conv1s2", layer(Op::Conv, 1, 2, 6, 6, 8, 8)},
      {"dw3s2", layer(Op::DwConv, 3, 2, 6, 6, 8, 8)},
      {"fc", layer(Op::Fc, 1, 1, 2, 2, 8, 10)},
      {"maxpool", layer(Op::MaxPool, 3, 2, 5, 5, 4, 4)},
      {"avgpool", layer(Op::AvgPool, 3, 1, 4, 4, 4, 4)},
      {"add", layer(Op::Add, 1, 1, 4, 4, 4, 4)},
      {"gap", layer(Op::Gap, 1, 1, 3, 3, 8, 8)}};
  for (size_t c = 0; c < hw::kConfigs.size(); ++c) {
    const std::string cfg(hw::kConfigs[c].name);
    for (const auto& [name, d] : layers) put("desc", cfg + "-" + name, program(c, {d}));
    // a chain: conv -> depthwise -> fc, each reading the previous output (ReLU6 on the last)
    nasa::Desc a = layer(Op::Conv, 3, 1, 4, 4, 4, 8), b = layer(Op::DwConv, 3, 1, 4, 4, 8, 8),
               f = layer(Op::Fc, 1, 1, 4, 4, 8, 4);
    b.in_addr = a.out_addr;
    b.out_addr = kIn2;
    f.in_addr = b.out_addr;
    f.act = static_cast<uint8_t>(hw::Act::Relu6);
    f.q6 = 96;
    put("desc", cfg + "-chain", program(c, {a, b, f}));
  }
  nasa::Desc bad = layers[0].second;
  bad.op = 9;
  put("desc", "bad-opcode", program(1, {bad}));
  put("desc", "window", program(1, {layers[0].second}, kOut));
  put("desc", "bad-record", program(1, {layers[0].second}, kMem, 0));
  put("desc", "empty", program(1, {}));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <corpus dir>   (writes <dir>/<target>/<seed>)\n", argv[0]);
    return 2;
  }
  try {
    g_root = argv[1];
    spec_seeds();
    weight_seeds();
    idx_seeds();
    dataset_seeds();
    arch_seeds();
    uart_seeds();
    desc_seeds();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_seeds: %s\n", e.what());
    return 1;
  }
  std::printf("wrote %zu seeds under %s\n", g_written, g_root.string().c_str());
  return 0;
}
