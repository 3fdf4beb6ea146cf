#include "nasa/compiler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>

#include "nasa/memory_image.h"
#include "nasa/parallel.h"
#include "nasa/supernet_weights.h"

namespace nasa::compile {

FoldedConv fold_conv(const weights::TensorFile& wf, const std::string& prefix) {
  const auto& wt = wf.at(prefix + ".conv.weight");
  FoldedConv f;
  f.cout = static_cast<int>(wt.shape[0]);
  f.cin_g = static_cast<int>(wt.shape[1]);
  f.k = static_cast<int>(wt.shape[2]);
  const auto w = wt.f32();
  f.w.assign(w.begin(), w.end());
  quant::BatchNorm bn;
  for (auto [dst, name] : {std::pair{&bn.gamma, "weight"},
                           {&bn.beta, "bias"},
                           {&bn.mean, "running_mean"},
                           {&bn.var, "running_var"}}) {
    const auto v = wf.at(fmt::format("{}.bn.{}", prefix, name)).f32();
    dst->assign(v.begin(), v.end());
  }
  quant::fold_bn(f.w, f.b, static_cast<size_t>(f.cout), bn);
  return f;
}

spec::LayerShape head_input(const spec::Supernet& net) {
  const auto shapes = spec::layer_shapes(net);
  auto last = shapes.empty() ? spec::stem_output(net) : shapes.back();
  last.h = (last.h + last.stride - 1) / last.stride;
  last.w = (last.w + last.stride - 1) / last.stride;
  last.cin = last.cout;
  last.stride = 1;
  return last;
}

FoldedConv fold_fc(const weights::TensorFile& wf, const spec::Supernet& net) {
  FoldedConv fc;
  fc.cout = net.classes;
  fc.cin_g = net.head.channels;
  fc.k = 1;
  const auto fw = wf.at("head.fc.weight").f32();
  const auto fb = wf.at("head.fc.bias").f32();
  fc.w.assign(fw.begin(), fw.end());
  fc.b.assign(fb.begin(), fb.end());
  return fc;
}

namespace {

// Quantizes a folded conv to engine layout (OHWI; HWC for depthwise) with its records.
QConv quantize_conv(const FoldedConv& f, bool depthwise, int stride, hw::Act act, float in_scale,
                    float out_scale) {
  const quant::QuantWeights qw = quant::quantize_weights(f.w, static_cast<size_t>(f.cout));
  QConv q;
  q.op = depthwise ? hw::Op::DwConv : hw::Op::Conv;
  q.cout = f.cout;
  q.cin = depthwise ? f.cout : f.cin_g;
  q.k = f.k;
  q.stride = stride;
  q.act = act;
  const int kk = f.k * f.k;
  q.w.resize(qw.w.size());
  for (int o = 0; o < f.cout; ++o) {
    for (int i = 0; i < f.cin_g; ++i) {
      for (int t = 0; t < kk; ++t) {
        const int8_t v = qw.w[(static_cast<size_t>(o) * f.cin_g + i) * kk + t];
        if (depthwise) {
          q.w[static_cast<size_t>(t) * f.cout + o] = v;  // HWC
        } else {
          q.w[(static_cast<size_t>(o) * kk + t) * f.cin_g + i] = v;  // OHWI
        }
      }
    }
  }
  q.prm = quant::conv_params(f.b, qw.scale, in_scale, out_scale);
  q.in_scale = in_scale;
  q.out_scale = out_scale;
  return q;
}

struct Stats {
  std::map<std::string, float> max_abs;
  void observe(std::string_view name, const floatnet::Tensor& t) {
    float m = 0;
    for (float v : t.v) m = std::max(m, std::fabs(v));
    note(std::string(name), m);
  }
  void merge(const Stats& o) {
    for (const auto& [name, m] : o.max_abs) note(name, m);
  }
  void note(const std::string& name, float m) {
    float& cur = max_abs[name];
    cur = std::max(cur, m);
  }
  float scale(const std::string& name) const {
    const auto it = max_abs.find(name);
    const float m = it == max_abs.end() ? 0.0f : it->second;
    return std::max(m / 127.0f, quant::kMinActivationScale);
  }
};

}  // namespace

QSupernet quantize(const spec::Supernet& net, const weights::TensorFile& wf,
                   std::span<const floatnet::Tensor> images, dist::Comm* ranks, int threads) {
  if (images.empty()) throw std::invalid_argument("quantize: no calibration images");
  const size_t L = net.layers.size();
  size_t rounds = 1;
  for (const auto& l : net.layers) rounds = std::max(rounds, l.choices.size());
  // shared by the ranks when each has an image (every image visits every choice: the same
  // tensors observed on every rank), and on a rank by its threads
  const bool shared =
      ranks && ranks->size() > 1 && images.size() >= static_cast<size_t>(ranks->size());
  const size_t first = shared ? static_cast<size_t>(ranks->rank()) : 0;
  const size_t step = shared ? static_cast<size_t>(ranks->size()) : 1;
  const size_t mine = images.size() > first ? (images.size() - first + step - 1) / step : 0;
  const size_t workers =
      std::clamp<size_t>(static_cast<size_t>(std::max(threads, 1)), 1, std::max<size_t>(mine, 1));
  std::vector<Stats> per(workers);
  parallel_for(workers, static_cast<int>(workers), [&](size_t t) {
    for (size_t j = t; j < mine; j += workers) {
      const size_t n = first + j * step;
      for (size_t r = 0; r < rounds; ++r) {
        spec::Candidate c(L);
        for (size_t i = 0; i < L; ++i)
          c[i] = static_cast<int>((r + n + i) % net.layers[i].choices.size());
        floatnet::forward(
            net, wf, c, images[n],
            [&](std::string_view name, const floatnet::Tensor& x) { per[t].observe(name, x); });
      }
    }
  });
  Stats st;
  for (const Stats& p : per) st.merge(p);
  if (shared) {
    std::vector<float> m;
    for (const auto& [name, v] : st.max_abs) m.push_back(v);
    ranks->max(m);
    size_t k = 0;
    for (auto& [name, v] : st.max_abs) v = m.at(k++);
  }
  QSupernet q;
  q.net = net;
  q.norm = floatnet::read_normalization(wf, net.in_c, "weights");
  q.in_scale = q.norm.max_abs() / 127.0f;
  const hw::Act act = net.act == "relu" ? hw::Act::Relu : hw::Act::Relu6;
  // Boundary scales: scale[0] = stem output, scale[i+1] = output of layer i; a layer with a skip
  // choice ties its input and output scales so the skip needs no op.
  q.scale.resize(L + 1);
  q.scale[0] = st.scale("stem");
  for (size_t i = 0; i < L; ++i) q.scale[i + 1] = st.scale(fmt::format("layers.{}.out", i));
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t i = 0; i < L; ++i) {
      if (!std::any_of(net.layers[i].choices.begin(), net.layers[i].choices.end(),
                       [](const spec::OpSpec& o) { return o.kind == spec::OpKind::Skip; })) {
        continue;
      }
      const float m = std::max(q.scale[i], q.scale[i + 1]);
      if (q.scale[i] != m || q.scale[i + 1] != m) {
        q.scale[i] = q.scale[i + 1] = m;
        changed = true;
      }
    }
  }
  // Errors name the tensors at fault: a weight file may hold NaN, infinities, a negative
  // variance, or weights whose activations overflow on the calibration images.
  auto named = [](const std::string& name, const auto& f) {
    try {
      return f();
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("{}: {}", name, e.what()));
    }
  };
  auto conv = [&](const std::string& name, bool depthwise, int stride, hw::Act a, float in,
                  float out) {
    return named(name,
                 [&] { return quantize_conv(fold_conv(wf, name), depthwise, stride, a, in, out); });
  };
  q.stem = conv("stem", false, net.stem.stride, act, q.in_scale, q.scale[0]);
  const auto shapes = spec::layer_shapes(net);
  q.ops.resize(L);
  for (size_t i = 0; i < L; ++i) {
    for (size_t j = 0; j < net.layers[i].choices.size(); ++j) {
      const spec::OpSpec& op = net.layers[i].choices[j];
      const std::string prefix = fmt::format("layers.{}.choices.{}", i, j);
      QOp qo;
      const float sin = q.scale[i], sout = q.scale[i + 1];
      if (op.kind == spec::OpKind::MBConv) {
        float cur = sin;
        if (op.expand != 1) {
          const float se = st.scale(prefix + ".expand");
          qo.convs.push_back(conv(prefix + ".expand", false, 1, act, cur, se));
          cur = se;
        }
        const float sd = st.scale(prefix + ".dw");
        qo.convs.push_back(conv(prefix + ".dw", true, net.layers[i].stride, act, cur, sd));
        qo.residual = net.layers[i].stride == 1 && shapes[i].cin == shapes[i].cout;
        const float sp = qo.residual ? st.scale(prefix + ".project") : sout;
        qo.convs.push_back(conv(prefix + ".project", false, 1, hw::Act::None, sd, sp));
        if (qo.residual) {
          std::tie(qo.add_a, qo.add_b) =
              named(prefix + ".add", [&] { return quant::add_requant(sp, sin, sout); });
        }
      } else if (op.kind == spec::OpKind::Conv) {
        qo.convs.push_back(conv(prefix, false, net.layers[i].stride, act, sin, sout));
      }
      q.ops[i].push_back(std::move(qo));
    }
  }
  const float sh = st.scale("head.conv"), sg = st.scale("head.gap");
  q.head_conv = conv("head", false, 1, act, q.scale[L], sh);
  const auto head = head_input(net);
  q.gap = named("head.gap", [&] { return quant::gap_requant(sh, sg, head.h * head.w); });
  q.logit_scale = st.scale("logits");
  q.fc = named("head.fc", [&] {
    return quantize_conv(fold_fc(wf, net), false, 1, hw::Act::None, sg, q.logit_scale);
  });
  q.fc.op = hw::Op::Fc;
  return q;
}

QSupernet quantize(const spec::Supernet& net, const weights::TensorFile& weights,
                   const data::Dataset& d, size_t calib, dist::Comm* ranks, int threads) {
  const auto images = floatnet::dataset_images(
      d, 0, calib, floatnet::read_normalization(weights, net.in_c, "weights"));
  return quantize(net, weights, images, ranks, threads);
}

namespace {

// Builds a memory image: 64-byte aligned blocks, each recorded in the memory map.
class ImageBuilder {
 public:
  explicit ImageBuilder(Program& p) : p_(p) {}
  // a block only the hardware's reads touch (Region::input)
  uint32_t input(uint64_t size, std::string what) {
    const uint32_t a = alloc(size, std::move(what));
    p_.regions.back().input = true;
    return a;
  }
  uint32_t alloc(uint64_t size, std::string what) {
    p_.regions.push_back({std::move(what), static_cast<uint32_t>(top_), size});
    const uint64_t a = top_;
    top_ = (top_ + size + 63) / 64 * 64;
    if (top_ > 0xFFFFFFFFull) {
      throw std::runtime_error(
          fmt::format("compile: the memory image passes 4 GiB at '{}'", p_.regions.back().name));
    }
    if (p_.image.size() < top_) p_.image.resize(top_);
    return static_cast<uint32_t>(a);
  }
  // The on-chip scratch's window (docs/engine.md "On-chip scratch"): `bytes` at the next
  // multiple of `bytes` (never 0, which means no window), set as the program's ScratchBase. The
  // blocks placed in it (in_window) keep activations on chip; the rest of it stays unused.
  // `what`: the window's own entry in the memory map (empty: its in_window blocks are recorded
  // instead).
  uint32_t open_window(uint64_t bytes, const std::string& what = "") {
    const uint64_t base = std::max<uint64_t>(bytes, (top_ + bytes - 1) / bytes * bytes);
    top_ = base;
    win_top_ = base;
    win_end_ = base + bytes;
    alloc(bytes, what);
    if (what.empty()) p_.regions.pop_back();
    p_.scratch_base = static_cast<uint32_t>(base);
    return p_.scratch_base;
  }
  uint32_t in_window(uint64_t size, std::string what) {
    if (win_top_ + size > win_end_) {
      throw std::logic_error(fmt::format("compile: '{}' does not fit the scratch window", what));
    }
    p_.regions.push_back({what + " (on-chip scratch)", static_cast<uint32_t>(win_top_), size});
    const uint64_t a = win_top_;
    win_top_ = (win_top_ + size + 63) / 64 * 64;
    return static_cast<uint32_t>(a);
  }
  struct Placed {
    uint32_t w = 0, prm = 0;
  };
  // weights and per-channel records of one convolution
  Placed place(const QConv& c, const std::string& name) {
    Placed pl;
    pl.w = input(c.w.size(), name + " weights");
    std::copy(c.w.begin(), c.w.end(), p_.image.begin() + pl.w);
    pl.prm = input(c.prm.size() * hw::kParamBytes, name + " params");
    for (size_t i = 0; i < c.prm.size(); ++i) {
      write_param(p_.image, pl.prm + i * hw::kParamBytes,
                  ParamRecord{c.prm[i].bias, c.prm[i].m, c.prm[i].s});
    }
    return pl;
  }
  // quantized input images, one after another (returns the first; stride in `stride`)
  uint32_t place_images(const QSupernet& q, std::span<const std::vector<uint8_t>> images,
                        uint32_t& stride) {
    const size_t in_bytes = input_bytes(q.net);
    for (size_t n = 0; n < images.size(); ++n) {
      if (images[n].size() != in_bytes) {
        throw std::invalid_argument(fmt::format(
            "compile: image {} has {} bytes, supernet '{}' takes {}x{}x{} = {}", n,
            images[n].size(), q.net.name, q.net.in_h, q.net.in_w, q.net.in_c, in_bytes));
      }
    }
    stride = static_cast<uint32_t>((in_bytes + 63) / 64 * 64);
    const uint32_t base = input(uint64_t{stride} * images.size(), "input images");
    for (size_t n = 0; n < images.size(); ++n) {
      for (size_t b = 0; b < in_bytes; ++b) {
        p_.image[base + n * stride + b] = static_cast<uint8_t>(quant::quantize_value(
            q.norm.apply(images[n][b], static_cast<int>(b % q.net.in_c)), q.in_scale));
      }
    }
    return base;
  }
  static size_t input_bytes(const spec::Supernet& net) {
    return static_cast<size_t>(net.in_h) * net.in_w * net.in_c;
  }

 private:
  Program& p_;
  uint64_t win_top_ = 0, win_end_ = 0;
  uint64_t top_ = 64;
};

// ReLU6 layers clamp at the code of 6.0, i.e. 6 / out_scale; their output scales are
// calibrated on ReLU6 outputs (max <= 6), so that code is >= 127 and the clamp is q6 = 127.
Desc conv_desc(const QConv& c, const ImageBuilder::Placed& pl, int h, int w, uint32_t in,
               uint32_t out) {
  Desc d;
  d.op = static_cast<uint8_t>(c.op);
  d.act = static_cast<uint8_t>(c.act);
  d.k = static_cast<uint8_t>(c.k);
  d.stride = static_cast<uint8_t>(c.stride);
  d.h = static_cast<uint16_t>(h);
  d.w = static_cast<uint16_t>(w);
  d.cin = static_cast<uint16_t>(c.op == hw::Op::DwConv ? c.cout : c.cin);
  d.cout = static_cast<uint16_t>(c.cout);
  d.in_addr = in;
  d.out_addr = out;
  d.wgt_addr = pl.w;
  d.prm_addr = pl.prm;
  if (c.act == hw::Act::Relu6) d.q6 = 127;
  return d;
}

Desc add_desc(const QOp& op, int h, int w, int c, uint32_t a, uint32_t b, uint32_t out) {
  Desc d;
  d.op = static_cast<uint8_t>(hw::Op::Add);
  d.k = 1;
  d.h = static_cast<uint16_t>(h);
  d.w = static_cast<uint16_t>(w);
  d.cin = d.cout = static_cast<uint16_t>(c);
  d.in_addr = a;
  d.in2_addr = b;
  d.out_addr = out;
  d.m = op.add_a.m;
  d.s = op.add_a.s;
  d.mb = op.add_b.m;
  d.sb = op.add_b.s;
  return d;
}

// Whether a residual op's add can fold into its last convolution (Res, docs/engine.md "Folded
// residual"): the convolution's own activation is none (the add's applies after the sum) and it
// keeps the shape (stride 1).
bool folds_residual(const QOp& op) {
  return op.residual && !op.convs.empty() && op.convs.back().act == hw::Act::None &&
         op.convs.back().stride == 1;
}

// The last convolution `d` of a residual op with its add folded in: out = requant(y, add_a) +
// requant(residual at `res`, add_b).
Desc fold_residual(Desc d, const QOp& op, uint32_t res) {
  d.res = 1;
  d.in2_addr = res;
  d.m = op.add_a.m;
  d.s = op.add_a.s;
  d.mb = op.add_b.m;
  d.sb = op.add_b.s;
  d.act = static_cast<uint8_t>(hw::Act::None);  // the add's (add_desc)
  return d;
}

Desc gap_desc(const QSupernet& q, int h, int w, uint32_t in, uint32_t out) {
  Desc d;
  d.op = static_cast<uint8_t>(hw::Op::Gap);
  d.k = 1;
  d.h = static_cast<uint16_t>(h);
  d.w = static_cast<uint16_t>(w);
  d.cin = d.cout = static_cast<uint16_t>(q.net.head.channels);
  d.in_addr = in;
  d.out_addr = out;
  d.m = q.gap.m;
  d.s = q.gap.s;
  return d;
}

// Appends `d` to `out`, split into row bands (docs/engine.md "Row bands") when its input does not
// fit the input buffer of `cfg`: a sliding-window layer's band reads only the input rows (halo
// included) of its output rows, a residual add's band is an add of fewer rows. A layer that no
// band fits (a single output row's input rows too large), a global pool and a fully connected
// layer are appended whole: validation then reports them as Oversize.
void emit(std::vector<Desc>& out, const Desc& d, const hw::Config& cfg, bool halves = false) {
  // halves: a 1x1 Conv/DwConv reads no halo, so its bands cost no extra input bytes: it runs in
  // bands of at most half the buffer (the next band loads beside the one computing) once its
  // input takes more than that (candidate programs)
  const bool no_halo = halves && d.k == 1 && (d.op == static_cast<uint8_t>(hw::Op::Conv) ||
                                    d.op == static_cast<uint8_t>(hw::Op::DwConv));
  const uint64_t cap = no_halo && !cfg.mcu ? cfg.in_buf_bytes / 2 : cfg.in_buf_bytes;
  if (input_buffer_need(d, cfg) <= cap) {
    out.push_back(d);
    return;
  }
  const auto op = static_cast<hw::Op>(d.op);
  const uint64_t row = uint64_t{d.w} * d.cin;  // bytes of an input row (and of an Add's output row)
  if (op == hw::Op::Add) {
    // two inputs of n rows, the second at the next port-aligned offset
    const uint64_t n =
        cfg.in_buf_bytes > cfg.mem_bytes ? (cfg.in_buf_bytes - cfg.mem_bytes) / (2 * row) : 0;
    if (n == 0) {
      out.push_back(d);
      return;
    }
    for (uint32_t y = 0; y < d.h; y += static_cast<uint32_t>(n)) {
      Desc b = d;
      b.h = static_cast<uint16_t>(std::min<uint64_t>(n, d.h - y));
      b.in_addr = static_cast<uint32_t>(d.in_addr + y * row);
      b.in2_addr = static_cast<uint32_t>(d.in2_addr + y * row);
      b.out_addr = static_cast<uint32_t>(d.out_addr + y * row);
      out.push_back(b);
    }
    return;
  }
  const bool window = op == hw::Op::Conv || op == hw::Op::DwConv || op == hw::Op::MaxPool ||
                      op == hw::Op::AvgPool;
  if (!window) {
    out.push_back(d);
    return;
  }
  const uint64_t k = op == hw::Op::MaxPool || op == hw::Op::AvgPool ? 3 : d.k;
  const Shape s = shape_of(d);
  const uint64_t stride = d.stride, pad = (k - 1) / 2;
  // the buffer bytes of a band of n output rows: its input rows (at most), and a folded
  // residual's rows before them
  auto need = [&](uint64_t n) {
    Desc band = d;
    band.out_rows = static_cast<uint16_t>(n);
    band.h = static_cast<uint16_t>(std::min<uint64_t>((n - 1) * stride + k, d.h));
    return input_buffer_need(band, cfg);
  };
  uint64_t per = s.ho;  // output rows of a band: the most whose rows fit
  while (per > 0 && need(per) > cap) --per;
  if (per == 0) {
    out.push_back(d);
    return;
  }
  for (uint64_t r0 = 0; r0 < s.ho; r0 += per) {
    const uint64_t n = std::min<uint64_t>(per, s.ho - r0);
    const int64_t first = static_cast<int64_t>(r0 * stride) - static_cast<int64_t>(pad);
    const uint64_t y0 = static_cast<uint64_t>(std::max<int64_t>(first, 0));
    const auto y1 = static_cast<uint64_t>(
        std::min<int64_t>(d.h, first + static_cast<int64_t>((n - 1) * stride + k)));
    Desc b = d;
    b.h = static_cast<uint16_t>(y1 - y0);
    b.in_addr = static_cast<uint32_t>(d.in_addr + y0 * row);
    b.out_addr = static_cast<uint32_t>(d.out_addr + r0 * s.wo * d.cout);
    if (has_residual(d)) b.in2_addr = static_cast<uint32_t>(d.in2_addr + r0 * s.wo * d.cout);
    b.out_rows = static_cast<uint16_t>(n);
    b.pad_top = static_cast<uint8_t>(static_cast<int64_t>(y0) - first);
    out.push_back(b);
  }
}

// Packed descriptors run in at least this many groups of a mini-batch's images.
constexpr uint32_t kMinPackGroups = 2;

// PE steps of a Conv, DwConv or Fc layer `d` over `positions` output positions (several images'
// packed in a row): position tiles x channel tiles x steps per tile (k*k taps for depthwise,
// the reduction otherwise; K-split left out)
uint64_t pe_steps(const Desc& d, const hw::Config& cfg, uint64_t positions) {
  const uint64_t per_tile = d.op == static_cast<uint8_t>(hw::Op::DwConv) ? uint64_t{d.k} * d.k
                                                                          : shape_of(d).kred;
  return (positions + cfg.rows - 1) / cfg.rows * ((d.cout + cfg.cols - 1) / cfg.cols) * per_tile;
}

// Whether a (packed) layer computes so long for its input that loading the next layer's input
// after it, rather than beside it, costs little: its input loads in under a quarter of the PE
// steps its tiles take (a wide 1x1 convolution of a small map: 7x7x1104 to 184 channels).
bool loads_little(const Desc& d, const hw::Config& cfg) {
  const Shape s = shape_of(d);
  return 4 * (s.in_span / cfg.mem_bytes + 1) <= pe_steps(d, cfg, uint64_t{s.ho} * s.wo * s.images);
}

// Packed images (docs/engine.md "Packed images"): how many images of a mini-batch of `n` one
// descriptor of layer `d` runs at once on `cfg` (1: not packed). Conv, DwConv and Fc layers that
// are no band and fold no residual pack, in at least `min_groups` groups (so a layer that reads a
// group's outputs starts while the next group computes) whose inputs take at most half of the
// input buffer (the next layer loads beside it); if none, and `whole_buffer` (candidate
// programs), groups whose inputs take all of it when they compute long enough for their input
// (loads_little). The controller configurations do not pack.
uint32_t pack_count(const Desc& d, uint32_t n, const hw::Config& cfg, uint32_t min_groups,
                    bool whole_buffer = false) {
  const auto op = static_cast<hw::Op>(d.op);
  if (cfg.mcu || n < 2 || is_band(d) || has_residual(d) ||
      !(op == hw::Op::Conv || op == hw::Op::DwConv || op == hw::Op::Fc)) {
    return 1;
  }
  // the most images per group whose inputs take at most `room` bytes (and, long_only, that
  // compute long enough for their input)
  auto most = [&](uint64_t room, bool long_only) -> uint32_t {
    for (uint32_t g = std::max<uint32_t>(1, min_groups); g < n; ++g) {
      const uint32_t per = std::min<uint32_t>((n + g - 1) / g, 255);
      Desc probe = d;
      probe.images = static_cast<uint8_t>(per);
      if (per < 2) return 1;
      if (input_buffer_need(probe, cfg) <= room && (!long_only || loads_little(probe, cfg))) {
        return per;
      }
    }
    return 1;
  };
  const uint32_t half = most(cfg.in_buf_bytes / 2, false);
  return half > 1 || !whole_buffer ? half : most(cfg.in_buf_bytes, true);
}

// Whether the last convolution `d` (unfolded) of a residual op gains more by packing `n` images
// (its positions fill the PE array's rows: 7x7 maps) than the Add it then needs costs (two vector
// taps per pixel and channel tile), with a margin of 2: candidate programs fold the add
// otherwise.
bool pack_pays_for_add(const Desc& d, uint32_t n, const hw::Config& cfg) {
  if (input_buffer_need(d, cfg) > cfg.in_buf_bytes) return false;  // a band: no packing
  const uint32_t per = pack_count(d, n, cfg, kMinPackGroups, true);
  if (per < 2) return false;
  const Shape s = shape_of(d);
  const uint64_t pos = uint64_t{s.ho} * s.wo, ct = (d.cout + cfg.cols - 1) / cfg.cols;
  // PE steps per image, alone and packed; the Add's vector taps per image
  const double alone = static_cast<double>(pe_steps(d, cfg, pos));
  const double packed = static_cast<double>(pe_steps(d, cfg, pos * per)) / per;
  const double add = static_cast<double>(pos * ct * 2);
  return alone - packed > 2 * add;
}

// The descriptors of one layer for each image of a mini-batch (`per_image`, the same layer on
// inputs and outputs `in_stride` / `out_stride` apart), packed into groups of pack_count()
// images where that applies; else as they are.
void emit_images(std::vector<Desc>& out, std::span<const Desc> per_image, const hw::Config& cfg,
                 uint32_t min_groups) {
  const auto n = static_cast<uint32_t>(per_image.size());
  bool regular = n >= 2;
  for (uint32_t i = 1; regular && i < n; ++i) {
    Desc a = per_image[i], b = per_image[0];
    regular = a.in_addr - b.in_addr == i * (per_image[1].in_addr - b.in_addr) &&
              a.out_addr - b.out_addr == i * (per_image[1].out_addr - b.out_addr);
    a.in_addr = b.in_addr;
    a.out_addr = b.out_addr;
    regular = regular && encode(a) == encode(b);
  }
  const uint32_t per = regular ? pack_count(per_image[0], n, cfg, min_groups, true) : 1;
  if (per < 2) {
    out.insert(out.end(), per_image.begin(), per_image.end());
    return;
  }
  for (uint32_t i = 0; i < n; i += per) {
    Desc d = per_image[i];
    d.images = static_cast<uint8_t>(std::min(per, n - i));
    d.in_stride = per_image[1].in_addr - per_image[0].in_addr;
    d.out_stride = per_image[1].out_addr - per_image[0].out_addr;
    out.push_back(d);
  }
}

void check_program(const Program& p, const hw::Config& cfg, const std::string& what) {
  for (size_t i = 0; i < p.descs.size(); ++i) {
    const hw::Err e = validate(p.descs[i], cfg, p.win_base, p.win_limit, p.scratch_base);
    if (e != hw::Err::None) {
      throw std::runtime_error(fmt::format(
          "compile: layer {} ({}) of {} does not run on config '{}': {}{}", i,
          op_name(p.descs[i].op), what, cfg.name, err_name(e),
          e == hw::Err::Oversize ? ": " + oversize_detail(p.descs[i], cfg) : std::string()));
    }
  }
  if (p.image.size() > cfg.addr_space()) {
    throw std::runtime_error(fmt::format(
        "compile: the memory image of {} needs {} bytes, more than the {}-byte address space of "
        "config '{}' (AddrBits {})",
        what, p.image.size(), cfg.addr_space(), cfg.name, cfg.addr_bits));
  }
}

}  // namespace

namespace {

// The order of a candidate program's descriptors (docs/engine.md "Image groups"): each
// image's descriptors [0, prefix_end) run group by group (`group` images at a time, layer-major
// within a group), then the rest layer-major over every image. prefix_end = 0 (or a group of
// every image) is plain layer-major. The images of a layer within what runs together pack into
// groups where that fills the PE array's rows better (docs/engine.md "Packed images").
struct Order {
  size_t prefix_end = 0, group = 1;
};

std::vector<Desc> arrange(const std::vector<std::vector<Desc>>& per_image, const Order& o,
                          const hw::Config& cfg) {
  std::vector<Desc> out;
  const size_t n = per_image.size();
  auto run = [&](size_t n0, size_t n1, size_t j0, size_t j1) {
    for (size_t j = j0; j < j1; ++j) {
      std::vector<Desc> layer;
      for (size_t i = n0; i < n1; ++i) layer.push_back(per_image[i][j]);
      emit_images(out, layer, cfg, kMinPackGroups);
    }
  };
  const size_t len = n ? per_image.front().size() : 0;
  const size_t pe = std::min(o.prefix_end, len), g = std::max<size_t>(1, o.group);
  for (size_t n0 = 0; pe != 0 && n0 < n; n0 += g) run(n0, std::min(n, n0 + g), 0, pe);
  run(0, n, pe, len);
  return out;
}

// Where compile() puts a candidate's activation tensor k for image n.
struct TensorPlace {
  std::vector<uint64_t> stride;  // k: bytes between images (64-byte-aligned size)
  // k: its blocks, each [first image, end image) at addr (image i at addr + (i - first) * stride)
  struct Block {
    size_t n0 = 0, n1 = 0;
    uint64_t addr = 0;
  };
  std::vector<std::vector<Block>> blocks;
  uint32_t at(size_t k, size_t n) const {
    for (const Block& b : blocks[k]) {
      if (n >= b.n0 && n < b.n1) return static_cast<uint32_t>(b.addr + (n - b.n0) * stride[k]);
    }
    throw std::logic_error("compile: tensor image without a place");
  }
};

// The order compile() gives a candidate program (ProgramOrder, docs/engine.md "Image groups"):
// `want`'s fields where set; else the prefix ends after the last choice layer whose largest
// tensor, for every image of the mini-batch, exceeds the scratch `window` (layer-major it could
// not stay on chip), and its groups take as many images as fit half the window with that
// prefix's largest tensor (at least one). No scratch: layer-major.
ProgramOrder order_for(std::span<const uint64_t> largest, size_t images, uint64_t window,
                       const ProgramOrder& want) {
  const size_t layers = largest.size() - 1;
  ProgramOrder o;
  if (want.prefix_layers >= 0) {
    o.prefix_layers = std::min<int>(want.prefix_layers, static_cast<int>(layers));
  } else {
    o.prefix_layers = 0;
    for (size_t i = 0; window != 0 && i < layers; ++i) {
      if (largest[i] * images > window) o.prefix_layers = static_cast<int>(i + 1);
    }
  }
  uint64_t big = 1;
  for (int i = 0; i < o.prefix_layers; ++i) big = std::max(big, largest[static_cast<size_t>(i)]);
  o.group = want.group != 0 ? want.group
                            : static_cast<uint32_t>(std::clamp<uint64_t>(
                                  window / 2 / big, 1, std::max<size_t>(1, images)));
  if (o.prefix_layers == 0) o.group = static_cast<uint32_t>(std::max<size_t>(1, images));
  return o;
}

using TensorFn = std::function<uint32_t(size_t, uint64_t, const std::string&)>;
using BuildFn = std::function<std::vector<Desc>(size_t, const TensorFn&)>;
// Places the activation tensors of a candidate's descriptors: `build(n, tensor)` returns image
// n's descriptors, calling `tensor(k, size, what)` for its k-th tensor; `o` orders them
// (arrange). A tensor only the prefix reads and writes takes one block per group of images, the
// others one block of every image. With an on-chip scratch of `window` bytes (docs/engine.md
// "On-chip scratch"; 0: none) a block goes into the window when it fits beside the blocks still
// live there, first fit in the order they are written; the rest, and all without a window, go
// to memory. A block lives from the first descriptor that writes it to the last that reads it
// (in the arranged order), and a later block may take its place: the engine loads a layer's
// inputs before any later layer writes.
TensorPlace place_tensors(const BuildFn& build, size_t images, const Order& o,
                          const hw::Config& cfg, uint64_t window, ImageBuilder& mem) {
  struct Tensor {
    uint64_t size = 0, at = 0;  // bytes of one image; planning address of image 0
    std::string what;
    size_t last = 0;  // the last descriptor of an image that reads it
  };
  // plan: each tensor at a distinct address above any real one (image n at at + n * stride)
  std::vector<Tensor> ts;
  TensorPlace tp;
  uint64_t top = uint64_t{1} << 31;
  const std::vector<Desc> one = build(0, [&](size_t, uint64_t size, const std::string& what) {
    ts.push_back({size, top, what});
    tp.stride.push_back((size + 63) / 64 * 64);
    top += tp.stride.back() * images;
    if (top > 0xFFFFFFFFull) {
      throw std::runtime_error("compile: the mini-batch's activations exceed 2 GiB");
    }
    return static_cast<uint32_t>(ts.back().at);
  });
  const size_t n_t = ts.size();
  auto owner = [&](uint64_t a) -> Tensor* {
    for (Tensor& t : ts) {
      if (a >= t.at && a < t.at + std::max<uint64_t>(t.size, 1)) return &t;
    }
    return nullptr;
  };
  for (size_t j = 0; j < one.size(); ++j) {
    const Desc& d = one[j];
    if (Tensor* t = owner(d.in_addr)) t->last = std::max(t->last, j);
    const bool in2 = d.op == static_cast<uint8_t>(hw::Op::Add) || has_residual(d);
    if (Tensor* t = in2 ? owner(d.in2_addr) : nullptr) t->last = std::max(t->last, j);
  }
  // blocks: per group for the prefix's own tensors
  const size_t g = std::max<size_t>(1, o.group);
  struct Unit {
    size_t k, n0, n1;
    uint64_t lo, hi;  // planning range
    size_t first = SIZE_MAX, last = 0;
  };
  std::vector<Unit> units;
  for (size_t k = 0; k < n_t; ++k) {
    const bool own = ts[k].last < o.prefix_end;
    for (size_t n0 = 0; n0 < images; n0 += own ? g : images) {
      const size_t n1 = own ? std::min(images, n0 + g) : images;
      units.push_back({k, n0, n1, ts[k].at + n0 * tp.stride[k], ts[k].at + n1 * tp.stride[k]});
    }
  }
  // lifetimes in the arranged order of the planned program
  std::vector<std::vector<Desc>> per_image(images);
  for (size_t n = 0; n < images; ++n) {
    per_image[n] = build(n, [&](size_t k, uint64_t, const std::string&) {
      return static_cast<uint32_t>(ts[k].at + n * tp.stride[k]);
    });
  }
  const std::vector<Desc> seq = arrange(per_image, o, cfg);
  for (size_t j = 0; j < seq.size(); ++j) {
    const Desc& d = seq[j];
    const Shape sh = shape_of(d);
    auto mark = [&](uint64_t a, uint64_t len, bool write) {
      for (Unit& u : units) {
        if (a < u.hi && a + std::max<uint64_t>(len, 1) > u.lo) {
          if (write) u.first = std::min(u.first, j);
          u.last = std::max(u.last, j);
        }
      }
    };
    mark(d.out_addr, sh.out_span, true);
    mark(d.in_addr, sh.in_span, false);
    if (d.op == static_cast<uint8_t>(hw::Op::Add)) mark(d.in2_addr, sh.in_bytes, false);
    if (has_residual(d)) mark(d.in2_addr, sh.out_bytes, false);
  }
  // first fit, in the order the blocks are written, of the blocks `off` leaves unplaced into
  // `cap` bytes: their offsets in `off`; returns the blocks placed and the bytes spanned
  std::vector<size_t> order(units.size());
  for (size_t u = 0; u < units.size(); ++u) order[u] = u;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return units[a].first < units[b].first; });
  auto bytes = [&](const Unit& u) { return tp.stride[u.k] * (u.n1 - u.n0); };
  auto first_fit = [&](uint64_t cap, std::vector<uint64_t>& off,
                       const std::vector<uint64_t>& skip) {
    std::vector<size_t> live;  // blocks placed, by offset
    size_t placed = 0;
    uint64_t extent = 0;
    for (const size_t k : order) {
      if (skip[k] != UINT64_MAX) continue;
      const Unit& u = units[k];
      std::erase_if(live, [&](size_t l) { return units[l].last < u.first; });
      uint64_t at = 0;
      for (const size_t l : live) {
        if (at + bytes(u) <= off[l]) break;
        at = std::max(at, off[l] + bytes(units[l]));
      }
      if (at + bytes(u) > cap) continue;
      off[k] = at;
      extent = std::max(extent, at + bytes(u));
      live.insert(std::upper_bound(live.begin(), live.end(), k,
                                   [&](size_t a, size_t b) { return off[a] < off[b]; }),
                  k);
      ++placed;
    }
    return std::pair{placed, extent};
  };
  const std::vector<uint64_t> none(units.size(), UINT64_MAX);
  std::vector<uint64_t> win_off = none, mem_off = none;
  const size_t on_chip = first_fit(window, win_off, none).first;
  tp.blocks.resize(n_t);
  uint64_t base = 0;
  if (on_chip != 0) {
    base = mem.open_window(window, fmt::format(
        "on-chip scratch window: {} of {} activation blocks (places reused)", on_chip,
        units.size()));
  }
  // the board's core (Mcu): its main memory is the board's own, small, SPRAM: the blocks off
  // the window share one region there the same way, a block taking a dead one's place
  uint64_t shared = 0;
  if (cfg.mcu) {
    const auto [n, extent] = first_fit(UINT64_MAX, mem_off, win_off);
    if (n != 0) {
      shared = mem.alloc(extent, fmt::format("activations: {} blocks (places reused)", n));
    }
  }
  for (size_t k = 0; k < units.size(); ++k) {
    const Unit& u = units[k];
    const std::string imgs =
        u.n1 - u.n0 == images ? "every image" : fmt::format("images {}-{}", u.n0, u.n1 - 1);
    const uint64_t a = win_off[k] != UINT64_MAX ? base + win_off[k]
                       : mem_off[k] != UINT64_MAX
                           ? shared + mem_off[k]
                           : mem.alloc(bytes(u), fmt::format("{} ({})", ts[u.k].what, imgs));
    tp.blocks[u.k].push_back({u.n0, u.n1, a});
  }
  return tp;
}

}  // namespace

namespace {

// compile() without its final check (`check` false: planning asks how large the image is)
Program build_program(const QSupernet& q, const spec::Candidate& cand,
                      std::span<const std::vector<uint8_t>> images, const hw::Config& cfg,
                      bool on_chip, const ProgramOrder& order_in, bool check) {
  const spec::Supernet& net = q.net;
  spec::validate_candidate(net, cand);
  Program p;
  ImageBuilder mem(p);
  uint32_t img_stride = 0;
  const uint32_t img_base = mem.place_images(q, images, img_stride);
  // weights of the stem, the chosen ops and the head (once, shared by every image)
  using Placed = ImageBuilder::Placed;
  const Placed stem = mem.place(q.stem, "stem"), head = mem.place(q.head_conv, "head.conv"),
               fc = mem.place(q.fc, "head.fc");
  std::vector<std::vector<Placed>> chosen(net.layers.size());
  for (size_t i = 0; i < net.layers.size(); ++i) {
    const auto& convs = q.ops[i][static_cast<size_t>(cand[i])].convs;
    for (size_t k = 0; k < convs.size(); ++k) {
      chosen[i].push_back(
          mem.place(convs[k], fmt::format("layers.{}.choices.{}.conv{}", i, cand[i], k)));
    }
  }
  // activations: each tensor of the candidate one block of every image's (image n at n times
  // the tensor's 64-byte-aligned size); each image's layers in `per_image`
  const auto shapes = spec::layer_shapes(net);
  const auto hi = head_input(net);
  // The global pool's outputs of all images side by side, and their logits: the classifier runs
  // once for a group of images, as a 1x1 convolution over a 1 x images "image" (the same
  // numbers as an Fc per image, with the images in the PE array's rows).
  const uint64_t head_c = static_cast<uint64_t>(net.head.channels);
  const uint32_t g_all = mem.alloc(head_c * images.size(), "gap outputs (every image)");
  const uint32_t lo_all =
      mem.alloc(static_cast<uint64_t>(net.classes) * images.size(), "logits (every image)");
  // build(n, place): image n's descriptors; `place(k, size, what)` gives the address of its k-th
  // activation tensor (the same tensors in the same order for every image). It records where
  // each choice layer's descriptors start (the head's at the end) and, while it runs, the choice
  // layer whose descriptors write the tensor being placed (the stem's: 0; the head's: the layer
  // count).
  std::vector<size_t> layer_start(net.layers.size() + 1, 0);
  size_t cur_layer = 0;
  auto build = [&](size_t n, const TensorFn& place) {
    std::vector<Desc> descs;
    cur_layer = 0;
    size_t k_t = 0;
    auto tensor = [&](uint64_t size, const std::string& what) { return place(k_t++, size, what); };
    const uint32_t x_in = img_base + static_cast<uint32_t>(n) * img_stride;
    const auto so = spec::stem_output(net);
    uint32_t x = tensor(static_cast<uint64_t>(so.h) * so.w * so.cin, "stem");
    emit(descs, conv_desc(q.stem, stem, net.in_h, net.in_w, x_in, x), cfg, true);
    for (size_t i = 0; i < net.layers.size(); ++i) {
      layer_start[i] = descs.size();
      cur_layer = i;
      const auto& s = shapes[i];
      const QOp& op = q.ops[i][static_cast<size_t>(cand[i])];
      const int oh = (s.h + s.stride - 1) / s.stride, ow = (s.w + s.stride - 1) / s.stride;
      if (op.convs.empty()) continue;  // skip: same tensor, same scale
      uint32_t cur = x;
      int ch = s.h, cw = s.w;
      // the add folds into the last convolution, unless that convolution packed (which a
      // folded residual does not) gains more than a separate Add costs
      bool fold = folds_residual(op);
      if (fold && images.size() > 1) {
        int h = ch, w = cw;  // the last convolution's input
        for (size_t c = 0; c + 1 < op.convs.size(); ++c) {
          h = (h + op.convs[c].stride - 1) / op.convs[c].stride;
          w = (w + op.convs[c].stride - 1) / op.convs[c].stride;
        }
        const size_t lc = op.convs.size() - 1;
        fold = !pack_pays_for_add(conv_desc(op.convs[lc], chosen[i][lc], h, w, 0, 0),
                                  static_cast<uint32_t>(images.size()), cfg);
      }
      for (size_t c = 0; c < op.convs.size(); ++c) {
        const QConv& qc = op.convs[c];
        const int nh = (ch + qc.stride - 1) / qc.stride, nw = (cw + qc.stride - 1) / qc.stride;
        const uint32_t out = tensor(static_cast<uint64_t>(nh) * nw * qc.cout,
                                    fmt::format("layer {} conv {}", i, c));
        Desc d = conv_desc(qc, chosen[i][c], ch, cw, cur, out);
        if (fold && c + 1 == op.convs.size()) d = fold_residual(d, op, x);
        emit(descs, d, cfg, true);
        cur = out;
        ch = nh;
        cw = nw;
      }
      if (op.residual && !fold) {
        const uint32_t out = tensor(static_cast<uint64_t>(oh) * ow * s.cout,
                                    fmt::format("layer {} residual", i));
        emit(descs, add_desc(op, oh, ow, s.cout, cur, x, out), cfg, true);
        cur = out;
      }
      x = cur;
    }
    layer_start[net.layers.size()] = descs.size();
    cur_layer = net.layers.size();
    const uint32_t hc =
        tensor(static_cast<uint64_t>(hi.h) * hi.w * net.head.channels, "head");
    emit(descs, conv_desc(q.head_conv, head, hi.h, hi.w, x, hc), cfg, true);
    descs.push_back(gap_desc(q, hi.h, hi.w, hc, static_cast<uint32_t>(g_all + n * head_c)));
    return descs;
  };
  // the largest activation tensor each choice layer writes (one image's bytes)
  std::vector<uint64_t> largest(net.layers.size() + 1, 0);
  build(0, [&](size_t, uint64_t size, const std::string&) {
    largest[cur_layer] = std::max(largest[cur_layer], size);
    return 0u;
  });
  const uint64_t window = on_chip ? cfg.scratch_bytes : 0;
  const ProgramOrder ord = order_for(largest, images.size(), window, order_in);
  const Order order{layer_start[ord.prefix_layers], ord.group};
  p.order = ord;
  const TensorPlace tp = place_tensors(build, images.size(), order, cfg, window, mem);
  std::vector<std::vector<Desc>> per_image(images.size());
  for (size_t n = 0; n < images.size(); ++n) {
    per_image[n] = build(n, [&](size_t k, uint64_t, const std::string&) { return tp.at(k, n); });
    p.logits_addr.push_back(static_cast<uint32_t>(lo_all + n * net.classes));
  }
  p.descs = arrange(per_image, order, cfg);
  // the classifier: groups of as many images as the input buffer holds
  const uint64_t group =
      std::max<uint64_t>(1, std::min<uint64_t>(cfg.in_buf_bytes / head_c, 0xFFFF));
  for (uint64_t n0 = 0; n0 < images.size(); n0 += group) {
    const uint64_t n = std::min<uint64_t>(group, images.size() - n0);
    Desc d = conv_desc(q.fc, fc, 1, static_cast<int>(n),
                       static_cast<uint32_t>(g_all + n0 * head_c),
                       static_cast<uint32_t>(lo_all + n0 * net.classes));
    d.op = static_cast<uint8_t>(hw::Op::Conv);
    d.k = 1;
    d.stride = 1;
    p.descs.push_back(d);
  }
  p.desc_addr = mem.input(uint64_t{hw::kDescBytes} * p.descs.size(), "descriptors");
  for (size_t i = 0; i < p.descs.size(); ++i) {
    write_desc(p.image, p.desc_addr + i * hw::kDescBytes, p.descs[i]);
  }
  p.desc_count = static_cast<uint32_t>(p.descs.size());
  p.win_base = 0;
  p.win_limit = static_cast<uint32_t>(p.image.size());
  if (check) check_program(p, cfg, "candidate " + spec::format_candidate(cand));
  return p;
}

}  // namespace

Program compile(const QSupernet& q, const spec::Candidate& cand,
                std::span<const std::vector<uint8_t>> images, const hw::Config& cfg, bool on_chip,
                const ProgramOrder& order) {
  return build_program(q, cand, images, cfg, on_chip, order, true);
}

std::vector<OpProblem> check_ops(const QSupernet& q, const hw::Config& cfg) {
  const spec::Supernet& net = q.net;
  const size_t L = net.layers.size();
  std::vector<OpProblem> out;
  if (L == 0 || L > cfg.max_layers) {
    out.push_back({-1, -1, "layers",
                   fmt::format("{} choice layers; batch mode on config '{}' takes 1..{}", L,
                               cfg.name, cfg.max_layers),
                   true});
  }
  for (size_t i = 0; i < L; ++i) {
    if (net.layers[i].choices.size() > cfg.max_choices) {
      out.push_back({static_cast<int>(i), -1, fmt::format("layers[{}].choices", i),
                     fmt::format("{} choices; batch mode on config '{}' takes at most {}",
                                 net.layers[i].choices.size(), cfg.name, cfg.max_choices),
                     true});
    }
  }
  // every descriptor of an op, banded as the compiler emits it, validated in a window of the
  // whole address space (addresses 0: shapes and capacities are what is checked here)
  const uint32_t limit = static_cast<uint32_t>(std::min<uint64_t>(cfg.addr_space(), 0xFFFFFFFFu));
  // (and the templates of an op, the stem or the head: one per band, at most 255 in the op table)
  size_t templates = 0;
  auto check = [&](int layer, int choice, const std::string& where, const Desc& d,
                   const std::string& part) {
    std::vector<Desc> bands;
    emit(bands, d, cfg);
    templates += bands.size();
    for (const Desc& b : bands) {
      const hw::Err e = validate(b, cfg, 0, limit, 0);
      if (e == hw::Err::None) continue;
      std::string what =
          e == hw::Err::Oversize ? oversize_detail(b, cfg)
          : e == hw::Err::Window
              ? fmt::format("a tensor of it does not fit the {}-byte address space (AddrBits {})",
                            cfg.addr_space(), cfg.addr_bits)
              : err_name(e);
      out.push_back({layer, choice, where,
                     fmt::format("{} ({} {}x{}, {}x{}x{} -> {} channels): {}, config '{}'", part,
                                 op_name(d.op), d.k, d.k, d.h, d.w, d.cin, d.cout, what,
                                 cfg.name)});
      return;  // one problem per descriptor
    }
  };
  auto count_templates = [&](int layer, int choice, const std::string& where) {
    if (templates > 0xFF) {
      out.push_back({layer, choice, where,
                     fmt::format("{} templates (row bands) on config '{}', more than the op "
                                 "table's 255 of a batch run",
                                 templates, cfg.name),
                     true});
    }
    templates = 0;
  };
  const ImageBuilder::Placed none{};
  check(-1, -1, "stem", conv_desc(q.stem, none, net.in_h, net.in_w, 0, 0), "its conv");
  count_templates(-1, -1, "stem");
  const auto shapes = spec::layer_shapes(net);
  for (size_t i = 0; i < L; ++i) {
    for (size_t c = 0; c < q.ops[i].size(); ++c) {
      const QOp& op = q.ops[i][c];
      const std::string where = fmt::format("layers[{}].choices[{}] '{}'", i, c,
                                            spec::op_name(net.layers[i].choices[c]));
      int h = shapes[i].h, w = shapes[i].w;
      for (size_t k = 0; k < op.convs.size(); ++k) {
        Desc d = conv_desc(op.convs[k], none, h, w, 0, 0);
        if (k + 1 == op.convs.size() && folds_residual(op)) d = fold_residual(d, op, 0);
        check(static_cast<int>(i), static_cast<int>(c), where, d,
              op.convs.size() == 1 ? std::string("its conv") : fmt::format("its conv {}", k + 1));
        h = (h + op.convs[k].stride - 1) / op.convs[k].stride;
        w = (w + op.convs[k].stride - 1) / op.convs[k].stride;
      }
      if (op.residual && !folds_residual(op)) {
        check(static_cast<int>(i), static_cast<int>(c), where,
              add_desc(op, h, w, shapes[i].cout, 0, 0, 0), "its residual add");
      }
      count_templates(static_cast<int>(i), static_cast<int>(c), where);
    }
  }
  const auto hi = head_input(net);
  check(-1, -1, "head", conv_desc(q.head_conv, none, hi.h, hi.w, 0, 0), "its conv");
  check(-1, -1, "head", gap_desc(q, hi.h, hi.w, 0, 0), "its global pool");
  check(-1, -1, "head", conv_desc(q.fc, none, 1, 1, 0, 0), "its classifier");
  count_templates(-1, -1, "head");
  return out;
}

QSupernet quantize_shapes(const spec::Supernet& net, uint64_t seed) {
  const floatnet::Tensor blank{net.in_c, net.in_h, net.in_w,
                               std::vector<float>(static_cast<size_t>(net.in_c) * net.in_h *
                                                  net.in_w)};
  return quantize(net, weights::random_weights(net, seed), std::span(&blank, 1));
}

void preflight(const QSupernet& q, const hw::Config& cfg, std::string_view source,
               std::span<const spec::Candidate> cands) {
  auto problems = check_ops(q, cfg);
  if (!cands.empty()) {
    // only the ops the candidates use (the stem, the head and net-wide limits always)
    std::erase_if(problems, [&](const OpProblem& p) {
      return p.batch_only ||
             (p.choice >= 0 && std::none_of(cands.begin(), cands.end(), [&](const auto& c) {
                return static_cast<size_t>(p.layer) < c.size() && c[p.layer] == p.choice;
              }));
    });
  }
  if (problems.empty()) return;
  std::string msg = fmt::format("{} cannot run on config '{}' ({} problem{}):",
                                source.empty() ? fmt::format("supernet '{}'", q.net.name)
                                               : std::string(source),
                                cfg.name, problems.size(), problems.size() > 1 ? "s" : "");
  for (const auto& p : problems) msg += fmt::format("\n  {}: {}", p.where, p.what);
  throw std::invalid_argument(msg);
}

namespace {

// compile_batch() without its final checks (`check` false: planning asks how large the image is)
BatchProgram build_batch(const QSupernet& q, std::span<const spec::Candidate> cands,
                         size_t generate, std::span<const std::vector<uint8_t>> images,
                         std::span<const uint8_t> labels, const hw::Config& cfg,
                         const BatchOptions& opt, bool check) {
  const spec::Supernet& net = q.net;
  const size_t L = net.layers.size();
  const size_t n_cands = generate ? generate : cands.size();
  if (n_cands == 0) throw std::invalid_argument("compile_batch: the batch has no candidates");
  if (images.empty()) throw std::invalid_argument("compile_batch: no images");
  if (opt.mini_batch == 0) throw std::invalid_argument("compile_batch: mini-batch 0 (at least 1)");
  if (labels.size() != images.size()) {
    throw std::invalid_argument(
        fmt::format("compile_batch: {} images but {} labels", images.size(), labels.size()));
  }
  if (L == 0 || L > cfg.max_layers) {
    throw std::invalid_argument(fmt::format(
        "compile_batch: supernet '{}' has {} choice layers, batch mode on `{}` takes 1..{}",
        net.name, L, cfg.name, cfg.max_layers));
  }
  for (size_t i = 0; i < L; ++i) {
    if (net.layers[i].choices.size() > cfg.max_choices) {
      throw std::invalid_argument(fmt::format(
          "compile_batch: layer {} has {} choices, batch mode on `{}` takes at most {}", i,
          net.layers[i].choices.size(), cfg.name, cfg.max_choices));
    }
  }
  if (n_cands > cfg.max_cands) {
    throw std::invalid_argument(
        fmt::format("compile_batch: {} candidates, batch mode on `{}` takes at most {}", n_cands,
                    cfg.name, cfg.max_cands));
  }
  for (size_t j = 0; j < cands.size(); ++j) {
    try {
      spec::validate_candidate(net, cands[j]);
    } catch (const spec::SpecError& e) {
      throw std::invalid_argument(fmt::format("compile_batch: candidate {}: {}", j, e.what()));
    }
  }
  BatchProgram bp;
  Program& p = bp.program;
  ImageBuilder mem(p);
  batch::Regs& r = bp.regs;
  r.num_layers = static_cast<uint32_t>(L);
  r.classes = static_cast<uint32_t>(net.classes);
  r.img_count = static_cast<uint32_t>(images.size());
  r.img_addr = mem.place_images(q, images, r.img_stride);
  r.label_addr = mem.input(labels.size(), "labels");
  std::copy(labels.begin(), labels.end(), p.image.begin() + r.label_addr);
  r.cand_stride = static_cast<uint32_t>(L);
  r.cand_count = static_cast<uint32_t>(n_cands);
  r.cand_addr = generate ? mem.alloc(uint64_t{r.cand_stride} * n_cands, "candidate vectors")
                        : mem.input(uint64_t{r.cand_stride} * n_cands, "candidate vectors");
  for (size_t j = 0; j < cands.size() && !generate; ++j) {
    for (size_t i = 0; i < L; ++i) {
      p.image[r.cand_addr + j * L + i] = static_cast<uint8_t>(cands[j][i]);
    }
  }
  if (generate) {
    r.gen_mode = static_cast<uint32_t>(opt.gen_mode);
    r.gen_seed = opt.gen_seed;
    r.gen_prob = opt.gen_prob;
    if (!opt.parents.empty()) {
      r.parent_count = static_cast<uint32_t>(opt.parents.size());
      r.parent_addr = mem.input(uint64_t{r.cand_stride} * opt.parents.size(), "parents");
      for (size_t j = 0; j < opt.parents.size(); ++j) {
        spec::validate_candidate(net, opt.parents[j]);
        for (size_t i = 0; i < L; ++i) {
          p.image[r.parent_addr + j * L + i] = static_cast<uint8_t>(opt.parents[j][i]);
        }
      }
    }
  }
  for (size_t i = 0; i < L; ++i) r.layer_k[i] = static_cast<uint32_t>(net.layers[i].choices.size());

  // the ops the batch can reach: every choice when candidates are generated on chip, else the
  // choices its candidates make (the others get neither weights nor templates: their op table
  // entries are never read)
  std::vector<std::vector<bool>> used(L);
  for (size_t i = 0; i < L; ++i) used[i].assign(q.ops[i].size(), generate > 0);
  for (const auto& c : cands) {
    for (size_t i = 0; i < L && generate == 0; ++i) used[i][static_cast<size_t>(c[i])] = true;
  }
  // weights of the stem, the head and every reachable op, once
  using Placed = ImageBuilder::Placed;
  const Placed stem = mem.place(q.stem, "stem"), head = mem.place(q.head_conv, "head.conv"),
               fc = mem.place(q.fc, "head.fc");
  std::vector<std::vector<std::vector<Placed>>> placed(L);
  for (size_t i = 0; i < L; ++i) {
    for (size_t c = 0; c < q.ops[i].size(); ++c) {
      std::vector<Placed> v;
      for (size_t k = 0; k < q.ops[i][c].convs.size() && used[i][c]; ++k) {
        v.push_back(
            mem.place(q.ops[i][c].convs[k], fmt::format("layers.{}.choices.{}.conv{}", i, c, k)));
      }
      placed[i].push_back(std::move(v));
    }
  }

  // activations: the arena (one slot per depth and mini-batch image), two scratch tensors per
  // mini-batch image for the insides of a node (the scheduler runs each template for every image
  // of the mini-batch before the next: PATCH InPlusS / OutPlusS add b * SCRATCH_STRIDE) and the
  // logits
  const auto shapes = spec::layer_shapes(net);
  const auto so = spec::stem_output(net);
  const auto hi = head_input(net);
  const uint32_t mb = static_cast<uint32_t>(std::min<size_t>(images.size(), opt.mini_batch));
  r.mini_batch = mb;
  auto round64 = [](uint64_t v) { return (v + 63) / 64 * 64; };
  std::vector<uint64_t> slot(L + 1);
  slot[0] = round64(static_cast<uint64_t>(so.h) * so.w * so.cin);
  uint64_t scratch = static_cast<uint64_t>(hi.h) * hi.w * net.head.channels;
  for (size_t i = 0; i < L; ++i) {
    const auto& s = shapes[i];
    slot[i + 1] = round64(static_cast<uint64_t>((s.h + s.stride - 1) / s.stride) *
                          ((s.w + s.stride - 1) / s.stride) * s.cout);
    for (size_t c = 0; c < q.ops[i].size(); ++c) {
      if (!used[i][c]) continue;
      int ch = s.h, cw = s.w;
      for (const QConv& qc : q.ops[i][c].convs) {
        ch = (ch + qc.stride - 1) / qc.stride;
        cw = (cw + qc.stride - 1) / qc.stride;
        scratch = std::max<uint64_t>(scratch, static_cast<uint64_t>(ch) * cw * qc.cout);
      }
    }
  }
  // The templates into `t` (docs/fusion.md "Op table and templates"); returns whether a packed
  // one steps by the arena stride (then every depth's slots must be the same distance apart).
  // (a Conv, DwConv or Fc template packs on the engine, docs/engine.md "Packed images")
  const bool pack = !cfg.mcu && mb > 1;
  uint32_t s1 = 0, s2 = 0;  // the scratch tensors of image 0 (below)
  auto build_templates = [&](std::vector<Desc>& t) {
    bool arena_packed = false;
    // (a layer too large for the input buffer: one template per row band, its patched fields
    // holding the band's offsets from X, Y or S)
    // (a Conv, DwConv or Fc template that fits packs groups of the mini-batch's images: its
    // strides are those of what its PATCH bits add, for consecutive images)
    // (X: the node's input, in the arena; the stem's: the images)
    auto templ = [&](Desc d, uint8_t patch, bool stem) {
      const uint32_t x_stride = stem ? r.img_stride : r.arena_stride[0];
      d.patch = patch;
      std::vector<Desc> bands;
      emit(bands, d, cfg);
      for (Desc& b : bands) {
        const uint32_t per = pack ? pack_count(b, mb, cfg, kMinPackGroups) : 1;
        if (per > 1) {
          arena_packed = arena_packed || (patch & hw::Patch::OutFromY) ||
                         ((patch & hw::Patch::InFromX) && !stem);
          b.images = static_cast<uint8_t>(per);
          b.in_stride = (patch & hw::Patch::InFromX)   ? x_stride
                        : (patch & hw::Patch::InPlusS) ? r.scratch_stride
                                                       : 0;
          b.out_stride = (patch & hw::Patch::OutFromL)   ? r.classes
                         : (patch & hw::Patch::OutFromY) ? r.arena_stride[0]
                         : (patch & hw::Patch::OutPlusS) ? r.scratch_stride
                                                         : 0;
        }
        t.push_back(b);
      }
    };
    const auto start_of = [&] { return static_cast<uint32_t>(t.size()); };
    // a run of templates as the op table holds it: first | count << 24
    const auto run_of = [&](uint32_t first, const char* what) {
      const uint32_t count = start_of() - first;
      if (count > 0xFF) {
        throw std::runtime_error(fmt::format(
            "compile_batch: {} of supernet '{}' needs {} templates on config '{}' (row bands), more "
            "than the op table's 255",
            what, net.name, count, cfg.name));
      }
      return hw::tpl_word(first, count);
    };
    uint32_t first = start_of();
    templ(conv_desc(q.stem, stem, net.in_h, net.in_w, 0, 0),
          hw::Patch::InFromX | hw::Patch::OutFromY, true);
    r.stem_tpl = run_of(first, "the stem");
    for (size_t i = 0; i < L; ++i) {
      const auto& s = shapes[i];
      for (size_t c = 0; c < q.ops[i].size(); ++c) {
        if (!used[i][c]) continue;  // (its op table entry stays 0)
        const QOp& op = q.ops[i][c];
        first = start_of();
        int ch = s.h, cw = s.w;
        const bool fold = folds_residual(op);
        for (size_t k = 0; k < op.convs.size(); ++k) {
          const bool last = k + 1 == op.convs.size();
          const uint32_t in = k % 2 == 0 ? s2 : s1, out = k % 2 == 0 ? s1 : s2;
          uint8_t patch = k == 0 ? hw::Patch::InFromX : hw::Patch::InPlusS;
          const bool to_y = last && (!op.residual || fold);
          patch |= to_y ? hw::Patch::OutFromY : hw::Patch::OutPlusS;
          Desc d = conv_desc(op.convs[k], placed[i][c][k], ch, cw, k == 0 ? 0 : in, to_y ? 0 : out);
          if (fold && last) {
            d = fold_residual(d, op, 0);  // the residual is the node's input X
            patch |= hw::Patch::In2FromX;
          }
          templ(d, patch, false);
          ch = (ch + op.convs[k].stride - 1) / op.convs[k].stride;
          cw = (cw + op.convs[k].stride - 1) / op.convs[k].stride;
        }
        if (op.residual && !fold) {
          const uint32_t last_out = (op.convs.size() - 1) % 2 == 0 ? s1 : s2;
          templ(add_desc(op, ch, cw, s.cout, last_out, 0, 0),
                hw::Patch::InPlusS | hw::Patch::In2FromX | hw::Patch::OutFromY, false);
        }
        r.optab[i * cfg.max_choices + c] =
            run_of(first, fmt::format("layer {} choice {}", i, c).c_str());
      }
    }
    first = start_of();
    templ(conv_desc(q.head_conv, head, hi.h, hi.w, 0, s1),
          hw::Patch::InFromX | hw::Patch::OutPlusS, false);
    templ(gap_desc(q, hi.h, hi.w, s1, s2), hw::Patch::InPlusS | hw::Patch::OutPlusS, false);
    templ(conv_desc(q.fc, fc, 1, 1, s2, 0), hw::Patch::InPlusS | hw::Patch::OutFromL, false);
    r.head_tpl = run_of(first, "the head");
    return arena_packed;
  };
  // Packed templates (docs/engine.md "Packed images") step from image to image by a stride the
  // template holds, whatever depth the node's input comes from: then every depth's slots are
  // the largest slot apart (only then: the arena grows). (Whether a template packs does not
  // depend on addresses or strides: a first build decides.)
  std::vector<Desc> dry;
  const bool uniform = pack && build_templates(dry);
  const uint64_t slot_max = *std::max_element(slot.begin(), slot.end());
  for (size_t d = 0; d <= L; ++d) {
    if (uniform) slot[d] = slot_max;
    r.arena_stride[d] = static_cast<uint32_t>(slot[d]);
  }
  r.scratch_stride = static_cast<uint32_t>(2 * round64(scratch));
  // Activations on chip (docs/engine.md "On-chip scratch"): the arena and the node insides in
  // the scratch's window when they fit it, else the node insides alone, else neither.
  uint64_t arena_bytes = 0;
  for (size_t d = 0; d <= L; ++d) arena_bytes += round64(slot[d] * mb);
  const uint64_t insides_bytes = round64(uint64_t{r.scratch_stride} * mb);
  const uint64_t window = opt.on_chip ? cfg.scratch_bytes : 0;
  const bool arena_on_chip = window != 0 && arena_bytes + insides_bytes <= window;
  const bool insides_on_chip = window != 0 && insides_bytes <= window;
  if (insides_on_chip) mem.open_window(window);
  for (size_t d = 0; d <= L; ++d) {
    const std::string what = fmt::format("arena depth {}", d);
    r.arena_addr[d] = arena_on_chip ? mem.in_window(slot[d] * mb, what)
                                    : mem.alloc(slot[d] * mb, what);
  }
  // image b's scratch tensors: s1 + b * stride and s2 + b * stride
  s1 = insides_on_chip ? mem.in_window(uint64_t{r.scratch_stride} * mb, "scratch (per image)")
                       : mem.alloc(uint64_t{r.scratch_stride} * mb, "scratch (per image)");
  s2 = s1 + static_cast<uint32_t>(round64(scratch));
  if (opt.dump_logits) {
    // node ids are below 1 + candidates * layers
    const uint64_t max_nodes = 1 + uint64_t{n_cands} * L;
    r.logits_stride = static_cast<uint32_t>(uint64_t{r.img_count} * r.classes);
    r.logits_addr = mem.alloc(max_nodes * r.logits_stride, "logits of every (leaf, image)");
  } else {
    r.logits_addr = mem.alloc(uint64_t{r.classes} * mb, "logits (per mini-batch image)");
  }

  std::vector<Desc>& t = p.descs;
  build_templates(t);
  r.tpl_addr = mem.input(uint64_t{hw::kDescBytes} * t.size(), "templates");
  for (size_t i = 0; i < t.size(); ++i) write_desc(p.image, r.tpl_addr + i * hw::kDescBytes, t[i]);
  p.desc_addr = r.tpl_addr;
  p.desc_count = static_cast<uint32_t>(t.size());
  p.win_base = 0;
  p.win_limit = static_cast<uint32_t>(p.image.size());
  if (!check) return bp;
  if (p.image.size() > cfg.addr_space()) {
    // the arena, the scratch and (without a dump) the logits grow with the mini-batch
    uint64_t per_image = r.scratch_stride + (opt.dump_logits ? 0 : r.classes);
    for (size_t d = 0; d <= L; ++d) per_image += slot[d];
    const uint64_t fixed = p.image.size() - (mb - 1) * per_image;
    const uint64_t fits = fixed <= cfg.addr_space() ? 1 + (cfg.addr_space() - fixed) / per_image
                                                    : 0;
    throw std::runtime_error(fmt::format(
        "compile_batch: the memory image of supernet '{}' needs {} bytes with a mini-batch of {}, "
        "more than the {}-byte address space of config '{}' (AddrBits {}){}",
        net.name, p.image.size(), mb, cfg.addr_space(), cfg.name, cfg.addr_bits,
        fits == 0 ? fmt::format("; a mini-batch of 1 still needs {} bytes: the weights of the "
                                "ops the batch reaches, the images, labels and templates",
                                fixed)
                  : fmt::format("; a mini-batch of at most {} fits", fits)));
  }
  // every template must run with its patched addresses inside the arena/images: check with
  // representative ones (the window covers the whole image, so the image base is in range), and
  // the scratch of the mini-batch's first and last image
  for (const uint32_t b : {0u, mb - 1}) {
    Program probe = p;
    for (Desc& d : probe.descs) d = patch_template(d, r.arena_addr[0], r.arena_addr[0],
                                                        r.arena_addr[0], b * r.scratch_stride,
                                                        mb - b);
    check_program(probe, cfg, fmt::format("supernet '{}' (batch templates)", net.name));
  }
  return bp;
}

// `n` blank images of the supernet's input size and their labels: what planning compiles with
struct Blank {
  std::vector<std::vector<uint8_t>> images;
  std::vector<uint8_t> labels;
  Blank(const QSupernet& q, size_t n)
      : images(n, std::vector<uint8_t>(ImageBuilder::input_bytes(q.net), 0)), labels(n, 0) {}
};

// The largest v in [lo, hi] with fits(v), given fits(lo) (fits is monotone: true up to a point).
template <class Fits>
size_t largest_fitting(size_t lo, size_t hi, Fits fits) {
  while (lo < hi) {
    const size_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid))
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

// Nodes of the fused graph of some candidates (root included): one per distinct prefix.
class NodeCount {
 public:
  size_t with(const spec::Candidate& c) const {
    size_t n = prefixes_.size() + 1;
    for (size_t i = 1; i <= c.size(); ++i) n += !prefixes_.contains({c.begin(), c.begin() + i});
    return n;
  }
  void add(const spec::Candidate& c) {
    for (size_t i = 1; i <= c.size(); ++i) prefixes_.insert({c.begin(), c.begin() + i});
  }

 private:
  std::set<std::vector<int>> prefixes_;
};

}  // namespace

BatchProgram compile_batch(const QSupernet& q, std::span<const spec::Candidate> cands,
                           size_t generate, std::span<const std::vector<uint8_t>> images,
                           std::span<const uint8_t> labels, const hw::Config& cfg,
                           const BatchOptions& opt) {
  return build_batch(q, cands, generate, images, labels, cfg, opt, true);
}

std::vector<BatchRun> plan_batch(const QSupernet& q, std::span<const spec::Candidate> cands,
                                 size_t generate, size_t n_images, const hw::Config& cfg,
                                 const BatchOptions& opt) {
  if (n_images == 0) throw std::invalid_argument("plan_batch: no images");
  const size_t n = generate ? generate : cands.size();
  if (n == 0) throw std::invalid_argument("plan_batch: the batch has no candidates");
  if (opt.mini_batch == 0) throw std::invalid_argument("plan_batch: mini-batch 0 (at least 1)");
  const Blank blank(q, n_images);
  const auto images = std::span<const std::vector<uint8_t>>(blank.images);
  const auto labels = std::span<const uint8_t>(blank.labels);
  // the bytes of candidates [c0, c1) on `imgs` images with mini-batch `mb`
  auto bytes = [&](size_t c0, size_t c1, size_t imgs, size_t mb) {
    BatchOptions o = opt;
    o.mini_batch = static_cast<uint32_t>(std::min(mb, imgs));
    return build_batch(q, generate ? cands : cands.subspan(c0, c1 - c0), generate,
                       images.first(imgs), labels.first(imgs), cfg, o, false)
        .program.image.size();
  };
  auto fits = [&](size_t c0, size_t c1, size_t imgs, size_t mb) {
    return bytes(c0, c1, imgs, mb) <= cfg.addr_space();
  };
  const size_t mb_all = std::min<size_t>(opt.mini_batch, n_images);
  NodeCount all;
  for (const auto& c : cands) all.add(c);
  if ((generate || (n <= cfg.max_cands && all.with(cands.front()) <= cfg.node_cap)) &&
      fits(0, n, n_images, mb_all)) {
    return {{0, generate ? 0 : n, 0, n_images, static_cast<uint32_t>(mb_all)}};  // one run
  }
  // candidate groups: in order, each as long as the node table, the candidate count and one
  // image's memory allow (generated candidates: one group, the hardware makes them)
  std::vector<std::pair<size_t, size_t>> groups;
  if (generate ||
      (n <= cfg.max_cands && all.with(cands.front()) <= cfg.node_cap && fits(0, n, 1, 1))) {
    groups.emplace_back(0, n);
  } else {
    for (size_t c0 = 0; c0 < n;) {
      NodeCount nc;
      if (nc.with(cands[c0]) > cfg.node_cap) {
        throw std::runtime_error(fmt::format(
            "plan_batch: candidate {} alone needs {} nodes, more than the {} of config '{}'",
            spec::format_candidate(cands[c0]), nc.with(cands[c0]), cfg.node_cap, cfg.name));
      }
      nc.add(cands[c0]);
      size_t c1 = c0 + 1;
      while (c1 < n && c1 - c0 < cfg.max_cands && nc.with(cands[c1]) <= cfg.node_cap &&
             fits(c0, c1 + 1, 1, 1)) {
        nc.add(cands[c1++]);
      }
      groups.emplace_back(c0, c1);
      c0 = c1;
    }
  }
  std::vector<BatchRun> runs;
  for (const auto& group : groups) {
    const size_t c0 = group.first, c1 = group.second;  // (lambdas below capture them)
    if (!fits(c0, c1, 1, 1)) {
      throw std::runtime_error(fmt::format(
          "plan_batch: {} of supernet '{}' needs {} bytes with one image, more than the {}-byte "
          "address space of config '{}' (AddrBits {}): its weights, one image's activations, "
          "templates and tables{}",
          generate ? fmt::format("generating {} candidates on chip", n)
                   : fmt::format("candidate {}", spec::format_candidate(cands[c0])),
          q.net.name, bytes(c0, c1, 1, 1), cfg.addr_space(), cfg.name, cfg.addr_bits,
          generate ? " (on-chip generation needs every op's weights: evaluate candidates drawn "
                     "on the host, e.g. --random N, instead)"
                   : ""));
    }
    // the largest mini-batch that fits, then the most images a run of it holds
    const size_t mb = largest_fitting(1, std::min<size_t>(opt.mini_batch, n_images),
                                      [&](size_t m) { return fits(c0, c1, m, m); });
    const size_t per = largest_fitting(mb, n_images, [&](size_t k) { return fits(c0, c1, k, mb); });
    for (size_t i0 = 0; i0 < n_images; i0 += per) {
      const size_t i1 = std::min(n_images, i0 + per);
      runs.push_back({generate ? 0 : c0, generate ? 0 : c1, i0, i1,
                      static_cast<uint32_t>(std::min(mb, i1 - i0))});
    }
  }
  return runs;
}

size_t images_per_program(const QSupernet& q, const spec::Candidate& cand, size_t n_images,
                          const hw::Config& cfg, bool on_chip) {
  if (n_images == 0) return 0;
  const Blank blank(q, n_images);
  const auto images = std::span<const std::vector<uint8_t>>(blank.images);
  auto fits = [&](size_t k) {
    return build_program(q, cand, images.first(k), cfg, on_chip, {}, false).image.size() <=
           cfg.addr_space();
  };
  if (fits(n_images)) return n_images;
  if (!fits(1)) {
    // one image does not fit: compile() says what (the image is larger than the address space)
    compile(q, cand, images.first(1), cfg, on_chip);
  }
  return largest_fitting(1, n_images, fits);
}

}  // namespace nasa::compile
