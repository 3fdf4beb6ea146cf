#include "nasa/sim/random_layer.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <stdexcept>
#include <vector>

#include "nasa/sim/cosim.h"

namespace nasa::sim {
namespace {

constexpr std::array<uint16_t, 11> kSpatial = {1, 2, 3, 4, 5, 7, 8, 13, 14, 16, 28};
constexpr std::array<uint16_t, 9> kWidths = {8, 16, 24, 32, 40, 48, 64, 96, 128};

// Stages of the networks NAS searches (Fashion-MNIST 28/14/7, CIFAR 32/16/8, ImageNet at reduced
// resolution): channels grow as the resolution falls. Most layers come from a stage, so sizes and
// widths go together as in real supernets; the rest draw spatial size and width independently to
// cover odd and degenerate shapes.
struct Stage {
  std::array<uint16_t, 2> spatial;
  std::array<uint16_t, 4> widths;
};
constexpr std::array<Stage, 4> kStages = {{
    {{28, 32}, {8, 16, 24, 32}},
    {{14, 16}, {16, 32, 40, 48}},
    {{7, 8}, {32, 48, 64, 96}},
    {{7, 8}, {64, 96, 128, 160}},
}};

template <size_t N>
uint32_t weighted(Rng& rng, const std::array<uint32_t, N>& weights) {
  uint32_t total = 0;
  for (uint32_t w : weights) total += w;
  uint64_t r = rng.uniform(0, total - 1);
  for (uint32_t i = 0; i < N; ++i) {
    if (r < weights[i]) return i;
    r -= weights[i];
  }
  return N - 1;
}

uint16_t spatial(Rng& rng) { return rng.pick(std::span<const uint16_t>(kSpatial)); }

uint16_t channels(Rng& rng) {
  return rng.chance(0.45) ? static_cast<uint16_t>(rng.uniform(1, 33))
                          : rng.pick(std::span<const uint16_t>(kWidths));
}

uint64_t default_budget(const hw::Config& cfg) {
  // Simulation speed falls with the PE count: about 2M cycles/s for fpga, 250k for sim and 60k
  // for large on one core. These keep the default regressions (2000 sim layers, 200 of the
  // others) to a minute or two while still tiling most layers several times.
  const uint64_t pes = uint64_t{cfg.rows} * cfg.cols;
  return pes <= 16 ? 40000 : pes <= 256 ? 24000 : 16000;
}

}  // namespace

uint64_t work_cycles(const Desc& d, const hw::Config& cfg) {
  const Shape s = shape_of(d);
  const uint64_t pe = uint64_t{cfg.rows} * cfg.cols;
  uint64_t taps = 0;
  switch (static_cast<hw::Op>(d.op)) {
    case hw::Op::DwConv:
      taps = s.macs;
      break;
    case hw::Op::MaxPool:
    case hw::Op::AvgPool:
      taps = uint64_t{s.ho} * s.wo * d.cout * 9;
      break;
    case hw::Op::Add:
      taps = 2 * s.in_bytes;
      break;
    case hw::Op::Gap:
      taps = s.in_bytes;
      break;
    default:
      break;
  }
  const bool vec = taps != 0;
  const uint64_t bytes = s.images * (s.in_bytes * (d.op == static_cast<uint8_t>(hw::Op::Add) ? 2 : 1) +
                                     s.out_bytes) + s.wgt_bytes + s.prm_bytes;
  return (vec ? 0 : s.macs / pe) + taps / cfg.cols + bytes / cfg.mem_bytes;
}

Desc random_shape(Rng& rng, const hw::Config& cfg, const RandomLayerOptions& opt) {
  const uint64_t base_budget = opt.max_work_cycles ? opt.max_work_cycles : default_budget(cfg);
  const uint64_t budget = rng.chance(0.125) ? 8 * base_budget : base_budget;
  constexpr std::array<hw::Op, 7> kOps = {hw::Op::Conv,    hw::Op::DwConv,  hw::Op::Fc,
                                          hw::Op::MaxPool, hw::Op::AvgPool, hw::Op::Add,
                                          hw::Op::Gap};
  constexpr std::array<uint32_t, 7> kOpWeights = {35, 20, 10, 7, 8, 10, 10};
  constexpr std::array<hw::Op, 3> kArrayOps = {hw::Op::Conv, hw::Op::DwConv, hw::Op::Add};
  const hw::Op op = opt.board_array ? kArrayOps[weighted(rng, std::array<uint32_t, 3>{40, 40, 20})]
                                    : kOps[weighted(rng, kOpWeights)];
  // A quarter of the convolutions fill the PE array exactly, so efficiency gets measured often.
  const bool array_shaped = op == hw::Op::Conv && rng.chance(0.25);
  for (int attempt = 0; attempt < 100000; ++attempt) {
    Desc d;
    d.op = static_cast<uint8_t>(op);
    const bool staged = rng.chance(0.6);
    const Stage& st = kStages[rng.uniform(0, kStages.size() - 1)];
    auto stage_width = [&] {
      // a width of the stage, sometimes off by a few channels (not a multiple of the array)
      const uint16_t w = rng.pick(std::span<const uint16_t>(st.widths));
      return rng.chance(0.25) ? static_cast<uint16_t>(rng.uniform(w / 2 + 1, w + 7)) : w;
    };
    if (staged) {
      d.h = d.w = rng.pick(std::span<const uint16_t>(st.spatial));
      d.cin = stage_width();
    } else {
      d.h = spatial(rng);
      d.w = rng.chance(0.2) ? spatial(rng) : d.h;
      d.cin = channels(rng);
    }
    d.cout = d.cin;
    d.k = 3;
    d.stride = 1;
    switch (op) {
      case hw::Op::Conv: {
        constexpr std::array<uint8_t, 4> kK = {1, 3, 5, 7};
        d.k = kK[weighted(rng, std::array<uint32_t, 4>{40, 40, 10, 10})];
        d.stride = rng.chance(d.k == 1 ? 0.1 : 0.3) ? 2 : 1;
        d.cout = staged ? stage_width() : channels(rng);
        if (opt.board_array && rng.chance(0.3)) {  // a stem (one input channel): k = 7 never fits
          d.cin = 1;                               // the firmware's buffer of its weights
          d.k = kK[weighted(rng, std::array<uint32_t, 3>{10, 60, 30})];
          // the most channels whose tap-major blocks (8 channels x k x k bytes) fit the buffer
          // (1x1: 64 at most, a small layer)
          const uint32_t fit = hw::mcu::kAStemBytes / (8u * d.k * d.k) * 8u;
          d.cout = static_cast<uint16_t>(rng.uniform(1, std::min<uint32_t>(64, fit)));
        }
        break;
      }
      case hw::Op::DwConv: {
        constexpr std::array<uint8_t, 4> kK = {1, 3, 5, 7};
        d.k = kK[weighted(rng, std::array<uint32_t, 4>{5, 50, 30, 15})];
        d.stride = rng.chance(0.3) ? 2 : 1;
        break;
      }
      case hw::Op::Fc: {
        constexpr std::array<uint16_t, 6> kSmall = {1, 2, 3, 4, 5, 7};
        if (rng.chance(0.7)) {
          d.h = d.w = 1;
        } else {
          d.h = rng.pick(std::span<const uint16_t>(kSmall));
          d.w = rng.chance(0.2) ? rng.pick(std::span<const uint16_t>(kSmall)) : d.h;
        }
        constexpr std::array<uint16_t, 3> kClasses = {10, 16, 100};
        d.cout = rng.chance(0.3) ? rng.pick(std::span<const uint16_t>(kClasses)) : channels(rng);
        d.k = 1;
        break;
      }
      case hw::Op::MaxPool:
      case hw::Op::AvgPool:
        d.stride = rng.chance(0.5) ? 2 : 1;
        break;
      default:
        d.k = 1;
        break;
    }
    // A fifth of the sliding-window layers are row bands (docs/engine.md "Row bands"): any
    // OutRows up to ceil(H/stride) and PadTop up to (k-1)/2, as the compiler's bands of layers
    // too large for the input buffer and every other legal combination.
    const bool window = op == hw::Op::Conv || op == hw::Op::DwConv || op == hw::Op::MaxPool ||
                        op == hw::Op::AvgPool;
    if (window && rng.chance(0.2)) {
      d.out_rows = static_cast<uint16_t>(rng.uniform(1, (d.h + d.stride - 1) / d.stride));
      d.pad_top = static_cast<uint8_t>(rng.uniform(0, (d.k - 1) / 2));
    }
    // A fifth of the stride-1 Conv/DwConv layers fold a residual add (docs/engine.md "Folded
    // residual").
    if ((op == hw::Op::Conv || op == hw::Op::DwConv) && d.stride == 1 && rng.chance(0.2)) {
      d.res = 1;
    }
    // A fifth of the other Conv/DwConv/Fc layers pack 2-12 images (docs/engine.md "Packed
    // images"): outputs apart by at least an image, inputs at any stride (even overlapping).
    if ((op == hw::Op::Conv || op == hw::Op::DwConv || op == hw::Op::Fc) && !is_band(d) &&
        !has_residual(d) && rng.chance(0.2)) {
      d.images = static_cast<uint8_t>(rng.uniform(2, 12));
      const Shape one = shape_of(d);
      const uint64_t gap = rng.chance(0.3) ? 0 : rng.uniform(1, 2 * cfg.mem_bytes + 3);
      d.out_stride = static_cast<uint32_t>(one.out_bytes + (rng.chance(0.5) ? gap : 0));
      const double r = rng.real();
      d.in_stride = static_cast<uint32_t>(r < 0.5   ? one.in_bytes + gap
                                          : r < 0.8 ? one.in_bytes
                                                    : rng.uniform(0, one.in_bytes));
    }
    const uint32_t act = weighted(rng, std::array<uint32_t, 3>{30, 50, 20});
    d.act = static_cast<uint8_t>(act);
    if (d.act == static_cast<uint8_t>(hw::Act::Relu6))
      d.q6 = static_cast<uint8_t>(rng.uniform(1, 127));
    // Shape checks only: an all-covering window (addresses are zero) and placeholder shifts
    // (add_layer picks the real requant).
    Desc probe = d;
    probe.s = probe.sb = 1;
    if (validate(probe, cfg, 0, 0xFFFFFFFFu) != hw::Err::None) continue;
    if (work_cycles(d, cfg) > budget) continue;
    if (array_shaped && !conv_qualifies(d, cfg)) continue;
    if (opt.board_array) {  // (what fpga/fw/fw.c runs on the board's MAC array)
      const bool stem = op == hw::Op::Conv && d.cin == 1;
      const uint32_t stem_bytes = (d.cout + 7u) / 8u * 8u * d.k * d.k;
      if (d.images > 1 || (!stem && d.cin % 8 != 0) || d.cin > 256 || d.cout > 256 || d.h > 255 ||
          d.w > 255 || (stem && stem_bytes > hw::mcu::kAStemBytes) ||
          (op == hw::Op::Conv && !stem && (d.k != 1 || d.stride != 1)) ||
          (op == hw::Op::DwConv && uint32_t{d.w} * d.cin > 4095)) {
        continue;
      }
    }
    return d;
  }
  throw std::logic_error(fmt::format("random_shape: no {} layer fits config '{}'",
                                     op_name(static_cast<uint8_t>(op)), cfg.name));
}

namespace {

// ~5% of layers saturate on purpose.
Quant random_quant(Rng& rng) {
  const double q = rng.real();
  return q < 0.025 ? Quant::SaturateHigh : q < 0.05 ? Quant::SaturateLow : Quant::Normal;
}

// Adds one random layer (shape, saturation, junk fields) to `b`; returns it completed.
Desc add_random_layer(ProgramBuilder& b, const hw::Config& cfg, const RandomLayerOptions& opt) {
  const Desc shape = random_shape(b.rng(), cfg, opt);
  const Quant quant = random_quant(b.rng());
  return b.add_layer(shape, quant, b.rng().chance(0.3));
}

void check_valid(const Desc& d, const hw::Config& cfg, const Program& p, const char* who) {
  if (const hw::Err e = validate(d, cfg, p.win_base, p.win_limit, p.scratch_base);
      e != hw::Err::None) {
    throw std::logic_error(fmt::format("{}: generated an invalid layer (error {}): {}", who,
                                       static_cast<int>(e), describe(d)));
  }
}

}  // namespace

Program random_layer(uint64_t seed, const hw::Config& cfg, const RandomLayerOptions& opt) {
  return random_stream(seed, cfg, 1, opt);
}

Program random_stream(uint64_t seed, const hw::Config& cfg, uint32_t images,
                      const RandomLayerOptions& opt) {
  if (images == 0) throw std::invalid_argument("random_stream: a stream needs at least one image");
  ProgramBuilder b(cfg, seed);
  if (opt.board_array) b.set_align(8);
  const Desc shape = random_shape(b.rng(), cfg, opt);
  if (b.rng().chance(0.5)) b.reserve_descs(images);  // (this order keeps every seed's layer)
  const Quant quant = random_quant(b.rng());
  const Desc d = b.add_layer(shape, quant, b.rng().chance(0.3));
  for (uint32_t i = 1; i < images; ++i) b.add_instance(d);
  Program p = b.finish(images == 1 ? fmt::format("random {} seed {:#x}", op_name(d.op), seed)
                                   : fmt::format("random {} x{} images seed {:#x}",
                                                 op_name(d.op), images, seed));
  p.stream = images;
  for (const Desc& x : p.descs) check_valid(x, cfg, p, "random_stream");
  return p;
}

namespace {

// A random valid layer reading an h x w x c tensor (Conv, DwConv, pools, Gap, Fc or Add with a
// fresh second input), or nothing when none of the tries fits the configuration.
std::optional<Desc> random_shape_after(Rng& rng, const hw::Config& cfg, uint16_t h, uint16_t w,
                                       uint16_t c, const RandomLayerOptions& opt) {
  const uint64_t budget = opt.max_work_cycles ? opt.max_work_cycles : default_budget(cfg);
  constexpr std::array<hw::Op, 7> kOps = {hw::Op::Conv,    hw::Op::DwConv,  hw::Op::Fc,
                                          hw::Op::MaxPool, hw::Op::AvgPool, hw::Op::Add,
                                          hw::Op::Gap};
  constexpr std::array<uint32_t, 7> kOpWeights = {40, 25, 5, 8, 7, 10, 5};
  for (int attempt = 0; attempt < 200; ++attempt) {
    Desc d;
    d.op = static_cast<uint8_t>(kOps[weighted(rng, kOpWeights)]);
    d.h = h;
    d.w = w;
    d.cin = d.cout = c;
    d.k = 3;
    d.stride = rng.chance(0.3) ? 2 : 1;
    switch (static_cast<hw::Op>(d.op)) {
      case hw::Op::Conv:
        d.k = std::array<uint8_t, 4>{1, 3, 5, 7}[weighted(rng, std::array<uint32_t, 4>{50, 35, 10, 5})];
        d.cout = channels(rng);
        break;
      case hw::Op::DwConv:
        d.k = std::array<uint8_t, 3>{3, 5, 7}[rng.uniform(0, 2)];
        break;
      case hw::Op::Fc:
        d.k = 1;
        d.stride = 1;
        d.cout = channels(rng);
        break;
      case hw::Op::Add:
      case hw::Op::Gap:
        d.k = 1;
        d.stride = 1;
        break;
      default:
        break;
    }
    d.act = static_cast<uint8_t>(weighted(rng, std::array<uint32_t, 3>{30, 50, 20}));
    if (d.act == static_cast<uint8_t>(hw::Act::Relu6)) {
      d.q6 = static_cast<uint8_t>(rng.uniform(1, 127));
    }
    Desc probe = d;
    probe.s = probe.sb = 1;
    if (validate(probe, cfg, 0, 0xFFFFFFFFu) != hw::Err::None) continue;
    if (work_cycles(d, cfg) > budget) continue;
    return d;
  }
  return std::nullopt;
}

}  // namespace

void corrupt(Program& p, uint64_t seed) {
  Rng rng(seed ^ 0xBADD);
  const auto flips = rng.uniform(1, 3);
  for (uint64_t f = 0; f < flips; ++f) {
    const auto i = static_cast<uint32_t>(rng.uniform(0, p.desc_count - 1));
    if (rng.chance(0.15) && uint64_t{p.descs[i].prm_addr} + 6 < p.image.size()) {
      p.image.at(p.descs[i].prm_addr + 6) = static_cast<uint8_t>(rng.uniform(0, 255));  // a shift
    } else {
      const auto byte = p.desc_addr + i * hw::kDescBytes + rng.uniform(0, hw::kDescBytes - 1);
      p.image.at(byte) ^= static_cast<uint8_t>(1u << rng.uniform(0, 7));
    }
  }
  p.name += " (corrupted)";
}

bool spoil_record(Program& p, uint64_t seed) {
  Rng rng(seed ^ 0x5EC0);
  std::vector<const Desc*> with;
  for (const Desc& d : p.descs) {
    const auto op = static_cast<hw::Op>(d.op);
    if ((op == hw::Op::Conv || op == hw::Op::DwConv || op == hw::Op::Fc) && d.cout != 0 &&
        uint64_t{d.prm_addr} + 8ull * d.cout <= p.image.size()) {
      with.push_back(&d);
    }
  }
  if (with.empty()) return false;
  const Desc& d = *with[rng.uniform(0, with.size() - 1)];
  const uint64_t c = rng.uniform(0, d.cout - 1);
  p.image[d.prm_addr + 8 * c + 6] =
      static_cast<uint8_t>(rng.chance(0.3) ? 0 : rng.uniform(hw::kMaxShift + 1, 255));
  p.name += " (bad record)";
  return true;
}

Program random_chain(uint64_t seed, const hw::Config& cfg, const RandomLayerOptions& opt) {
  ProgramBuilder b(cfg, seed);
  if (opt.board_array) b.set_align(8);
  const auto layers = static_cast<uint32_t>(b.rng().uniform(2, 6));
  if (b.rng().chance(0.5)) b.reserve_descs(layers);
  std::vector<Desc> ds;
  std::string kinds;
  for (uint32_t i = 0; i < layers; ++i) {
    std::optional<Desc> next;
    char kind = 'i';  // independent
    if (!ds.empty()) {
      const Desc& prev = ds.back();
      const Shape ps = shape_of(prev);
      const double r = b.rng().real();
      if (r < 0.25) {
        // the next image of a mini-batch: the same layer on a fresh input (weights on chip)
        ds.push_back(b.add_instance(prev));
        kinds += 'r';
        continue;
      }
      if (r < 0.4 && ds.size() >= 2) {
        // a residual add of the previous output and an older one of the same shape (which may
        // still be draining: the two layers before a layer are checked)
        for (size_t j = ds.size() - 1; j-- > 0;) {
          const Shape os = shape_of(ds[j]);
          if (os.ho != ps.ho || os.wo != ps.wo || ds[j].cout != prev.cout) continue;
          Desc add = layer_shape(hw::Op::Add, ps.ho, ps.wo, prev.cout, prev.cout);
          add.act = static_cast<uint8_t>(b.rng().uniform(0, 1));
          add.in_addr = prev.out_addr;
          add.in2_addr = ds[j].out_addr;
          Desc probe = add;
          probe.s = probe.sb = 1;
          if (validate(probe, cfg, 0, 0xFFFFFFFFu) != hw::Err::None) break;
          next = add;
          kind = 'a';
          break;
        }
      }
      if (!next && r < 0.8) {
        next = random_shape_after(b.rng(), cfg, ps.ho, ps.wo, prev.cout, opt);
        if (next) {
          next->in_addr = prev.out_addr;  // reads what the layer before writes
          kind = 'd';
          // sometimes its output overwrites the previous layer's input, which that layer has
          // finished reading (but the layer before it may still be draining)
          const Shape ns = shape_of(*next);
          const bool free_slot = ns.out_bytes <= ps.in_bytes &&
                                 (prev.in_addr + uint64_t{ns.out_bytes} <= prev.out_addr ||
                                  uint64_t{prev.out_addr} + ps.out_bytes <= prev.in_addr);
          if (free_slot && b.rng().chance(0.3)) {
            next->out_addr = prev.in_addr;
            kind = 'w';
          }
        }
      }
    }
    if (!next) next = random_shape(b.rng(), cfg, opt);
    ds.push_back(b.add_layer(*next, random_quant(b.rng()), b.rng().chance(0.3)));
    kinds += kind;
  }
  std::string ops;
  for (const Desc& d : ds) {
    if (!ops.empty()) ops += ',';
    ops += op_name(d.op);
  }
  Program p = b.finish(fmt::format("random chain [{}] ({}) seed {:#x}", ops, kinds, seed));
  for (const Desc& d : ds) check_valid(d, cfg, p, "random_chain");
  return p;
}

Program random_program(uint64_t seed, const hw::Config& cfg, const RandomLayerOptions& opt) {
  ProgramBuilder b(cfg, seed);
  if (opt.board_array) b.set_align(8);
  const auto layers = static_cast<uint32_t>(b.rng().uniform(2, 5));
  if (b.rng().chance(0.5)) b.reserve_descs(layers);
  std::vector<Desc> ds;
  for (uint32_t i = 0; i < layers; ++i) ds.push_back(add_random_layer(b, cfg, opt));
  std::string ops;
  for (const Desc& d : ds) {
    if (!ops.empty()) ops += ',';
    ops += op_name(d.op);
  }
  Program p = b.finish(fmt::format("random program [{}] seed {:#x}", ops, seed));
  for (const Desc& d : ds) check_valid(d, cfg, p, "random_program");
  return p;
}

}  // namespace nasa::sim
