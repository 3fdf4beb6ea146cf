/* Firmware of the board's controller (up5k) (docs/fpga.md): runs the engine's programs
 * and batch runs on the RV32IM core, bit for bit as the reference model does (sw/base/desc.cpp
 * validate(), sw/model/refmodel.cpp execute(), sw/model/batch_model.cpp run()). The host sees the
 * same CSRs, error codes, tables and counters as on the other configurations.
 * NASA_FW_ARRAY (the nasa_fw_array image, RV32I: rtl/nasa_mcu.sv with Array = 1): the MAC array
 * runs the 1x1 Convs, the DwConvs, the residual adds and the FCs it takes (arr_conv(),
 * add_any()); the rest runs in software (there is no dot unit). */
#include <stdint.h>

#include "mmio.h"
#include "nasa_hw.h"

typedef uint8_t u8;
typedef int8_t s8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef int32_t s32;
typedef uint64_t u64;
typedef int64_t s64;

#define REG(a) (*(volatile u32 *)(a))
#define M ((u8 *)MCU_MAIN_BASE) /* main memory: M[a] is byte a */

static u32 param(u32 k) { return REG(MCU_PARAM(k)); }
static void ctrl(u32 k, u32 v) { REG(MCU_CTRL(k)) = v; }
static u32 csr(u32 addr) { return param(addr / 4u); }
/* a read-only CSR the host reads from the parameter page */
static void set_csr(u32 addr, u32 v) { REG(MCU_PARAM(addr / 4u)) = v; }

static u32 le32(u32 a) {
  if ((a & 3u) == 0) return *(volatile u32 *)(M + a); /* (one load, aligned) */
  return (u32)M[a] | (u32)M[a + 1] << 8 | (u32)M[a + 2] << 16 | (u32)M[a + 3] << 24;
}

/* a * b of small operands: the RV32I build has no multiplier, and libgcc's __mulsi3 takes a
 * step per bit of its second operand; this one steps over the smaller one's bits. (RV32IM: one
 * mul.) */
static u32 mul_by(u32 a, u32 b) {
#if defined(__riscv_mul)
  return a * b;
#else
  if (b > a) {
    const u32 t = a;
    a = b;
    b = t;
  }
  u32 p = 0;
  if (b == 0) return 0;
  do { /* (two bits a pass, the test at the bottom: fewer jumps back) */
    if (b & 1u) p += a;
    if (b & 2u) p += a << 1;
    a <<= 2;
  } while ((b >>= 2) != 0);
  return p;
#endif
}

/* ---------------- run state ---------------- */
static u32 win_base, win_limit, layers_done;
static u64 macs;

static void set_macs(void) {
  REG(MCU_PARAM(MCU_P_MACS)) = (u32)macs;
  REG(MCU_PARAM(MCU_P_MACS + 1)) = (u32)(macs >> 32);
}

static void layer_completed(u64 layer_macs) {
  macs += layer_macs;
  ++layers_done;
  set_csr(NASA_CSR_LAYERS_DONE, layers_done);
  set_macs();
  ctrl(MCU_C_LAYER_END, 1);
}

#if NASA_FW_ARRAY
/* ---------------- the dot products in software (the array's controller has no dot unit) */
/* acc + the dot product of `runs` runs of n elements (element i of run j at x + j*xo + i*xi,
 * w + j*wo + i*wi), in `mode` (the dot unit's, MCU_DOT_*). (Not inlined: the ROM is full.) */
__attribute__((noinline)) static u32 dot(u32 mode, u32 x, u32 w, u32 n, u32 runs, u32 xi,
                                         u32 xo, u32 wi, u32 wo, u32 acc) {
  for (u32 j = 0; j < runs; ++j, x += xo, w += wo) {
    const u8 *xp = M + x, *wp = M + w;
    for (u32 i = 0; i < n; ++i, xp += xi, wp += wi) {
      const s32 v = (s8)*xp;
      if (mode == MCU_DOT_MAC) {
        acc += (u32)(v * (s8)*wp);
      } else if (mode == MCU_DOT_SUM) {
        acc += (u32)v;
      } else if (v > (s32)acc) {
        acc = (u32)v;
      }
    }
  }
  return acc;
}
#else
/* ---------------- the dot-product unit ---------------- */
#define DOT(k) REG(MCU_DOT(k))
/* (a GAP channel's pixels: up to InBuf elements in one run; strides: below InBuf) */
#if NASA_CFG_KRED_MAX > MCU_DOT_MAX_N || NASA_CFG_IN_BUF_BYTES > MCU_DOT_MAX_N || \
    NASA_CFG_IN_BUF_BYTES > MCU_DOT_MAX_STRIDE
#error "the dot unit's element count or strides cannot cover this configuration's layers"
#endif

/* acc + the dot product of `runs` runs of n elements (element i of run j at x + j*xo + i*xi,
 * w + j*wo + i*wi), in `mode`. A stride past the unit's 12 bits: one run at a time. */
static u32 dot(u32 mode, u32 x, u32 w, u32 n, u32 runs, u32 xi, u32 xo, u32 wi, u32 wo, u32 acc) {
  u32 per = runs;
  if (xo > MCU_DOT_MAX_STRIDE || wo > MCU_DOT_MAX_STRIDE) per = 1;
  DOT(MCU_D_SHAPE) = n | per << 16 | mode << 24;
  DOT(MCU_D_XSTR) = xi | (per == 1 ? 0 : xo << 16);
  DOT(MCU_D_WSTR) = wi | (per == 1 ? 0 : wo << 16);
  for (u32 j = 0; j < runs; j += per) { /* (one pass when per = runs) */
    DOT(MCU_D_X) = x;
    DOT(MCU_D_W) = w;
    DOT(MCU_D_ACC) = acc;
    acc = DOT(MCU_D_ACC);
    x += xo;
    w += wo;
  }
  return acc;
}
#endif

/* The clipped window of output coordinate o along one axis at stride 1 << sh with `pad` zeros
 * before coordinate 0: the taps [*t0, *t1) of k, the first input coordinate *i0. (The core's
 * multiplies take 36 cycles: the per-output loops below use shifts and running sums.) */
__attribute__((noinline)) static void clip(u32 o, u32 sh, u32 k, u32 pad, u32 size, u32 *t0,
                                           u32 *t1, u32 *i0) {
  const s32 first = (s32)(o << sh) - (s32)pad;
  const u32 lo = first < 0 ? (u32)-first : 0;
  u32 hi = k;
  if (first + (s32)k > (s32)size) hi = (u32)((s32)size - first);
  *t0 = lo;
  *t1 = hi;
  *i0 = (u32)(first + (s32)lo);
}

/* ---------------- descriptors ---------------- */
typedef struct {
  u32 op, act, k, stride, h, w, cin, cout, in, in2, out, wgt, prm, m, s, q6, mb, sb, patch;
  u32 out_rows, pad_top, res, images;
} desc_t;

/* A field of a descriptor's little-endian words: a byte, half-word or word on its own boundary
 * is one load (a shift costs the bit-serial core a cycle a bit), the others a shift and a mask */
typedef u16 __attribute__((may_alias)) u16a;
__attribute__((always_inline)) static inline u32 field(const u32 *w, u32 word, u32 lsb,
                                                       u32 width) {
  const u8 *b = (const u8 *)(w + word) + (lsb >> 3);
  if (width == 8 && (lsb & 7u) == 0) return *b;
  if (width == 16 && (lsb & 15u) == 0) return *(const u16a *)b;
  if (width == 32) return w[word];
  return (w[word] >> lsb) & ((2u << (width - 1u)) - 1u);
}
#define FIELD(words, F) \
  field((words), NASA_DESC_##F##_WORD, NASA_DESC_##F##_LSB, NASA_DESC_##F##_WIDTH)

static void read_desc(u32 at, desc_t *d) {
  /* the fields straight from memory (a word-aligned descriptor), else from a copy */
  u32 copy[16];
  const u32 *w = (const u32 *)(M + at);
  if (at & 3u) {
    for (u32 i = 0; i < 16; ++i) copy[i] = le32(at + 4 * i);
    w = copy;
  }
  d->op = FIELD(w, OP);
  d->act = FIELD(w, ACT);
  d->k = FIELD(w, K);
  d->stride = FIELD(w, STRIDE);
  d->h = FIELD(w, H);
  d->w = FIELD(w, W);
  d->cin = FIELD(w, CIN);
  d->cout = FIELD(w, COUT);
  d->in = FIELD(w, IN_ADDR);
  d->in2 = FIELD(w, IN2_ADDR);
  d->out = FIELD(w, OUT_ADDR);
  d->wgt = FIELD(w, WGT_ADDR);
  d->prm = FIELD(w, PRM_ADDR);
  d->m = FIELD(w, M);
  d->s = FIELD(w, S);
  d->q6 = FIELD(w, Q6);
  d->mb = FIELD(w, MB);
  d->sb = FIELD(w, SB);
  d->patch = FIELD(w, PATCH);
  d->out_rows = FIELD(w, OUT_ROWS);
  d->res = FIELD(w, RES);
  d->images = FIELD(w, IMAGES);
  /* the vertical padding: a row band's PadTop, else (k-1)/2 (used by sliding-window ops only) */
  d->pad_top = d->out_rows ? FIELD(w, PAD_TOP) : (d->k - 1) >> 1;
}

typedef struct {
  u32 in_bytes, out_bytes, ho, wo, pix, kred, wgt_bytes, prm_bytes;  /* pix: Ho x Wo */
} shape_t;

static int is_win(u32 op) {
  return op == NASA_OP_CONV || op == NASA_OP_DW_CONV || op == NASA_OP_MAX_POOL ||
         op == NASA_OP_AVG_POOL;
}
static int has_params(u32 op) {
  return op == NASA_OP_CONV || op == NASA_OP_DW_CONV || op == NASA_OP_FC;
}

/* sw/base/desc.cpp shape_of() in 32 bits, for a layer whose H x W (`hw`) and Cin are at most
 * InBuf (else it is Oversize): in_bytes < 2^30; Ho x Wo <= H x W, so out_bytes < 2^31; Conv's
 * kred = k*k*Cin < 2^22. The weights' size is set by validate() once kred passed KredMax. */
static const u8 ksq[8] = {0, 1, 0, 9, 0, 25, 0, 49}; /* k x k of odd k */
static void shape_of(const desc_t *d, u32 hw, shape_t *s) {
  const u32 sh = d->stride == 2;
  u32 pix = hw;
  s->in_bytes = mul_by(d->cin, hw);
  s->ho = d->h;
  s->wo = d->w;
  if (d->op == NASA_OP_FC || d->op == NASA_OP_GAP) {
    s->ho = s->wo = pix = 1;
  } else if (is_win(d->op)) {
    s->ho = d->out_rows ? d->out_rows : (d->h + sh) >> sh;
    s->wo = (d->w + sh) >> sh;
    if (sh || d->out_rows) pix = mul_by(s->wo, s->ho); /* (else H x W) */
  }
  s->pix = pix;
  /* (C x H x W again for DwConv, pools, Add of stride 1) */
  s->out_bytes = d->cout == d->cin && pix == hw ? s->in_bytes : mul_by(d->cout, pix);
  const u32 kk = ksq[d->k & 7u]; /* (Conv, DwConv: k is 1, 3, 5 or 7 now) */
  s->kred = 0;
  if (d->op == NASA_OP_CONV) s->kred = mul_by(d->cin, kk);
  else if (d->op == NASA_OP_DW_CONV) s->kred = kk;
  else if (d->op == NASA_OP_FC) s->kred = s->in_bytes;
  s->wgt_bytes = 0;
  s->prm_bytes = has_params(d->op) ? d->cout * NASA_PARAM_BYTES : 0;
}

/* The layer's MACs (sw/base/desc.cpp: Conv and DwConv Ho*Wo*Cout*kred, FC Cout*kred: out_bytes *
 * kred, up to 2^39) in two 32-bit products by kred (<= KredMax for Conv and FC, <= 49 DwConv). */
static u64 macs_of(const desc_t *d, const shape_t *s) {
  if (!has_params(d->op)) return 0;
  const u32 top = s->out_bytes >> 16; /* (mostly 0: no call) */
  const u32 hi = top ? mul_by(top, s->kred) : 0, lo = mul_by(s->out_bytes & 0xFFFFu, s->kred);
  return ((u64)hi << 16) + lo;
}

static int shift_ok(u32 s) { return s >= 1 && s <= NASA_MAX_SHIFT; }

static int inside(u32 addr, u32 size) {
  return addr >= win_base && size <= win_limit && addr <= win_limit - size;
}

/* sw/base/desc.cpp validate(): the checks in the engine's order */
static u32 validate(const desc_t *d, shape_t *s) {
  const u32 op = d->op;
  if (op < NASA_OP_CONV || op > NASA_OP_GAP) return NASA_ERR_BAD_OPCODE;
  if (d->act > NASA_ACT_RELU6) return NASA_ERR_BAD_ACT;
  const int conv_like = op == NASA_OP_CONV || op == NASA_OP_DW_CONV;
  const int pool = op == NASA_OP_MAX_POOL || op == NASA_OP_AVG_POOL;
  if (is_win(op) && d->stride != 1 && d->stride != 2) return NASA_ERR_BAD_STRIDE;
  if (conv_like && d->k != 1 && d->k != 3 && d->k != 5 && d->k != 7) return NASA_ERR_BAD_KERNEL;
  if (pool && d->k != 3) return NASA_ERR_BAD_KERNEL;
  if (d->h == 0 || d->w == 0 || d->cin == 0 || d->cout == 0) return NASA_ERR_ZERO_DIM;
  if ((op == NASA_OP_DW_CONV || pool || op == NASA_OP_ADD || op == NASA_OP_GAP) &&
      d->cout != d->cin) {
    return NASA_ERR_BAD_CHANNELS;
  }
  if (d->out_rows != 0 && (!is_win(op) || d->out_rows > (d->h + d->stride - 1) >> (d->stride - 1) ||
                           d->pad_top > (d->k - 1) >> 1)) {
    return NASA_ERR_BAD_BAND;
  }
  if (d->res && (!conv_like || d->stride != 1)) return NASA_ERR_BAD_RESIDUAL;
  if (d->images > 1) return NASA_ERR_BAD_PACK; /* the controller does not pack images */
  /* (H x W < 2^32; the input H x W x Cin is more than InBuf when either factor is) */
  const u32 hw = mul_by(d->h, d->w);
  if (hw > NASA_CFG_IN_BUF_BYTES || d->cin > NASA_CFG_IN_BUF_BYTES) return NASA_ERR_OVERSIZE;
  shape_of(d, hw, s);
  const u32 in = s->in_bytes, mb1 = NASA_CFG_MEM_BYTES - 1;
  const int add = op == NASA_OP_ADD || d->res; /* requant(a) + requant(b) */
  /* Add's second input after the first, a folded residual before the input: port aligned */
  const u32 need = (add ? ((op == NASA_OP_ADD ? in : s->out_bytes) + mb1) & ~mb1 : 0) + in;
  if (need > NASA_CFG_IN_BUF_BYTES) return NASA_ERR_OVERSIZE;
  if ((op == NASA_OP_CONV || op == NASA_OP_FC) && s->kred > NASA_CFG_KRED_MAX) {
    return NASA_ERR_OVERSIZE;
  }
  /* (Conv, FC: Cout x kred < 2^24 now; DwConv: kred x Cin < 2^21) */
  if (has_params(op)) s->wgt_bytes = mul_by(op == NASA_OP_DW_CONV ? d->cin : d->cout, s->kred);
  if ((op == NASA_OP_AVG_POOL || op == NASA_OP_GAP || add) && !shift_ok(d->s)) {
    return NASA_ERR_BAD_QUANT;
  }
  if (add && !shift_ok(d->sb)) return NASA_ERR_BAD_QUANT;
  if (d->act == NASA_ACT_RELU6 && d->q6 > 127) return NASA_ERR_BAD_QUANT;
  if (!inside(d->in, in)) return NASA_ERR_WINDOW;
  if (add && !inside(d->in2, op == NASA_OP_ADD ? in : s->out_bytes)) return NASA_ERR_WINDOW;
  if (s->wgt_bytes != 0 && !inside(d->wgt, s->wgt_bytes)) return NASA_ERR_WINDOW;
  if (s->prm_bytes != 0 && !inside(d->prm, s->prm_bytes)) return NASA_ERR_WINDOW;
  if (!inside(d->out, s->out_bytes)) return NASA_ERR_WINDOW;
  return NASA_ERR_NONE;
}

/* A per-channel record with S outside [1, 47]: checked before a layer runs in software (as the
 * reference does); the array checks its layers' records as it reads them (arr_run(): the engine
 * too finds a bad record at the tile that reads it, outputs of earlier tiles written). */
static int bad_record(const desc_t *d) {
  if (!has_params(d->op)) return 0;
  const u8 *r = M + d->prm + 6, *end = r + d->cout * NASA_PARAM_BYTES;
  for (; r != end; r += NASA_PARAM_BYTES) {
    if ((u32)*r - 1u >= NASA_MAX_SHIFT) return 1; /* (not 1..47) */
  }
  return 0;
}

/* ---------------- numerics (docs/engine.md) ---------------- */
static s32 lo_clamp, hi_clamp;

static void set_clamp(u32 act, u32 q6) {
  lo_clamp = act == NASA_ACT_NONE ? -128 : 0;
  hi_clamp = act == NASA_ACT_RELU6 ? (s32)q6 : 127;
}

/* (x * M + 2^(S-1)) >> S of an int8 x in 32 bits: |x * M| < 2^23, so the sum cannot overflow for
 * S <= 23, and for S >= 24 it lies in (0, 2^S): the result is 0. `round` = 2^(S-1). */
static s32 requant8(s32 x, u32 m, u32 s, s32 round) {
  return s >= 24 ? 0 : (x * (s32)m + round) >> s;
}

static u8 clamp8(s64 v) {
  if (v < lo_clamp) v = lo_clamp;
  if (v > hi_clamp) v = hi_clamp;
  return (u8)v;
}

/* Requant of an int32 sum: clamp((acc * M + 2^(S-1)) >> S) (the product fits: |acc * M| <
 * 2^47). The core shifts one bit a cycle, so what depends only on M, S and the clamp is set up
 * once per channel: the rounding term and the clamp bounds scaled by 2^S; an output then costs
 * one 64-bit product (RV32I: two 32-bit ones, rq()), two compares and one shift of the byte it
 * keeps. */
typedef struct {
  s64 round, lo_t, hi_t; /* 2^(S-1), lo * 2^S, (hi + 1) * 2^S */
  u32 m, s;
} rq_t;

static void rq_setup(rq_t *q, u32 m, u32 s) {
  const s64 unit = (s64)1 << s;
  q->m = m;
  q->s = s;
  q->round = unit >> 1;
  q->lo_t = (s64)lo_clamp * unit;
  q->hi_t = ((s64)hi_clamp + 1) * unit;
}

static u8 rq(const rq_t *q, u32 acc) {
#if defined(__riscv_mul)
  const s64 p = (s64)(s32)acc * (s64)q->m + q->round;
#else /* (libgcc's 64-bit __muldi3 takes a step per bit: |acc| x M, M < 2^16, as two 32-bit
       * products over its smaller operand's bits, mostly M's or |acc|'s low half's) */
  const u32 mag = (s32)acc < 0 ? -acc : acc;
  const u64 u = mul_by(mag & 0xFFFFu, q->m) + ((u64)mul_by(mag >> 16, q->m) << 16);
  const s64 p = ((s32)acc < 0 ? -(s64)u : (s64)u) + q->round;
#endif
  if (p < q->lo_t) return (u8)lo_clamp;
  if (p >= q->hi_t) return (u8)hi_clamp;
  /* lo <= p >> S <= hi: its low byte is bits S+7..S of p */
  const u32 lo = (u32)p, hi = (u32)((u64)p >> 32), s = q->s;
  if (s >= 32) return (u8)(hi >> (s - 32));
  if (s <= 24) return (u8)(lo >> s);
  return (u8)((lo >> s) | (hi << (32 - s)));
}

/* ---------------- ops ---------------- */
/* conv, dwconv, fc: per output, the in-image taps row by row on the dot unit (a kernel row is
 * one run: contiguous in HWC for conv, a channel's column for dwconv), then requant. */
static void conv(const desc_t *d, const shape_t *s) {
  const u32 k = d->k, sh = d->stride == 2, cin = d->cin, dw = d->op == NASA_OP_DW_CONV;
  const u32 xi = dw ? cin : 1, xo = d->w * cin, wi = dw ? cin : 1, wo = k * cin;
  const u32 kn = dw ? k : wo; /* the elements of an unclipped kernel row */
  const u32 xpad = ((k - 1) >> 1) * cin, xstep = cin << sh;
  for (u32 co = 0; co < d->cout; ++co) {
    const u32 r = d->prm + co * NASA_PARAM_BYTES;
    const u32 bias = le32(r);
    rq_t q;
    rq_setup(&q, M[r + 4] | (u32)M[r + 5] << 8, M[r + 6]);
    const u32 wrow = dw ? d->wgt + co : d->wgt + co * s->kred;
    const u32 xch = dw ? d->in + co : d->in;
    u32 out = d->out + co;
    for (u32 oy = 0; oy < s->ho; ++oy) {
      u32 ky0, ky1, iy;
      clip(oy, sh, k, d->pad_top, d->h, &ky0, &ky1, &iy);
      const u32 wy = wrow + ky0 * wo;
      u32 xf = xch + iy * xo - xpad; /* where the window's tap 0 would be (maybe outside) */
      for (u32 ox = 0; ox < s->wo; ++ox) {
        u32 kx0, kx1, ix;
        clip(ox, sh, k, (k - 1) >> 1, d->w, &kx0, &kx1, &ix);
        const u32 taps = kx1 - kx0, x0 = kx0 ? kx0 * cin : 0;
        const u32 acc = dot(MCU_DOT_MAC, xf + x0, wy + x0,
                            taps == k ? kn : dw ? taps : taps * cin, ky1 - ky0, xi, xo, wi, wo,
                            bias);
        M[out] = rq(&q, acc);
        out += d->cout;
        xf += xstep;
      }
    }
  }
}

/* 3x3 pools: max over the in-image taps, or their sum (zero padding) requantized */
static void pool(const desc_t *d, const shape_t *s) {
  const u32 sh = d->stride == 2, c = d->cin;
  const u32 mode = d->op == NASA_OP_MAX_POOL ? MCU_DOT_MAX : MCU_DOT_SUM;
  rq_t q;
  rq_setup(&q, d->m, mode == MCU_DOT_MAX ? 1 : d->s);  /* (max pool: not used) */
  for (u32 oy = 0; oy < s->ho; ++oy) {
    u32 ky0, ky1, iy;
    clip(oy, sh, 3, d->pad_top, d->h, &ky0, &ky1, &iy);
    for (u32 ox = 0; ox < s->wo; ++ox) {
      u32 kx0, kx1, ix;
      clip(ox, sh, 3, 1, d->w, &kx0, &kx1, &ix);
      for (u32 ch = 0; ch < c; ++ch) {
        const u32 v = dot(mode, d->in + (iy * d->w + ix) * c + ch, 0, kx1 - kx0, ky1 - ky0, c,
                          d->w * c, 0, 0, mode == MCU_DOT_MAX ? (u32)-128 : 0);
        M[d->out + (oy * s->wo + ox) * c + ch] =
            mode == MCU_DOT_MAX ? clamp8((s32)v) : rq(&q, v);
      }
    }
  }
}

/* out = requant(a, M, S) + requant(in2, Mb, Sb) over n bytes: an Add, or a Conv/DwConv's folded
 * residual (a: its own results) */
static void add(const desc_t *d, u32 a, u32 n) {
  const s32 ra = d->s >= 24 ? 0 : (s32)1 << (d->s - 1);
  const s32 rb = d->sb >= 24 ? 0 : (s32)1 << (d->sb - 1);
  for (u32 i = 0; i < n; ++i) {
    const s32 v = requant8((s8)M[a + i], d->m, d->s, ra) +
                  requant8((s8)M[d->in2 + i], d->mb, d->sb, rb);
    M[d->out + i] = (u8)(v < lo_clamp ? lo_clamp : v > hi_clamp ? hi_clamp : v);
  }
}

static void gap(const desc_t *d, const shape_t *s) {
  const u32 c = d->cin;
  rq_t q;
  rq_setup(&q, d->m, d->s);
#if NASA_FW_ARRAY
  /* (no dot unit: per channel, each pixel's byte v added as v ^ 0x80, v + 128 without the sign
   * extension's two shifts, 128 a pixel taken off at the end; the input is in_bytes = H x W x C) */
  const u32 off = mul_by(d->h, d->w) << 7;
  for (u32 ch = 0; ch < c; ++ch) {
    const u8 *p = M + d->in + ch, *end = p + s->in_bytes;
    u32 acc = 0;
    for (; p != end; p += c) acc += *p ^ 0x80u;
    M[d->out + ch] = rq(&q, acc - off);
  }
#else
  const u32 pixels = d->h * d->w;
  (void)s;
  for (u32 ch = 0; ch < c; ++ch) {
    M[d->out + ch] = rq(&q, dot(MCU_DOT_SUM, d->in + ch, 0, pixels, 1, c, 0, 0, 0, 0));
  }
#endif
}

#define NOT_TAKEN 0xFFu /* (an error code no layer has: the array did not take the layer) */
#if NASA_FW_ARRAY
/* ---------------- the MAC array (rtl/nasa_mcu_array_page.sv) ---------------- */
#define ARR(k) REG(MCU_PAGE_WORD(MCU_PAGE_ARRAY, k))

/* ARun's clamp fields (set_clamp()'s bounds: low -128 or 0, high 0..127) */
static u32 arr_clamp(void) {
  return (u32)(lo_clamp < 0) << MCU_AR_NEG | (u32)hi_clamp << MCU_AR_HI;
}

/* Runs a layer on the array (the page's words; ARun with the clamp starts it) and waits for its
 * end (the read waits): BadQuant if a record's shift was outside [1, 47] (the array stopped at
 * that record's block, the blocks before it written), Fault if the array lost a write (it owns
 * the memory port while it runs: never on the board). (Not inlined: the ROM is full.) */
__attribute__((noinline)) static u32 arr_run(u32 in, u32 wgt, u32 out, u32 prm, u32 pix,
                                             u32 geom, u32 rowb, u32 run) {
  ARR(MCU_A_IN) = in;
  ARR(MCU_A_WGT) = wgt;
  ARR(MCU_A_OUT) = out;
  ARR(MCU_A_PRM) = prm;
  ARR(MCU_A_PIX) = pix;
  ARR(MCU_A_GEOM) = geom;
  ARR(MCU_A_ROWB) = rowb;
  ARR(MCU_A_RUN) = run | arr_clamp();
  const u32 e = ARR(MCU_A_RUN);
  if (e & 1u << MCU_AR_BAD_REC) return NASA_ERR_BAD_QUANT;
  return (e & 1u << MCU_AR_FAULT) ? NASA_ERR_FAULT : NASA_ERR_NONE;
}

/* The stem's weights, tap-major as the array takes them (nasa_mac_array.sv): for each block of
 * eight output channels, a row of their eight weights a tap (the columns past K unused) */
static u8 stem_w[MCU_A_STEM_BYTES] __attribute__((aligned(8)));

/* A 1x1 Conv of stride 1, a DwConv or a stem (a Conv of one input channel) on the array, if it
 * takes it (nasa_mac_array.sv's constraints; validate() passed): C a multiple of 8 up to 256 (the
 * stem: 1), K up to 256, the input, weights and records 8-aligned, a window layer's geometry
 * inside the page's fields (H, W up to 255, W x C up to 4095), a stem's weights inside stem_w
 * (copied there tap-major). Its error code, or NOT_TAKEN. */
static u32 arr_conv(const desc_t *d, const shape_t *s) {
  const u32 dw = d->op == NASA_OP_DW_CONV, stem = d->op == NASA_OP_CONV && d->cin == 1;
  u32 wgt = d->wgt, geom = 0, rowb = 0;
  if (d->cout > 256 || ((d->in | wgt | d->prm) & 7u)) return NOT_TAKEN;
  if (dw || stem) {
    rowb = mul_by(d->w, d->cin);
    if (d->h > 255 || d->w > 255 || rowb > 4095) return NOT_TAKEN;
    geom = s->wo << MCU_AG_OW | d->w << MCU_AG_IW | d->h << MCU_AG_IH |
           d->pad_top << MCU_AG_PADT | (u32)(d->stride == 2) << MCU_AG_S2 | d->k << MCU_AG_K |
           (1u << MCU_AG_ST) << dw; /* (MCU_AG_DW: the next bit) */
  } else if (d->k != 1 || d->stride != 1) {
    return NOT_TAKEN;
  }
  if (stem) { /* (kred: k x k) channel co's weights (OHWI) to column co % 8 of its block's rows */
    if (mul_by((d->cout + 7u) & ~7u, s->kred) > MCU_A_STEM_BYTES) return NOT_TAKEN;
    const u8 *src = M + wgt;
    for (u32 co = 0; co < d->cout; ++co) {
      u8 *dst = stem_w + mul_by(co >> 3, s->kred << 3) + (co & 7u);
      for (const u8 *end = src + s->kred; src != end; dst += 8) *dst = *src++;
    }
    wgt = (u32)stem_w - MCU_MAIN_BASE;
  } else if ((d->cin & 7u) != 0 || d->cin > 256) {
    return NOT_TAKEN;
  }
  return arr_run(d->in, wgt, d->out, d->prm, s->pix, geom, rowb,
                 d->cin << MCU_AR_CIN | d->cout << MCU_AR_COUT);
}
#if MCU_AG_DW != MCU_AG_ST + 1
#error "arr_conv() sets AGeom's depthwise bit as the one after the stem's"
#endif

/* The add's two records (bias unused, M, S): 8-aligned in the RAM, which is main memory */
static u32 add_rec[4] __attribute__((aligned(8)));

/* requant(a) + requant(in2) over n bytes on the array: a, in2 and out 8-aligned */
static u32 arr_add(const desc_t *d, u32 a, u32 n) {
  add_rec[1] = d->m | d->s << 16;
  add_rec[3] = d->mb | d->sb << 16;
  return arr_run(a, d->in2, d->out, (u32)add_rec - MCU_MAIN_BASE, n, 0, 0,
                 8u << MCU_AR_CIN | 1u << MCU_AR_COUT | 1u << MCU_AR_ADD);
}
#endif

/* out = requant(a) + requant(in2) over n bytes, on the array when it takes them */
static u32 add_any(const desc_t *d, u32 a, u32 n) {
#if NASA_FW_ARRAY
  if (((a | d->in2 | d->out) & 7u) == 0) return arr_add(d, a, n);
#endif
  add(d, a, n);
  return NASA_ERR_NONE;
}

/* Runs the validated layer (an FC as the 1x1 Conv of its flattened input, Cin = kred, over one
 * pixel: `d`'s shape is rewritten) */
static u32 execute(desc_t *d, const shape_t *s) {
  set_clamp(d->res ? NASA_ACT_NONE : d->act, d->q6);  /* a folded residual: act after the add */
  if (d->op == NASA_OP_FC) {
    d->cin = s->kred;
    d->k = d->h = d->w = d->stride = 1;
    d->pad_top = 0;
  }
  switch (d->op) {
    case NASA_OP_FC:
    case NASA_OP_CONV:
    case NASA_OP_DW_CONV: {
      u32 e = NOT_TAKEN;
#if NASA_FW_ARRAY
      e = arr_conv(d, s);
#endif
      if (e == NOT_TAKEN) {
        if (bad_record(d)) return NASA_ERR_BAD_QUANT;
        conv(d, s);
        e = NASA_ERR_NONE;
      }
      if (e == NASA_ERR_NONE && d->res) {
        set_clamp(d->act, d->q6);
        e = add_any(d, d->out, (u32)s->out_bytes);
      }
      return e;
    }
    case NASA_OP_ADD: return add_any(d, d->in, (u32)s->in_bytes);
    case NASA_OP_GAP: gap(d, s); break;
    default: pool(d, s); break;
  }
  return NASA_ERR_NONE;
}

/* Validates and runs the descriptor (patched in batch runs): returns its error code. */
static u32 run_layer(desc_t *d) {
  shape_t s;
  const u32 e = validate(d, &s);
  if (e != NASA_ERR_NONE) return e;
  const u32 x = execute(d, &s);
  if (x != NASA_ERR_NONE) return x;
  layer_completed(macs_of(d, &s));
  return NASA_ERR_NONE;
}

/* ---------------- program runs ---------------- */
static u32 err_index;

static u32 run_program(void) {
  const u32 base = csr(NASA_CSR_DESC_ADDR), n = csr(NASA_CSR_DESC_COUNT);
  if (n == 0) return NASA_ERR_EMPTY_PROGRAM;
  for (u32 i = 0; i < n; ++i) {
    err_index = i;
    const u64 at = (u64)base + (u64)i * NASA_DESC_BYTES;
    if (at < win_base || at + NASA_DESC_BYTES > win_limit) return NASA_ERR_WINDOW;
    desc_t d;
    read_desc((u32)at, &d);
    const u32 e = run_layer(&d);
    if (e != NASA_ERR_NONE) return e;
  }
  return NASA_ERR_NONE;
}

/* ---------------- batch runs (docs/fusion.md, sw/model/batch_model.cpp) ---------------- */
#define NODE_CAP NASA_CFG_NODE_CAP
#define MAX_LAYERS NASA_CFG_MAX_LAYERS
static u16 first_child[NODE_CAP], next_sibling[NODE_CAP];
static u32 node_count;

static u32 node_word(u32 n) { return REG(MCU_NODE(n)); }

/* NODE_COUNT: also how much of Node and Correct the host may read */
static void set_node_count(u32 n) { set_csr(NASA_CSR_NODE_COUNT, n); }
/* how much of Leaf the host may read */
static void set_leaf_count(u32 n) { REG(MCU_PARAM(MCU_P_LEAF_COUNT)) = n; }

/* A control access outside the window ends the run with Window (ERR_INDEX 0). */
static int ctrl_ok(u32 addr) {
  if (addr < win_base || addr >= win_limit) {
    err_index = 0;
    return 0;
  }
  return 1;
}

static u32 bcsr[NASA_CSR_SCRATCH_STRIDE / 4 + 1];
#define B(name) bcsr[NASA_CSR_##name / 4]

static u32 batch_config(void) {
  for (u32 a = NASA_CSR_NUM_LAYERS; a <= NASA_CSR_PARENT_COUNT; a += 4) bcsr[a / 4] = csr(a);
  B(SCRATCH_STRIDE) = csr(NASA_CSR_SCRATCH_STRIDE);
  err_index = 0;
  if (B(CAND_COUNT) == 0 || B(IMG_COUNT) == 0) return NASA_ERR_EMPTY_BATCH;
  int bad = B(NUM_LAYERS) == 0 || B(NUM_LAYERS) > MAX_LAYERS || B(MINI_BATCH) == 0 ||
            B(CAND_COUNT) > NASA_CFG_MAX_CANDS || B(GEN_MODE) > NASA_GEN_CROSSOVER || B(CLASSES) == 0 ||
            B(CLASSES) > 0xFFFF || B(GEN_PROB) > 0x10000 ||
            ((B(GEN_MODE) == NASA_GEN_MUTATE || B(GEN_MODE) == NASA_GEN_CROSSOVER) &&
             B(PARENT_COUNT) == 0);
  for (u32 i = 0; i < B(NUM_LAYERS) && i < MAX_LAYERS; ++i) {
    const u32 k = param(MCU_P_LAYERK + i) & 0xFF;
    bad = bad || k == 0 || k > NASA_CFG_MAX_CHOICES;
  }
  return bad ? NASA_ERR_BAD_BATCH_CFG : NASA_ERR_NONE;
}

static u32 xs_state;
static u32 xs_next(void) {
  xs_state ^= xs_state << 13;
  xs_state ^= xs_state >> 17;
  xs_state ^= xs_state << 5;
  return xs_state;
}
/* the high word of x * k (k < 256: a LayerK); RV32I: from two 32-bit products (libgcc's
 * __muldi3 takes ROM the array image does not have) */
static u32 xs_sample(u32 k) {
  const u32 x = xs_next();
#if defined(__riscv_mul)
  return (u32)(((u64)x * k) >> 32);
#else
  return (mul_by(x >> 16, k) + (mul_by(x & 0xFFFFu, k) >> 16)) >> 16;
#endif
}

/* a % b for b != 0: the core has no divider (a shift-subtract loop; generate() only) */
static u32 umod(u32 a, u32 b) {
  u32 r = 0;
  for (int i = 31; i >= 0; --i) {
    const u32 top = r >> 31; /* 2r + bit may pass 2^32: then it is >= b (and wraps back) */
    r = (r << 1) | ((a >> i) & 1u);
    if (top || r >= b) r -= b;
  }
  return r;
}

static u32 generate(void) {
  const u32 L = B(NUM_LAYERS), mode = B(GEN_MODE), stride = B(CAND_STRIDE);
  const u32 np = mode == NASA_GEN_SAMPLE ? 0 : B(PARENT_COUNT);
  /* the model reads every parent before it writes: their window checks come first */
  for (u32 p = 0; p < np; ++p) {
    for (u32 i = 0; i < L; ++i) {
      if (!ctrl_ok(B(PARENT_ADDR) + p * stride + i)) return NASA_ERR_WINDOW;
    }
  }
  xs_state = B(GEN_SEED) == 0 ? 0x9E3779B9u : B(GEN_SEED);
  for (u32 j = 0; j < B(CAND_COUNT); ++j) {
    for (u32 i = 0; i < L; ++i) {
      const u32 k = param(MCU_P_LAYERK + i) & 0xFF;
      u32 c;
      if (mode == NASA_GEN_SAMPLE) {
        c = xs_sample(k);
      } else if (mode == NASA_GEN_MUTATE) {
        const u32 r = xs_next();
        c = (r >> 16) < B(GEN_PROB) ? xs_sample(k)
                                    : M[B(PARENT_ADDR) + umod(j, np) * stride + i];
      } else {
        const u32 r = xs_next();
        const u32 p = umod((r >> 31) ? 2 * j + 1 : 2 * j, np);
        c = M[B(PARENT_ADDR) + p * stride + i];
      }
      const u32 a = B(CAND_ADDR) + j * stride + i;
      if (!ctrl_ok(a)) return NASA_ERR_WINDOW;
      M[a] = (u8)c;
    }
  }
  return NASA_ERR_NONE;
}

static u32 fuse(void) {
  const u32 L = B(NUM_LAYERS);
  node_count = 1;
  REG(MCU_NODE(0)) = NASA_NODE_WORD(NASA_NO_NODE, 0xFFu, 0xFFu);
  REG(MCU_CORRECT(0)) = 0;
  first_child[0] = NASA_NO_NODE;
  next_sibling[0] = NASA_NO_NODE;
  for (u32 j = 0; j < B(CAND_COUNT); ++j) {
    u32 cur = 0;
    for (u32 i = 0; i < L; ++i) {
      const u32 a = B(CAND_ADDR) + j * B(CAND_STRIDE) + i;
      if (!ctrl_ok(a)) return NASA_ERR_WINDOW;
      const u32 ch = M[a];
      err_index = j;
      if (ch >= (param(MCU_P_LAYERK + i) & 0xFF)) return NASA_ERR_BAD_CHOICE;
      u32 found = NASA_NO_NODE, last = NASA_NO_NODE;
      for (u32 n = first_child[cur]; n != NASA_NO_NODE; n = next_sibling[n]) {
        last = n;
        if (NASA_NODE_CHOICE(node_word(n)) == ch) {
          found = n;
          break;
        }
      }
      if (found == NASA_NO_NODE) {
        if (node_count == NODE_CAP) return NASA_ERR_NODE_OVERFLOW;
        found = node_count++;
        REG(MCU_NODE(found)) = NASA_NODE_WORD(cur, i, ch);
        REG(MCU_CORRECT(found)) = 0;
        first_child[found] = next_sibling[found] = NASA_NO_NODE;
        if (last == NASA_NO_NODE) first_child[cur] = (u16)found;
        else next_sibling[last] = (u16)found;
        set_node_count(node_count);
      }
      cur = found;
    }
    REG(MCU_LEAF(j)) = cur;
  }
  err_index = 0;
  return NASA_ERR_NONE;
}

/* Issues template `t` with X, Y, L or S added as its PATCH field says (sw/base/desc.cpp
 * patch_template). */
static u32 issue(u32 t, u32 x, u32 y, u32 l, u32 s) {
  err_index = layers_done;
  const u64 ta = (u64)B(TPL_ADDR) + (u64)t * NASA_DESC_BYTES;
  /* (the model compares the 32-bit address) */
  if ((u32)ta + (u64)NASA_DESC_BYTES > win_limit || (u32)ta < win_base) return NASA_ERR_WINDOW;
  desc_t d;
  read_desc((u32)ta, &d);
  if (d.patch & NASA_PATCH_IN_FROM_X) d.in += x;
  else if (d.patch & NASA_PATCH_IN_PLUS_S) d.in += s;
  if (d.patch & NASA_PATCH_IN2_FROM_X) d.in2 += x;
  if (d.patch & NASA_PATCH_OUT_FROM_L) d.out += l;
  else if (d.patch & NASA_PATCH_OUT_FROM_Y) d.out += y;
  else if (d.patch & NASA_PATCH_OUT_PLUS_S) d.out += s;
  return run_layer(&d);
}

static u32 evaluate(u32 n, u32 g, u32 l) {
  u32 best = 0;
  s32 best_v = 0;
  for (u32 k = 0; k < B(CLASSES); ++k) {
    if (!ctrl_ok(l + k)) return NASA_ERR_WINDOW;
    const s32 v = (s8)M[l + k];
    if (k == 0 || v > best_v) {
      best_v = v;
      best = k;
    }
  }
  if (!ctrl_ok(B(LABEL_ADDR) + g)) return NASA_ERR_WINDOW;
  if (best == M[B(LABEL_ADDR) + g]) REG(MCU_CORRECT(n)) = REG(MCU_CORRECT(n)) + 1;
  return NASA_ERR_NONE;
}

static u32 out_base[MAX_LAYERS + 1], out_stride[MAX_LAYERS + 1];

/* One node for the images [g0, g0 + nb) of a mini-batch (docs/fusion.md "Scheduler walk"). */
static u32 visit(u32 n, u32 depth, u32 g0, u32 nb, u32 img_ptr) {
  const u32 L = B(NUM_LAYERS), nw = node_word(n);
  u32 e, entry, xb, xs;
  if (depth == 0) {
    entry = B(STEM_TPL);
    xb = img_ptr;
    xs = B(IMG_STRIDE);
  } else {
    entry = param(MCU_P_OPTAB + NASA_NODE_LAYER(nw) * NASA_CFG_MAX_CHOICES + NASA_NODE_CHOICE(nw));
    xb = out_base[depth - 1];
    xs = out_stride[depth - 1];
  }
  const u32 first = NASA_TPL_FIRST(entry), count = NASA_TPL_COUNT(entry);
  const u32 aa = param(MCU_P_ARENA_ADDR + depth), as = param(MCU_P_ARENA_STRIDE + depth);
  out_base[depth] = count == 0 ? xb : aa;
  out_stride[depth] = count == 0 ? xs : as;
  const u32 hfirst = NASA_TPL_FIRST(B(HEAD_TPL)), hcount = NASA_TPL_COUNT(B(HEAD_TPL));
  /* image b's logits: the leaf's dump entry, or slot b of the mini-batch's logits */
  const u32 l0 = B(LOGITS_STRIDE) == 0 ? B(LOGITS_ADDR)
                                       : B(LOGITS_ADDR) + n * B(LOGITS_STRIDE) + g0 * B(CLASSES);
  /* each template for every image of the mini-batch before the next */
  for (u32 k = 0; k < count; ++k) {
    for (u32 b = 0; b < nb; ++b) {
      e = issue(first + k, xb + b * xs, aa + b * as, l0 + b * B(CLASSES), b * B(SCRATCH_STRIDE));
      if (e != NASA_ERR_NONE) return e;
    }
  }
  if (depth == L) {
    for (u32 k = 0; k < hcount; ++k) {
      for (u32 b = 0; b < nb; ++b) {
        const u32 y = aa + b * as, hx = count == 0 ? xb + b * xs : y;
        e = issue(hfirst + k, hx, y, l0 + b * B(CLASSES), b * B(SCRATCH_STRIDE));
        if (e != NASA_ERR_NONE) return e;
      }
    }
    for (u32 b = 0; b < nb; ++b) {
      if ((e = evaluate(n, g0 + b, l0 + b * B(CLASSES))) != NASA_ERR_NONE) return e;
    }
  }
  return NASA_ERR_NONE;
}

static u32 run_batch(void) {
  u32 e;
  set_leaf_count(0);
  set_node_count(0);
  node_count = 0;
  if ((e = batch_config()) != NASA_ERR_NONE) return e;
  if (B(GEN_MODE) != NASA_GEN_MEMORY && (e = generate()) != NASA_ERR_NONE) return e;
  e = fuse();
  set_node_count(node_count);
  if (e != NASA_ERR_NONE) return e;
  set_leaf_count(B(CAND_COUNT));
  u32 img_ptr = B(IMG_ADDR);
  for (u32 g0 = 0; g0 < B(IMG_COUNT); g0 += B(MINI_BATCH)) {
    const u32 left = B(IMG_COUNT) - g0, nb = left < B(MINI_BATCH) ? left : B(MINI_BATCH);
    /* depth-first pre-order, children in insertion order, without a stack */
    u32 n = 0, depth = 0;
    for (;;) {
      if ((e = visit(n, depth, g0, nb, img_ptr)) != NASA_ERR_NONE) {
        set_leaf_count(0);
        return e;
      }
      if (depth == 0) img_ptr += nb * B(IMG_STRIDE);
      if (depth < B(NUM_LAYERS) && first_child[n] != NASA_NO_NODE) {
        n = first_child[n];
        ++depth;
        continue;
      }
      while (n != 0 && next_sibling[n] == NASA_NO_NODE) {
        n = node_word(n) & 0xFFFF;
        --depth;
      }
      if (n == 0) break;
      n = next_sibling[n];
    }
  }
  return NASA_ERR_NONE;
}

/* ---------------- boot, a run ---------------- */
/* Called by the reset entry (crt0.S) before it waits for a run: the identification CSRs, and the
 * run's CSRs as after a reset. Magic goes last: a host that sees it reads the others written. */
void boot(void) {
  /* at power-up the memory holds anything: the page's CSRs start at 0, as after a reset (after
   * a fault's restart the host's CSRs stay) */
  if (csr(NASA_CSR_MAGIC) != NASA_MAGIC) {
    for (u32 k = 0; k < MCU_PARAM_WORDS; ++k) REG(MCU_PARAM(k)) = 0;
  }
  set_csr(NASA_CSR_HW_SHAPE, NASA_CFG_HW_SHAPE);
  set_csr(NASA_CSR_HW_MEM, NASA_CFG_HW_MEM);
  set_csr(NASA_CSR_HW_IN_BUF, NASA_CFG_IN_BUF_BYTES);
  set_csr(NASA_CSR_HW_KRED_MAX, NASA_CFG_KRED_MAX);
  set_csr(NASA_CSR_HW_BATCH, NASA_CFG_HW_BATCH);
  set_csr(NASA_CSR_MAGIC, NASA_MAGIC);
}

/* Called by the reset entry with the GO register's value once the host starts a run. */
void run(u32 go) {
  win_base = csr(NASA_CSR_WIN_BASE);
  win_limit = csr(NASA_CSR_WIN_LIMIT);
  if (win_limit > MCU_PAGE_ADDR) win_limit = MCU_PAGE_ADDR; /* (the host page is not data) */
  layers_done = 0;
  macs = 0;
  err_index = 0;
  set_csr(NASA_CSR_ERR_INDEX, 0);
  set_csr(NASA_CSR_LAYERS_DONE, 0);
  set_macs();
  const u32 e = (go & 2) ? run_batch() : run_program();
  set_csr(NASA_CSR_ERR_INDEX, e == NASA_ERR_NONE ? 0 : err_index);
  ctrl(MCU_C_FINISH, e);
}
