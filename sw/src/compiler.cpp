#include "nasa/compiler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>

#include "nasa/memory_image.h"

namespace nasa::compile {
namespace {

// Float conv + BN of the weight file, folded: OIHW weights and bias.
struct FoldedConv {
  int cout = 0, cin_g = 0, k = 1;
  std::vector<float> w, b;
};

FoldedConv fold(const weights::TensorFile& wf, const std::string& prefix) {
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
  return q;
}

struct Stats {
  std::map<std::string, float> max_abs;
  void observe(std::string_view name, const floatnet::Tensor& t) {
    float m = 0;
    for (float v : t.v) m = std::max(m, std::fabs(v));
    float& cur = max_abs[std::string(name)];
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
                   std::span<const floatnet::Tensor> images) {
  if (images.empty()) throw std::invalid_argument("quantize: no calibration images");
  const size_t L = net.layers.size();
  size_t rounds = 1;
  for (const auto& l : net.layers) rounds = std::max(rounds, l.choices.size());
  Stats st;
  for (size_t n = 0; n < images.size(); ++n) {
    for (size_t r = 0; r < rounds; ++r) {
      spec::Candidate c(L);
      for (size_t i = 0; i < L; ++i)
        c[i] = static_cast<int>((r + n + i) % net.layers[i].choices.size());
      floatnet::forward(
          net, wf, c, images[n],
          [&](std::string_view name, const floatnet::Tensor& t) { st.observe(name, t); });
    }
  }
  QSupernet q;
  q.net = net;
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
  q.stem = quantize_conv(fold(wf, "stem"), false, net.stem.stride, act, q.in_scale, q.scale[0]);
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
          qo.convs.push_back(quantize_conv(fold(wf, prefix + ".expand"), false, 1, act, cur, se));
          cur = se;
        }
        const float sd = st.scale(prefix + ".dw");
        qo.convs.push_back(
            quantize_conv(fold(wf, prefix + ".dw"), true, net.layers[i].stride, act, cur, sd));
        qo.residual = net.layers[i].stride == 1 && shapes[i].cin == shapes[i].cout;
        const float sp = qo.residual ? st.scale(prefix + ".project") : sout;
        qo.convs.push_back(
            quantize_conv(fold(wf, prefix + ".project"), false, 1, hw::Act::None, sd, sp));
        if (qo.residual) std::tie(qo.add_a, qo.add_b) = quant::add_requant(sp, sin, sout);
      } else if (op.kind == spec::OpKind::Conv) {
        qo.convs.push_back(
            quantize_conv(fold(wf, prefix), false, net.layers[i].stride, act, sin, sout));
      }
      q.ops[i].push_back(std::move(qo));
    }
  }
  const float sh = st.scale("head.conv"), sg = st.scale("head.gap");
  q.head_conv = quantize_conv(fold(wf, "head"), false, 1, act, q.scale[L], sh);
  const auto last = shapes.empty() ? spec::stem_output(net) : shapes.back();
  const int hw_out =
      ((last.h + last.stride - 1) / last.stride) * ((last.w + last.stride - 1) / last.stride);
  q.gap = quant::gap_requant(sh, sg, hw_out);
  q.logit_scale = st.scale("logits");
  FoldedConv fc;
  fc.cout = net.classes;
  fc.cin_g = net.head.channels;
  fc.k = 1;
  const auto fw = wf.at("head.fc.weight").f32();
  const auto fb = wf.at("head.fc.bias").f32();
  fc.w.assign(fw.begin(), fw.end());
  fc.b.assign(fb.begin(), fb.end());
  q.fc = quantize_conv(fc, false, 1, hw::Act::None, sg, q.logit_scale);
  q.fc.op = hw::Op::Fc;
  return q;
}

Program compile(const QSupernet& q, const spec::Candidate& cand,
                std::span<const std::vector<uint8_t>> images, const hw::Config& cfg) {
  const spec::Supernet& net = q.net;
  spec::validate_candidate(net, cand);
  const size_t in_bytes = static_cast<size_t>(net.in_h) * net.in_w * net.in_c;
  for (size_t n = 0; n < images.size(); ++n) {
    if (images[n].size() != in_bytes) {
      throw std::invalid_argument(
          fmt::format("compile: image {} has {} bytes, supernet '{}' takes "
                      "{}x{}x{} = {}",
                      n, images[n].size(), net.name, net.in_h, net.in_w, net.in_c, in_bytes));
    }
  }
  Program p;
  std::vector<uint8_t>& img = p.image;
  uint64_t top = 64;
  auto alloc = [&](uint64_t size, std::string what) {
    p.regions.push_back({std::move(what), static_cast<uint32_t>(top), size});
    const uint64_t a = top;
    top = (top + size + 63) / 64 * 64;
    if (img.size() < top) img.resize(top);
    return static_cast<uint32_t>(a);
  };
  // weights of the stem, the chosen ops and the head (once, shared by every image)
  struct Placed {
    uint32_t w = 0, prm = 0;
  };
  auto place = [&](const QConv& c, const std::string& name) {
    Placed pl;
    pl.w = alloc(c.w.size(), name + " weights");
    std::copy(c.w.begin(), c.w.end(), img.begin() + pl.w);
    pl.prm = alloc(c.prm.size() * hw::kParamBytes, name + " params");
    for (size_t i = 0; i < c.prm.size(); ++i) {
      write_param(img, pl.prm + i * hw::kParamBytes,
                  ParamRecord{c.prm[i].bias, c.prm[i].m, c.prm[i].s});
    }
    return pl;
  };
  const Placed stem = place(q.stem, "stem"), head = place(q.head_conv, "head.conv"),
               fc = place(q.fc, "head.fc");
  std::vector<std::vector<Placed>> chosen(net.layers.size());
  for (size_t i = 0; i < net.layers.size(); ++i) {
    const auto& convs = q.ops[i][static_cast<size_t>(cand[i])].convs;
    for (size_t k = 0; k < convs.size(); ++k) {
      chosen[i].push_back(
          place(convs[k], fmt::format("layers.{}.choices.{}.conv{}", i, cand[i], k)));
    }
  }
  // ReLU6 layers clamp at the code of 6.0, i.e. 6 / out_scale; their output scales are
  // calibrated on ReLU6 outputs (max <= 6), so that code is >= 127 and the clamp is q6 = 127.
  auto conv_desc = [&](const QConv& c, const Placed& pl, int h, int w, uint32_t in, uint32_t out) {
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
  };
  // activations: one buffer per tensor of one image, reused by every image
  const auto shapes = spec::layer_shapes(net);
  for (size_t n = 0; n < images.size(); ++n) {
    const uint32_t x_in = alloc(in_bytes, fmt::format("image {} input", n));
    for (size_t b = 0; b < in_bytes; ++b) {
      img[x_in + b] =
          static_cast<uint8_t>(quant::quantize_value(images[n][b] / 255.0f, q.in_scale));
    }
    const auto so = spec::stem_output(net);
    uint32_t x =
        alloc(static_cast<uint64_t>(so.h) * so.w * so.cin, fmt::format("image {} stem", n));
    p.descs.push_back(conv_desc(q.stem, stem, net.in_h, net.in_w, x_in, x));
    for (size_t i = 0; i < net.layers.size(); ++i) {
      const auto& s = shapes[i];
      const QOp& op = q.ops[i][static_cast<size_t>(cand[i])];
      const int oh = (s.h + s.stride - 1) / s.stride, ow = (s.w + s.stride - 1) / s.stride;
      if (op.convs.empty()) continue;  // skip: same tensor, same scale
      uint32_t cur = x;
      int ch = s.h, cw = s.w;
      for (size_t c = 0; c < op.convs.size(); ++c) {
        const QConv& qc = op.convs[c];
        const int nh = (ch + qc.stride - 1) / qc.stride, nw = (cw + qc.stride - 1) / qc.stride;
        const uint32_t out = alloc(static_cast<uint64_t>(nh) * nw * qc.cout,
                                   fmt::format("image {} layer {} conv {}", n, i, c));
        p.descs.push_back(conv_desc(qc, chosen[i][c], ch, cw, cur, out));
        cur = out;
        ch = nh;
        cw = nw;
      }
      if (op.residual) {
        const uint32_t out = alloc(static_cast<uint64_t>(oh) * ow * s.cout,
                                   fmt::format("image {} layer {} residual", n, i));
        Desc d;
        d.op = static_cast<uint8_t>(hw::Op::Add);
        d.k = 1;
        d.h = static_cast<uint16_t>(oh);
        d.w = static_cast<uint16_t>(ow);
        d.cin = d.cout = static_cast<uint16_t>(s.cout);
        d.in_addr = cur;
        d.in2_addr = x;
        d.out_addr = out;
        d.m = op.add_a.m;
        d.s = op.add_a.s;
        d.mb = op.add_b.m;
        d.sb = op.add_b.s;
        p.descs.push_back(d);
        cur = out;
      }
      x = cur;
    }
    const auto last = shapes.empty() ? spec::stem_output(net) : shapes.back();
    const int lh = (last.h + last.stride - 1) / last.stride,
              lw = (last.w + last.stride - 1) / last.stride;
    const uint32_t hc =
        alloc(static_cast<uint64_t>(lh) * lw * net.head.channels, fmt::format("image {} head", n));
    p.descs.push_back(conv_desc(q.head_conv, head, lh, lw, x, hc));
    const uint32_t g =
        alloc(static_cast<uint64_t>(net.head.channels), fmt::format("image {} gap", n));
    Desc gd;
    gd.op = static_cast<uint8_t>(hw::Op::Gap);
    gd.k = 1;
    gd.h = static_cast<uint16_t>(lh);
    gd.w = static_cast<uint16_t>(lw);
    gd.cin = gd.cout = static_cast<uint16_t>(net.head.channels);
    gd.in_addr = hc;
    gd.out_addr = g;
    gd.m = q.gap.m;
    gd.s = q.gap.s;
    p.descs.push_back(gd);
    const uint32_t lo =
        alloc(static_cast<uint64_t>(net.classes), fmt::format("image {} logits", n));
    p.descs.push_back(conv_desc(q.fc, fc, 1, 1, g, lo));
    p.logits_addr.push_back(lo);
  }
  p.desc_addr = alloc(uint64_t{hw::kDescBytes} * p.descs.size(), "descriptors");
  for (size_t i = 0; i < p.descs.size(); ++i) {
    write_desc(img, p.desc_addr + i * hw::kDescBytes, p.descs[i]);
  }
  p.desc_count = static_cast<uint32_t>(p.descs.size());
  p.win_base = 0;
  p.win_limit = static_cast<uint32_t>(img.size());
  for (uint32_t i = 0; i < p.desc_count; ++i) {
    const hw::Err e = validate(p.descs[i], cfg, p.win_base, p.win_limit);
    if (e != hw::Err::None) {
      throw std::runtime_error(
          fmt::format("compile: layer {} ({}) of candidate {} does not run on config '{}': {}", i,
                      op_name(p.descs[i].op), spec::format_candidate(cand), cfg.name, err_name(e)));
    }
  }
  return p;
}

}  // namespace nasa::compile
