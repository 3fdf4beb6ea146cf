// Descriptor encoding, derived shapes and the engine's validation order (docs/engine.md).
#include "nasa/desc.h"

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "nasa/names.h"

namespace nasa {
namespace {

constexpr uint32_t field_mask(const hw::DescField& f) {
  return f.width >= 32 ? 0xFFFFFFFFu : ((1u << f.width) - 1u);
}

void put(std::array<uint32_t, hw::kDescWords>& words, const hw::DescField& f, uint32_t v) {
  const uint32_t mask = field_mask(f);
  words[f.word] = (words[f.word] & ~(mask << f.lsb)) | ((v & mask) << f.lsb);
}

uint32_t get(std::span<const uint32_t, hw::kDescWords> words, const hw::DescField& f) {
  return (words[f.word] >> f.lsb) & field_mask(f);
}

// Every field of NASA_DESC_FIELDS must be mapped below; this count keeps the two in step.
#define NASA_COUNT_FIELD(...) +1
constexpr int kNumFields = 0 NASA_DESC_FIELDS(NASA_COUNT_FIELD);
#undef NASA_COUNT_FIELD
static_assert(kNumFields == 25, "a descriptor field was added: map it in encode() and decode()");

// One place lists which Desc member each table field is stored in.
template <typename D, typename Fn>
void for_each_field(D& d, Fn&& fn) {
  namespace f = hw::field;
  fn(f::Op, d.op);
  fn(f::Act, d.act);
  fn(f::K, d.k);
  fn(f::Stride, d.stride);
  fn(f::H, d.h);
  fn(f::W, d.w);
  fn(f::Cin, d.cin);
  fn(f::Cout, d.cout);
  fn(f::InAddr, d.in_addr);
  fn(f::In2Addr, d.in2_addr);
  fn(f::OutAddr, d.out_addr);
  fn(f::WgtAddr, d.wgt_addr);
  fn(f::PrmAddr, d.prm_addr);
  fn(f::M, d.m);
  fn(f::S, d.s);
  fn(f::Q6, d.q6);
  fn(f::Mb, d.mb);
  fn(f::Sb, d.sb);
  fn(f::Patch, d.patch);
  fn(f::OutRows, d.out_rows);
  fn(f::PadTop, d.pad_top);
  fn(f::Res, d.res);
  fn(f::Images, d.images);
  fn(f::InStride, d.in_stride);
  fn(f::OutStride, d.out_stride);
}

bool is_op(uint8_t op, hw::Op o) { return op == static_cast<uint8_t>(o); }

bool valid_opcode(uint8_t op) {
#define NASA_OP_CASE(n, v, d) case v:
  switch (op) {
    NASA_OPCODES(NASA_OP_CASE)
    return true;
    default:
      return false;
  }
#undef NASA_OP_CASE
}

bool has_stride(uint8_t op) {
  return is_op(op, hw::Op::Conv) || is_op(op, hw::Op::DwConv) || is_op(op, hw::Op::MaxPool) ||
         is_op(op, hw::Op::AvgPool);
}

bool keeps_channels(uint8_t op) {
  return is_op(op, hw::Op::DwConv) || is_op(op, hw::Op::MaxPool) || is_op(op, hw::Op::AvgPool) ||
         is_op(op, hw::Op::Add) || is_op(op, hw::Op::Gap);
}

bool has_params(uint8_t op) {
  return is_op(op, hw::Op::Conv) || is_op(op, hw::Op::DwConv) || is_op(op, hw::Op::Fc);
}

bool shift_ok(uint8_t s) { return s >= 1 && s <= hw::kMaxShift; }

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

uint64_t align_up(uint64_t a, uint64_t b) { return b == 0 ? a : ceil_div(a, b) * b; }

}  // namespace

bool is_band(const Desc& d) { return d.out_rows != 0; }

uint32_t top_pad(const Desc& d) {
  if (!has_stride(d.op)) return 0;
  return is_band(d) ? d.pad_top : (uint32_t{d.k} - 1) / 2;  // (pools: k = 3)
}

Desc patch_template(Desc d, uint32_t x, uint32_t y, uint32_t l, uint32_t s, uint32_t left) {
  if (d.images > left) d.images = static_cast<uint8_t>(left);
  if (d.patch & hw::Patch::InFromX) {
    d.in_addr += x;
  } else if (d.patch & hw::Patch::InPlusS) {
    d.in_addr += s;
  }
  if (d.patch & hw::Patch::In2FromX) d.in2_addr += x;
  if (d.patch & hw::Patch::OutFromL) {
    d.out_addr += l;
  } else if (d.patch & hw::Patch::OutFromY) {
    d.out_addr += y;
  } else if (d.patch & hw::Patch::OutPlusS) {
    d.out_addr += s;
  }
  return d;
}

std::array<uint32_t, hw::kDescWords> encode(const Desc& d) {
  std::array<uint32_t, hw::kDescWords> words{};
  for_each_field(d, [&](const hw::DescField& f, auto v) { put(words, f, v); });
  return words;
}

Desc decode(std::span<const uint32_t, hw::kDescWords> words) {
  Desc d;
  for_each_field(d, [&](const hw::DescField& f, auto& v) {
    v = static_cast<std::remove_reference_t<decltype(v)>>(get(words, f));
  });
  return d;
}

bool gathers_input(const Desc& d, uint32_t mem_bytes) {
  if (!(is_op(d.op, hw::Op::Conv) || is_op(d.op, hw::Op::DwConv)) || d.k != 1 || d.stride != 2 ||
      is_packed(d)) {
    return false;
  }
  const Shape s = shape_of(d);
  return uint64_t{s.ho} * s.wo * gather_slot_bytes(d, mem_bytes) <= s.in_bytes;
}

uint64_t gather_slot_bytes(const Desc& d, uint32_t mem_bytes) {
  return ceil_div(uint64_t{d.cin}, mem_bytes) * mem_bytes;
}

Shape shape_of(const Desc& d) {
  Shape s;
  const uint64_t h = d.h, w = d.w, cin = d.cin, cout = d.cout, k = d.k;
  const uint64_t stride = d.stride == 0 ? 1 : d.stride;  // invalid, but never divide by zero
  s.in_bytes = h * w * cin;
  if (is_op(d.op, hw::Op::Fc) || is_op(d.op, hw::Op::Gap)) {
    s.ho = s.wo = 1;
  } else if (has_stride(d.op)) {
    s.ho = is_band(d) ? d.out_rows : static_cast<uint32_t>(ceil_div(h, stride));
    s.wo = static_cast<uint32_t>(ceil_div(w, stride));
  } else {
    s.ho = d.h;
    s.wo = d.w;
  }
  const uint64_t out_pixels = uint64_t{s.ho} * s.wo;
  s.out_bytes = out_pixels * cout;
  switch (static_cast<hw::Op>(d.op)) {
    case hw::Op::Conv:
      s.kred = k * k * cin;
      s.wgt_bytes = cout * s.kred;
      s.macs = out_pixels * cout * s.kred;
      break;
    case hw::Op::DwConv:
      s.kred = k * k;
      s.wgt_bytes = k * k * cin;
      s.macs = out_pixels * cout * s.kred;
      break;
    case hw::Op::Fc:
      s.kred = h * w * cin;
      s.wgt_bytes = cout * s.kred;
      s.macs = cout * s.kred;
      break;
    case hw::Op::MaxPool:
    case hw::Op::AvgPool:
      s.kred = 9;
      break;
    case hw::Op::Add:
      s.kred = 2;
      break;
    case hw::Op::Gap:
      s.kred = h * w;
      break;
    default:
      break;
  }
  if (has_params(d.op)) s.prm_bytes = cout * hw::kParamBytes;
  s.images = images_of(d);
  s.macs *= s.images;
  s.in_span = uint64_t{s.images - 1} * d.in_stride + s.in_bytes;
  s.out_span = uint64_t{s.images - 1} * d.out_stride + s.out_bytes;
  return s;
}

uint64_t residual_offset(const Desc& d, uint32_t mem_bytes) {
  return has_residual(d) ? align_up(shape_of(d).out_bytes, mem_bytes) : 0;
}

uint64_t input_buffer_need(const Desc& d, const hw::Config& cfg) {
  const uint64_t in = shape_of(d).in_bytes;
  return (is_op(d.op, hw::Op::Add) ? align_up(in, cfg.mem_bytes) : 0) +
         residual_offset(d, cfg.mem_bytes) + packed_image_offset(d, cfg.mem_bytes) *
         (images_of(d) - 1) + in;
}

uint64_t packed_image_offset(const Desc& d, uint32_t mem_bytes) {
  return align_up(shape_of(d).in_bytes, mem_bytes);
}

std::string oversize_detail(const Desc& d, const hw::Config& cfg) {
  const uint64_t need = input_buffer_need(d, cfg);
  if (need > cfg.in_buf_bytes) {
    return fmt::format("its input {}x{}x{}{} needs {} bytes of the {}-byte input buffer", d.h, d.w,
                       d.cin,
                       is_op(d.op, hw::Op::Add) ? " (two of them)"
                       : is_packed(d) ? fmt::format(" ({} images)", images_of(d))
                                      : std::string(),
                       need, cfg.in_buf_bytes);
  }
  return fmt::format("its reduction k*k*Cin = {} exceeds KredMax {}", shape_of(d).kred,
                     cfg.kred_max);
}

hw::Err validate(const Desc& d, const hw::Config& cfg, uint32_t win_base, uint32_t win_limit,
                 uint32_t scratch_base) {
  using hw::Err;
  using hw::Op;
  // 1-2: opcode and activation.
  if (!valid_opcode(d.op)) return Err::BadOpcode;
  if (d.act > static_cast<uint8_t>(hw::Act::Relu6)) return Err::BadAct;
  const bool conv_like = is_op(d.op, Op::Conv) || is_op(d.op, Op::DwConv);
  const bool pool = is_op(d.op, Op::MaxPool) || is_op(d.op, Op::AvgPool);
  // 3-4: stride and kernel.
  if (has_stride(d.op) && d.stride != 1 && d.stride != 2) return Err::BadStride;
  if (conv_like && d.k != 1 && d.k != 3 && d.k != 5 && d.k != 7) return Err::BadKernel;
  if (pool && d.k != 3) return Err::BadKernel;
  // 5-6: dimensions.
  if (d.h == 0 || d.w == 0 || d.cin == 0 || d.cout == 0) return Err::ZeroDim;
  if (keeps_channels(d.op) && d.cout != d.cin) return Err::BadChannels;
  // 7: a row band's shape (docs/engine.md "Row bands").
  if (is_band(d) && (!has_stride(d.op) || d.out_rows > ceil_div(d.h, d.stride) ||
                     d.pad_top > (uint32_t{d.k} - 1) / 2)) {
    return Err::BadBand;
  }
  // 7b: a folded residual (docs/engine.md "Folded residual").
  if (has_residual(d) && (!conv_like || d.stride != 1)) return Err::BadResidual;
  // 7c: packed images (docs/engine.md "Packed images"); the board's controller does not pack.
  if (is_packed(d) && (!(conv_like || is_op(d.op, Op::Fc)) || is_band(d) || has_residual(d) ||
                       cfg.mcu)) {
    return Err::BadPack;
  }
  // 8: buffer capacities.
  const Shape s = shape_of(d);
  if (input_buffer_need(d, cfg) > cfg.in_buf_bytes) return Err::Oversize;
  if ((is_op(d.op, Op::Conv) || is_op(d.op, Op::Fc)) && s.kred > cfg.kred_max) {
    return Err::Oversize;
  }
  // 9: descriptor-level quantization parameters.
  const bool add = is_op(d.op, Op::Add) || has_residual(d);  // requant(a) + requant(b)
  const bool desc_quant = is_op(d.op, Op::AvgPool) || is_op(d.op, Op::Gap) || add;
  if (desc_quant && !shift_ok(d.s)) return Err::BadQuant;
  if (add && !shift_ok(d.sb)) return Err::BadQuant;
  if (d.act == static_cast<uint8_t>(hw::Act::Relu6) && d.q6 > 127) return Err::BadQuant;
  // 10: every range inside [win_base, win_limit), in 64-bit so addr + size cannot wrap; an
  // input or output range wholly inside the on-chip scratch window or wholly outside it, weights
  // and records outside it (docs/engine.md "On-chip scratch").
  const ScratchWindow sw{cfg, scratch_base};
  auto inside = [&](uint32_t addr, uint64_t size) {
    return addr >= win_base && uint64_t{addr} + size <= uint64_t{win_limit};
  };
  auto data = [&](uint32_t addr, uint64_t size) {
    return inside(addr, size) && (sw.contains(addr, size) || !sw.overlaps(addr, size));
  };
  auto fixed = [&](uint32_t addr, uint64_t size) {
    return inside(addr, size) && !sw.overlaps(addr, size);
  };
  if (!data(d.in_addr, s.in_span)) return Err::Window;
  if (is_op(d.op, Op::Add) && !data(d.in2_addr, s.in_bytes)) return Err::Window;
  if (has_residual(d) && !data(d.in2_addr, s.out_bytes)) return Err::Window;
  if (s.wgt_bytes != 0 && !fixed(d.wgt_addr, s.wgt_bytes)) return Err::Window;
  if (s.prm_bytes != 0 && !fixed(d.prm_addr, s.prm_bytes)) return Err::Window;
  if (!data(d.out_addr, s.out_span)) return Err::Window;
  return Err::None;
}

std::string op_name(uint8_t op) {
#define NASA_OP_NAME(n, v, d) \
  case v:                     \
    return #n;
  switch (op) {
    NASA_OPCODES(NASA_OP_NAME)
    default:
      return "op" + std::to_string(op) + "?";
  }
#undef NASA_OP_NAME
}

std::string err_name(hw::Err e) {
#define NASA_ERR_NAME(n, v, d) \
  case hw::Err::n:             \
    return #n;
  switch (e) { NASA_ERRORS(NASA_ERR_NAME) }
#undef NASA_ERR_NAME
  return "err" + std::to_string(static_cast<int>(e)) + "?";
}

std::string counter_name(hw::Counter c) {
#define NASA_COUNTER_NAME(n, v, d) \
  case hw::Counter::n:             \
    return #n;
  switch (c) { NASA_COUNTERS(NASA_COUNTER_NAME) }
#undef NASA_COUNTER_NAME
  return "counter" + std::to_string(static_cast<int>(c)) + "?";
}

const hw::Config& config_by_name(std::string_view name) {
  std::string valid;
  std::vector<std::string> names;
  for (const hw::Config& c : hw::kConfigs) {
    if (c.name == name) return c;
    valid += (valid.empty() ? "" : ", ") + std::string(c.name);
    names.emplace_back(c.name);
  }
  throw std::invalid_argument("unknown hardware configuration '" + std::string(name) + "'" +
                              did_you_mean(name, names) + " (valid: " + valid + ")");
}

}  // namespace nasa
