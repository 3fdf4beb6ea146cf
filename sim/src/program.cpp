#include "nasa/sim/program.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "nasa/refmodel.h"

namespace nasa::sim {
namespace {

uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

bool is(const Desc& d, hw::Op op) { return d.op == static_cast<uint8_t>(op); }

int8_t clip8(double v, double lo, double hi) {
  return static_cast<int8_t>(std::lround(std::clamp(v, lo, hi)));
}

// Mean fraction of a kernel's taps along one dimension that fall inside the image.
double inside_fraction(uint32_t size, uint32_t k, uint32_t stride) {
  const int64_t pad = (k - 1) / 2;
  const uint32_t out = (size + stride - 1) / stride;
  uint64_t inside = 0;
  for (uint32_t o = 0; o < out; ++o) {
    for (uint32_t t = 0; t < k; ++t) {
      const int64_t i = int64_t{o} * stride - pad + t;
      inside += i >= 0 && i < int64_t{size};
    }
  }
  return static_cast<double>(inside) / (double{1} * out * k);
}

// (M, S) with M / 2^S close to `gain` (M in [1, 65535], S in [1, 47]).
std::pair<uint16_t, uint8_t> mult_shift(double gain, Rng& rng) {
  // Compilers normalise the multiplier to 15-16 bits; sometimes use a short one.
  const double m_target = rng.chance(0.8) ? static_cast<double>(rng.uniform(16384, 65535))
                                          : static_cast<double>(rng.uniform(1, 65535));
  int s = static_cast<int>(std::lround(std::log2(m_target / gain)));
  s = std::clamp(s, 1, static_cast<int>(hw::kMaxShift));
  const double m = std::clamp(std::round(gain * std::ldexp(1.0, s)), 1.0, 65535.0);
  return {static_cast<uint16_t>(m), static_cast<uint8_t>(s)};
}

}  // namespace

Rng::Rng(uint64_t seed) {
  for (auto& s : s_) s = splitmix64(seed);
}

uint64_t Rng::next() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

uint64_t Rng::uniform(uint64_t lo, uint64_t hi) {
  if (hi <= lo) return lo;
  const uint64_t span = hi - lo + 1;
  return span == 0 ? next() : lo + next() % span;
}

int64_t Rng::uniform_signed(int64_t lo, int64_t hi) {
  return lo + static_cast<int64_t>(uniform(0, static_cast<uint64_t>(hi - lo)));
}

double Rng::real() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

double Rng::normal(double mean, double sigma) {
  // Box-Muller: portable, unlike std::normal_distribution.
  const double u1 = 1.0 - real();
  const double u2 = real();
  return mean + sigma * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

uint64_t derive_seed(uint64_t seed, uint64_t index) {
  uint64_t x = seed ^ (index * 0xD1B54A32D192ED03ull);
  splitmix64(x);
  return splitmix64(x);
}

Desc layer_shape(hw::Op op, uint16_t h, uint16_t w, uint16_t cin, uint16_t cout, uint8_t k,
                 uint8_t stride, hw::Act act, uint8_t q6) {
  Desc d;
  d.op = static_cast<uint8_t>(op);
  d.act = static_cast<uint8_t>(act);
  d.k = k;
  d.stride = stride;
  d.h = h;
  d.w = w;
  d.cin = cin;
  d.cout = cout;
  d.q6 = q6;
  return d;
}

std::string describe(const Desc& d) {
  return fmt::format(
      "op={}({}) act={} k={} stride={} h={} w={} cin={} cout={} in={:#x} in2={:#x} out={:#x} "
      "wgt={:#x} prm={:#x} m={} s={} q6={} mb={} sb={}",
      op_name(d.op), d.op, d.act, d.k, d.stride, d.h, d.w, d.cin, d.cout, d.in_addr, d.in2_addr,
      d.out_addr, d.wgt_addr, d.prm_addr, d.m, d.s, d.q6, d.mb, d.sb) +
         (is_band(d) ? fmt::format(" out_rows={} pad_top={}", d.out_rows, d.pad_top) : "") +
         (has_residual(d) ? " res=1" : "") +
         (is_packed(d) ? fmt::format(" images={} in_stride={} out_stride={}", d.images,
                                     d.in_stride, d.out_stride)
                       : "");
}

void rewrite_desc(Program& p, uint32_t index, const Desc& d) {
  if (index >= p.descs.size()) {
    throw std::out_of_range(
        fmt::format("rewrite_desc: program has {} descriptors, not {}", p.descs.size(), index + 1));
  }
  p.descs[index] = d;
  write_desc(p.image, p.desc_addr + uint64_t{index} * hw::kDescBytes, d);
}

ProgramBuilder::ProgramBuilder(const hw::Config& cfg, uint64_t seed)
    : cfg_(cfg),
      seed_(seed),
      rng_(seed),
      // Canaries before the window; the window itself starts unaligned.
      arena_(rng_.uniform(1, 3 * cfg.mem_bytes + 5), uint64_t{1} << 31),
      sc_rng_(derive_seed(seed, 0x5C)) {
  grow(arena_.base());
  // (its own random stream: whether a program uses the scratch leaves the rest of it alone)
  if (cfg.scratch_bytes != 0 && sc_rng_.chance(0.5)) {
    sc_lo_ = cfg.scratch_bytes;  // the lowest window (base 0 means none)
    sc_hi_ = sc_lo_ + cfg.scratch_bytes;
    sc_arena_ = Arena(sc_lo_ + sc_rng_.uniform(0, 3 * cfg.mem_bytes), sc_hi_);
  }
}

void ProgramBuilder::grow(uint64_t end) {
  const size_t old = image_.size();
  if (end <= old) return;
  image_.resize(end);
  calib_.resize(end);
  // Gaps and canaries hold random bytes, so a stray write almost surely changes something.
  for (size_t i = old; i < end; ++i) calib_[i] = image_[i] = static_cast<uint8_t>(rng_.next());
}

uint32_t ProgramBuilder::alloc(uint64_t size) {
  uint64_t gap = rng_.chance(0.2) ? 0 : rng_.uniform(1, 2 * cfg_.mem_bytes + 3);
  if (align_ > 1) gap = (align_ - (arena_.top() + gap) % align_) % align_ + gap;
  if (sc_hi_ != 0 && arena_.top() < sc_hi_ && arena_.top() + gap + size > sc_lo_) {
    arena_.alloc(sc_hi_ - arena_.top());  // (over the scratch's window)
  }
  const uint32_t at = arena_.alloc(gap + size);
  grow(arena_.top());
  return static_cast<uint32_t>(at + gap);
}

void ProgramBuilder::fill_activations(uint32_t addr, uint64_t size) {
  const double sigma = static_cast<double>(rng_.uniform(8, 60));
  const int mode = static_cast<int>(rng_.uniform(0, 9));
  const double zeros = 0.2 + 0.4 * rng_.real();
  for (uint64_t i = 0; i < size; ++i) {
    int8_t v;
    if (mode < 5) {  // after ReLU: many zeros, a half-normal tail
      v = rng_.chance(zeros) ? 0 : clip8(std::abs(rng_.normal(0, sigma)), 0, 127);
    } else if (mode < 9) {
      v = clip8(rng_.normal(0, sigma), -128, 127);
    } else {
      v = static_cast<int8_t>(rng_.next());
    }
    image_[addr + i] = calib_[addr + i] = static_cast<uint8_t>(v);
  }
}

void ProgramBuilder::fill_weights(uint32_t addr, uint64_t size, double sigma) {
  for (uint64_t i = 0; i < size; ++i) {
    image_[addr + i] = calib_[addr + i] =
        static_cast<uint8_t>(clip8(rng_.normal(0, sigma), -127, 127));
  }
}

uint32_t ProgramBuilder::activation(uint64_t size) {
  if (sc_hi_ == 0 || !sc_rng_.chance(0.5) ||
      sc_arena_.top() + size + 2 * cfg_.mem_bytes > sc_arena_.limit()) {
    return alloc(size);
  }
  const uint64_t gap = sc_rng_.chance(0.3) ? 0 : sc_rng_.uniform(1, 2 * cfg_.mem_bytes + 3);
  const uint32_t at = sc_arena_.alloc(gap + size);
  grow(sc_arena_.top());
  return static_cast<uint32_t>(at + gap);
}

uint32_t ProgramBuilder::tensor(uint64_t size) {
  const uint32_t at = activation(size);
  fill_activations(at, size);
  return at;
}

void ProgramBuilder::reserve_descs(uint32_t count) {
  if (desc_addr_) throw std::logic_error("ProgramBuilder: descriptors already placed");
  desc_addr_ = alloc(uint64_t{count} * hw::kDescBytes);
  reserved_descs_ = count;
}

void ProgramBuilder::add_raw(const Desc& d) { descs_.push_back(d); }

Desc ProgramBuilder::add_instance(Desc d) {
  const Shape s = shape_of(d);
  d.in_addr = tensor(s.in_span);
  if (is(d, hw::Op::Add)) d.in2_addr = tensor(s.in_bytes);
  d.out_addr = activation(s.out_span);
  ref::execute(d, calib_);
  descs_.push_back(d);
  return d;
}

Desc ProgramBuilder::add_layer(Desc d, Quant quant, bool junk) {
  Desc probe = d;  // M/S are picked below
  probe.s = probe.sb = 1;
  const hw::Err pre = validate(probe, cfg_, 0, 0xFFFFFFFFu);
  if (pre != hw::Err::None && pre != hw::Err::Window) {
    throw std::invalid_argument(fmt::format("ProgramBuilder::add_layer: invalid layer ({}): {}",
                                            static_cast<int>(pre), describe(d)));
  }
  const Shape s = shape_of(d);
  const bool add = is(d, hw::Op::Add);
  const bool res = has_residual(d);  // a residual folded into a Conv/DwConv
  double wsigma = static_cast<double>(rng_.uniform(8, 45));

  // Allocate in a random order so no tensor kind is always first or last.
  std::vector<int> order = {0, 1, 2, 3, 4};
  for (size_t i = order.size() - 1; i > 0; --i) std::swap(order[i], order[rng_.uniform(0, i)]);
  for (int what : order) {
    switch (what) {
      case 0:
        if (d.in_addr == 0) d.in_addr = tensor(s.in_span);
        break;
      case 1:
        if (add && d.in2_addr == 0) d.in2_addr = tensor(s.in_bytes);
        if (res && d.in2_addr == 0) d.in2_addr = tensor(s.out_bytes);
        break;
      case 2:
        if (s.wgt_bytes) {
          d.wgt_addr = alloc(s.wgt_bytes);
          fill_weights(d.wgt_addr, s.wgt_bytes, wsigma);
        }
        break;
      case 3:
        if (s.prm_bytes) d.prm_addr = alloc(s.prm_bytes);
        break;
      default:
        if (d.out_addr == 0) d.out_addr = activation(s.out_span);  // holds random junk
        break;
    }
  }

  // Mean square of the input as it will be when the layer runs.
  auto mean_sq = [&](uint32_t addr, uint64_t n) {
    const uint64_t step = std::max<uint64_t>(1, n / 4096);
    double sum = 0;
    uint64_t cnt = 0;
    for (uint64_t i = 0; i < n; i += step, ++cnt) {
      const double v = static_cast<int8_t>(calib_[addr + i]);
      sum += v * v;
    }
    return cnt ? std::max(sum / static_cast<double>(cnt), 1.0) : 1.0;
  };
  const double ex2 = mean_sq(d.in_addr, s.in_bytes);
  const double target = 30.0 + 30.0 * rng_.real();  // typical |output|
  const bool saturate = quant != Quant::Normal;
  const double dir = quant == Quant::SaturateLow ? -1.0 : 1.0;

  if (s.prm_bytes) {
    double taps = static_cast<double>(s.kred);
    if (!is(d, hw::Op::Fc)) {
      taps *= inside_fraction(d.h, d.k, d.stride) * inside_fraction(d.w, d.k, d.stride);
    }
    std::vector<ParamRecord> prm(d.cout);
    for (uint32_t c = 0; c < d.cout; ++c) {
      // Mean square of this channel's weights.
      double ew2 = 0;
      uint64_t n = 0;
      auto w2 = [&](uint64_t off) {
        const double v = static_cast<int8_t>(image_[d.wgt_addr + off]);
        ew2 += v * v;
        ++n;
      };
      if (is(d, hw::Op::DwConv)) {
        for (uint32_t t = 0; t < uint32_t{d.k} * d.k; ++t) w2(uint64_t{t} * d.cin + c);
      } else {
        const uint64_t step = std::max<uint64_t>(1, s.kred / 512);
        for (uint64_t i = 0; i < s.kred; i += step) w2(uint64_t{c} * s.kred + i);
      }
      ew2 = std::max(ew2 / static_cast<double>(std::max<uint64_t>(n, 1)), 0.25);
      const double sigma = std::sqrt(std::max(taps, 1.0) * ex2 * ew2);
      auto [m, sh] = mult_shift(target / sigma, rng_);
      double bias = rng_.normal(0, 0.3 * sigma);
      if (saturate) {
        sh = static_cast<uint8_t>(std::max<int>(1, sh - static_cast<int>(rng_.uniform(5, 10))));
        bias = dir * sigma * (2.0 + 2.0 * rng_.real());
      }
      prm[c] = ParamRecord{
          static_cast<int32_t>(std::clamp(std::round(bias), -2147483648.0, 2147483647.0)), m, sh};
    }
    write_params(image_, d.prm_addr, prm);
    write_params(calib_, d.prm_addr, prm);
  } else if (is(d, hw::Op::AvgPool) || is(d, hw::Op::Gap)) {
    const double window = is(d, hw::Op::Gap) ? double{1} * d.h * d.w : 9.0;
    const double gain = (saturate ? 8.0 + 24.0 * rng_.real() : 0.7 + 0.8 * rng_.real()) / window;
    std::tie(d.m, d.s) = mult_shift(gain, rng_);
  }
  if (add || res) {
    const double ga = saturate ? 2.0 + 6.0 * rng_.real() : 0.3 + 0.7 * rng_.real();
    const double gb = saturate ? 2.0 + 6.0 * rng_.real() : 0.3 + 0.7 * rng_.real();
    std::tie(d.m, d.s) = mult_shift(ga, rng_);
    std::tie(d.mb, d.sb) = mult_shift(gb, rng_);
  }

  if (junk) {
    // Fields the op ignores; the engine must not look at them.
    const bool relu6 = d.act == static_cast<uint8_t>(hw::Act::Relu6);
    if (!add && !res) d.in2_addr = static_cast<uint32_t>(rng_.next());
    if (!s.wgt_bytes) d.wgt_addr = static_cast<uint32_t>(rng_.next());
    if (!s.prm_bytes) d.prm_addr = static_cast<uint32_t>(rng_.next());
    if (!relu6) d.q6 = static_cast<uint8_t>(rng_.next());
    if (!add && !res) {
      d.mb = static_cast<uint16_t>(rng_.next());
      d.sb = static_cast<uint8_t>(rng_.next());
    }
    if ((s.prm_bytes && !res) || is(d, hw::Op::MaxPool)) {
      d.m = static_cast<uint16_t>(rng_.next());
      d.s = static_cast<uint8_t>(rng_.next());
    }
    if (is(d, hw::Op::Fc) || add || is(d, hw::Op::Gap)) {
      d.k = static_cast<uint8_t>(rng_.next());
      d.stride = static_cast<uint8_t>(rng_.next());
    }
  }

  ref::execute(d, calib_);
  descs_.push_back(d);
  return d;
}

Program ProgramBuilder::finish(std::string name, std::optional<uint32_t> limit_slack) {
  const auto count = static_cast<uint32_t>(descs_.size());
  if (desc_addr_ && count > reserved_descs_) {
    throw std::logic_error(
        fmt::format("ProgramBuilder: {} descriptors added, {} reserved", count, reserved_descs_));
  }
  if (!desc_addr_) desc_addr_ = alloc(uint64_t{count} * hw::kDescBytes);
  for (uint32_t i = 0; i < count; ++i) {
    write_desc(image_, *desc_addr_ + uint64_t{i} * hw::kDescBytes, descs_[i]);
  }
  const uint64_t slack = limit_slack        ? *limit_slack
                         : rng_.chance(0.3) ? 0
                                            : rng_.uniform(1, 2 * cfg_.mem_bytes + 5);
  const uint64_t limit = std::max(arena_.top(), sc_arena_.top()) + slack;
  // Canaries after the window: past the end of the last bus word plus a burst or two, so an
  // over-fetching DMA reads defined memory (the DRAM model counts it as stray).
  const uint64_t port = cfg_.mem_bytes;
  grow((limit + port - 1) / port * port + 2 * uint64_t{cfg_.burst_max} * port + 64);

  Program p;
  p.name = std::move(name);
  p.seed = seed_;
  p.image = image_;
  p.desc_addr = *desc_addr_;
  p.desc_count = count;
  p.win_base = static_cast<uint32_t>(arena_.base());
  p.win_limit = static_cast<uint32_t>(limit);
  p.scratch_base = sc_arena_.used() != 0 ? static_cast<uint32_t>(sc_lo_) : 0;
  p.descs = descs_;
  return p;
}

}  // namespace nasa::sim
