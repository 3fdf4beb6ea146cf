// Every error code on every configuration: the RTL reports the same ERR_CODE and ERR_INDEX as
// the reference, stops within a bounded number of cycles, and leaves every byte of memory outside
// the legal outputs of the layers it completed exactly as it was.
// NASA_FST_ON_FAIL=1 writes a waveform of each failing case (see NASA_FST_DIR).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "nasa/desc.h"
#include "nasa/memory_image.h"
#include "nasa/refmodel.h"
#include "nasa/sim/cosim.h"
#include "nasa/sim/random_layer.h"
#include "nasa/sim/memcheck.h"

#include "cosim_cases.h"

namespace nasa::sim {
namespace {

using hw::Act;
using hw::Err;
using hw::Op;

Desc shape(Op op, uint16_t h, uint16_t w, uint16_t cin, uint16_t cout, uint8_t k = 1,
           uint8_t stride = 1) {
  return layer_shape(op, h, w, cin, cout, k, stride);
}

Desc conv3() { return shape(Op::Conv, 5, 5, 8, 12, 3); }
Desc dw3() { return shape(Op::DwConv, 5, 5, 8, 8, 3); }
Desc fc() { return shape(Op::Fc, 1, 1, 24, 10); }
Desc maxpool() { return shape(Op::MaxPool, 5, 5, 8, 8, 3); }
Desc avgpool() { return shape(Op::AvgPool, 5, 5, 8, 8, 3); }
Desc add() { return shape(Op::Add, 4, 4, 8, 8); }
Desc gap() { return shape(Op::Gap, 4, 4, 8, 8); }

// h*w == n (or the smallest n' > n that factors with both sides <= 65535).
std::pair<uint16_t, uint16_t> factor(uint64_t n) {
  for (;; ++n) {
    for (uint64_t h = 1; h <= 65535; ++h) {
      if (n % h == 0 && n / h <= 65535 && h <= n / h) return {h, n / h};
      if (h * h > n) break;
    }
  }
}

class CosimErrors : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    cfg_ = config_by_name(GetParam());
    dram_ = cycles::default_dram(cfg_);
    cs_ = std::make_unique<Cosim>(cfg_, dram_);
  }

  // A valid program of `layers` (each its own fresh inputs).
  Program program(const std::vector<Desc>& layers, bool descs_last = false) {
    ProgramBuilder b(cfg_, seed_++);
    if (!descs_last) b.reserve_descs(static_cast<uint32_t>(layers.size()));
    for (const Desc& d : layers) b.add_layer(d);
    return b.finish(fmt::format("{} layer(s)", layers.size()));
  }

  // `p` with descriptor `index` changed by `edit`.
  template <class Edit>
  Program edited(const std::vector<Desc>& layers, uint32_t index, Edit edit) {
    Program p = program(layers);
    Desc d = p.descs[index];
    edit(d, p);
    rewrite_desc(p, index, d);
    return p;
  }

  void expect_error(const Program& p, Err want, uint32_t index, const std::string& what) {
    SCOPED_TRACE(what);
    const CosimResult r = run_case(*cs_, p);
    const std::string where =
        case_report(*cs_, p, r,
                    fmt::format("cosim_errors_{}_{}_{}",
                                ::testing::UnitTest::GetInstance()->current_test_info()->name(),
                                what, p.seed));
    // The case provokes what it claims (on the reference), and the RTL agrees in every byte.
    ASSERT_EQ(r.ref_err, static_cast<uint32_t>(want)) << where;
    ASSERT_EQ(r.ref_err_index, index) << where;
    EXPECT_TRUE(r.ok) << where;
    EXPECT_EQ(r.rtl.err_code, static_cast<uint32_t>(want)) << where;
    EXPECT_EQ(r.rtl.err_index, index) << where;
    EXPECT_NE(r.rtl.status & hw::kStatusError, 0u) << where;
    EXPECT_EQ(r.rtl.layers_done, index) << where;

    // Stops promptly: a descriptor that fails validation costs about one descriptor fetch.
    const bool mid_layer =
        want == Err::BadQuant && index < p.desc_count &&
        validate(read_desc(p.image, p.desc_addr + uint64_t{index} * hw::kDescBytes), cfg_,
                 p.win_base, p.win_limit) == Err::None;
    if (index == 0 && !mid_layer) {
      EXPECT_LE(r.rtl.cycles, 200 + 4 * uint64_t{dram_.latency}) << where;
    }

    // Nothing outside the outputs of the completed layers (and of the failing layer, for a bad
    // per-channel record found mid-layer) may change.
    std::vector<std::pair<uint64_t, uint64_t>> legal;
    for (uint32_t i = 0; i <= index && i < p.desc_count; ++i) {
      if (i == index && !mid_layer) break;
      const Desc d = read_desc(p.image, p.desc_addr + uint64_t{i} * hw::kDescBytes);
      legal.emplace_back(d.out_addr, d.out_addr + shape_of(d).out_bytes);
    }
    expect_same_memory(cs_->engine().memory(), p.image,
                       MemoryCheck("bytes changed outside the legal outputs (expected: the image)")
                           .except(legal),
                       where);
  }

  hw::Config cfg_{};
  cycles::DramTiming dram_{};
  std::unique_ptr<Cosim> cs_;
  uint64_t seed_ = 500;
};

TEST_P(CosimErrors, BadOpcode) {
  for (uint8_t op : {0, 8, 100, 255}) {
    expect_error(edited({conv3()}, 0, [&](Desc& d, Program&) { d.op = op; }), Err::BadOpcode, 0,
                 fmt::format("op {}", op));
  }
}

TEST_P(CosimErrors, BadAct) {
  for (uint8_t act : {3, 255}) {
    expect_error(edited({conv3()}, 0, [&](Desc& d, Program&) { d.act = act; }), Err::BadAct, 0,
                 fmt::format("act {}", act));
    expect_error(edited({maxpool()}, 0, [&](Desc& d, Program&) { d.act = act; }), Err::BadAct, 0,
                 fmt::format("maxpool act {}", act));
  }
}

TEST_P(CosimErrors, BadStride) {
  for (const Desc& base : {conv3(), dw3(), maxpool(), avgpool()}) {
    for (uint8_t s : {0, 3, 255}) {
      expect_error(edited({base}, 0, [&](Desc& d, Program&) { d.stride = s; }), Err::BadStride, 0,
                   fmt::format("{} stride {}", op_name(base.op), s));
    }
  }
}

TEST_P(CosimErrors, BadKernel) {
  for (const Desc& base : {conv3(), dw3()}) {
    for (uint8_t k : {0, 2, 4, 9, 255}) {
      expect_error(edited({base}, 0, [&](Desc& d, Program&) { d.k = k; }), Err::BadKernel, 0,
                   fmt::format("{} k {}", op_name(base.op), k));
    }
  }
  for (const Desc& base : {maxpool(), avgpool()}) {
    for (uint8_t k : {1, 5, 7}) {
      expect_error(edited({base}, 0, [&](Desc& d, Program&) { d.k = k; }), Err::BadKernel, 0,
                   fmt::format("{} k {}", op_name(base.op), k));
    }
  }
}

TEST_P(CosimErrors, ZeroDim) {
  const std::vector<std::pair<std::string, void (*)(Desc&)>> fields = {
      {"h", [](Desc& d) { d.h = 0; }},
      {"w", [](Desc& d) { d.w = 0; }},
      {"cin", [](Desc& d) { d.cin = 0; }},
      {"cout", [](Desc& d) { d.cout = 0; }}};
  for (const Desc& base : {conv3(), fc(), gap()}) {
    for (const auto& field : fields) {
      expect_error(edited({base}, 0, [&](Desc& d, Program&) { field.second(d); }), Err::ZeroDim, 0,
                   fmt::format("{} {} = 0", op_name(base.op), field.first));
    }
  }
}

TEST_P(CosimErrors, BadChannels) {
  for (const Desc& base : {dw3(), maxpool(), avgpool(), add(), gap()}) {
    expect_error(edited({base}, 0, [&](Desc& d, Program&) { d.cout = d.cin + 1; }),
                 Err::BadChannels, 0, fmt::format("{} cout = cin + 1", op_name(base.op)));
    expect_error(edited({base}, 0, [&](Desc& d, Program&) { d.cout = d.cin - 1; }),
                 Err::BadChannels, 0, fmt::format("{} cout = cin - 1", op_name(base.op)));
  }
}

// Row bands (docs/engine.md "Row bands"): OutRows past ceil(H/stride), PadTop past (k-1)/2, or a
// band on an op without a sliding window; each also too large for the input buffer, which is
// reported later.
TEST_P(CosimErrors, BadBand) {
  for (const Desc& base : {conv3(), dw3(), maxpool(), avgpool()}) {
    const uint16_t ho = static_cast<uint16_t>((base.h + base.stride - 1) / base.stride);
    const uint8_t pad = static_cast<uint8_t>((base.op == static_cast<uint8_t>(Op::MaxPool) ||
                                              base.op == static_cast<uint8_t>(Op::AvgPool))
                                                 ? 1
                                                 : (base.k - 1) / 2);
    expect_error(edited({base}, 0,
                        [&](Desc& d, Program&) {
                          d.out_rows = static_cast<uint16_t>(ho + 1);
                          d.w = 0xFFFF;  // Oversize too (H*W*Cin > the buffer), reported later
                        }),
                 Err::BadBand, 0, fmt::format("{} OutRows = ceil(H/stride) + 1", op_name(base.op)));
    expect_error(edited({base}, 0,
                        [&](Desc& d, Program&) {
                          d.out_rows = 1;
                          d.pad_top = static_cast<uint8_t>(pad + 1);
                        }),
                 Err::BadBand, 0, fmt::format("{} PadTop = (k-1)/2 + 1", op_name(base.op)));
  }
  for (const Desc& base : {fc(), add(), gap()}) {
    expect_error(edited({base}, 0, [&](Desc& d, Program&) { d.out_rows = 1; }), Err::BadBand, 0,
                 fmt::format("{} with OutRows 1", op_name(base.op)));
  }
}

// A folded residual (docs/engine.md "Folded residual") on an op other than Conv/DwConv or with
// stride 2, and one whose residual and input overflow the input buffer together.
TEST_P(CosimErrors, BadResidual) {
  for (const Desc& base : {conv3(), dw3()}) {
    expect_error(edited({base}, 0,
                        [&](Desc& d, Program&) {
                          d.res = 1;
                          d.stride = 2;
                          d.s = d.sb = 1;
                        }),
                 Err::BadResidual, 0, fmt::format("{} Res with stride 2", op_name(base.op)));
    expect_error(edited({base}, 0,
                        [&](Desc& d, Program&) {
                          d.res = 1;
                          d.s = 1;
                          d.sb = 0;
                        }),
                 Err::BadQuant, 0, fmt::format("{} Res with Sb 0", op_name(base.op)));
  }
  for (const Desc& base : {fc(), maxpool(), avgpool(), add(), gap()}) {
    expect_error(edited({base}, 0, [&](Desc& d, Program&) { d.res = 1; }), Err::BadResidual, 0,
                 fmt::format("{} with Res", op_name(base.op)));
  }
  const uint32_t in = cfg_.in_buf_bytes;
  expect_error(edited({conv3()}, 0,
                      [&](Desc& d, Program&) {
                        d.res = 1;
                        d.s = d.sb = 1;
                        d.k = 1;
                        d.h = 1;
                        d.cin = d.cout = 2;
                        d.w = static_cast<uint16_t>(in / 4 + 1);  // residual + input: over
                      }),
               Err::Oversize, 0, "conv Res, residual and input one byte over the buffer");
}

// Packed images (docs/engine.md "Packed images") on an op other than Conv/DwConv/Fc, with a band
// or a residual (each with a bad quant too, reported later); packed inputs over the input
// buffer; the last image's output past the window.
TEST_P(CosimErrors, BadPack) {
  for (const Desc& base : {maxpool(), avgpool(), add(), gap()}) {
    expect_error(edited({base}, 0,
                        [&](Desc& d, Program&) {
                          d.images = 2;
                          d.out_stride = static_cast<uint32_t>(shape_of(d).out_bytes);
                          d.act = static_cast<uint8_t>(Act::Relu6);
                          d.q6 = 200;
                        }),
                 Err::BadPack, 0, fmt::format("{} with Images 2", op_name(base.op)));
  }
  expect_error(edited({conv3()}, 0,
                      [&](Desc& d, Program&) {
                        d.images = 3;
                        d.out_rows = 1;
                      }),
               Err::BadPack, 0, "conv band with Images 3");
  expect_error(edited({dw3()}, 0,
                      [&](Desc& d, Program&) {
                        d.images = 2;
                        d.res = 1;
                        d.s = d.sb = 0;
                      }),
               Err::BadPack, 0, "depthwise Res with Images 2");
  const uint32_t in = cfg_.in_buf_bytes;
  expect_error(edited({conv3()}, 0,
                      [&](Desc& d, Program&) {
                        d.k = 1;
                        d.h = 1;
                        d.cin = d.cout = 1;
                        d.w = static_cast<uint16_t>(in / 4);
                        d.images = 5;  // four fill the buffer
                        d.in_stride = 0;
                        d.out_stride = d.w;
                      }),
               Err::Oversize, 0, "conv, five packed inputs of a quarter buffer");
  for (const Desc& base : {conv3(), dw3(), fc()}) {
    expect_error(edited({base}, 0,
                        [&](Desc& d, Program& p) {
                          const auto out = static_cast<uint32_t>(shape_of(d).out_bytes);
                          d.images = 2;
                          d.in_stride = 0;
                          d.out_stride = p.win_limit - d.out_addr - out + 1;
                        }),
                 Err::Window, 0, fmt::format("{}, the second image's output one byte past the "
                                             "window", op_name(base.op)));
  }
}

TEST_P(CosimErrors, OversizeInput) {
  const uint32_t in = cfg_.in_buf_bytes;
  // Inputs of H*W*C one step over what the input buffer holds. The conv keeps its cout and takes
  // k = 1 (kred 1); Add needs align_up(H*W*C, MemBytes) + H*W*C, so one byte over half the buffer.
  const struct {
    Desc base;
    const char* name;
    uint64_t pixels;
    uint16_t channels;
  } cases[] = {{conv3(), "conv", in + 1, 1}, {maxpool(), "maxpool", in / 8 + 1, 8},
               {add(), "add", in / 2 + 1, 1}};
  for (const auto& c : cases) {
    const auto [h, w] = factor(c.pixels);
    const bool conv = c.base.op == static_cast<uint8_t>(Op::Conv);
    expect_error(edited({c.base}, 0,
                        [&](Desc& d, Program&) {
                          d.h = h;
                          d.w = w;
                          d.cin = c.channels;
                          if (conv) {
                            d.k = 1;
                          } else {
                            d.cout = c.channels;
                          }
                        }),
                 Err::Oversize, 0, fmt::format("{} input {}x{}x{}", c.name, h, w, c.channels));
  }
}

TEST_P(CosimErrors, OversizeKred) {
  const uint32_t kred = cfg_.kred_max;
  expect_error(edited({conv3()}, 0,
                      [&](Desc& d, Program&) {
                        d.h = d.w = 1;
                        d.k = 1;
                        d.cin = static_cast<uint16_t>(kred + 1);
                      }),
               Err::Oversize, 0, "conv 1x1 kred + 1");
  expect_error(edited({conv3()}, 0,
                      [&](Desc& d, Program&) {
                        d.h = d.w = 2;
                        d.cin = static_cast<uint16_t>(kred / 9 + 1);
                      }),
               Err::Oversize, 0, "conv 3x3 kred over");
  expect_error(edited({fc()}, 0,
                      [&](Desc& d, Program&) {
                        d.h = d.w = 1;
                        d.cin = static_cast<uint16_t>(kred + 1);
                      }),
               Err::Oversize, 0, "fc kred + 1");
}

TEST_P(CosimErrors, BadQuantDescriptor) {
  for (const Desc& base : {avgpool(), gap(), add()}) {
    for (uint8_t s : {0, 48, 255}) {
      expect_error(edited({base}, 0, [&](Desc& d, Program&) { d.s = s; }), Err::BadQuant, 0,
                   fmt::format("{} S {}", op_name(base.op), s));
    }
  }
  for (uint8_t sb : {0, 48}) {
    expect_error(edited({add()}, 0, [&](Desc& d, Program&) { d.sb = sb; }), Err::BadQuant, 0,
                 fmt::format("add Sb {}", sb));
  }
  for (const Desc& base : {conv3(), maxpool(), add()}) {
    expect_error(edited({base}, 0,
                        [&](Desc& d, Program&) {
                          d.act = static_cast<uint8_t>(Act::Relu6);
                          d.q6 = 128;
                        }),
                 Err::BadQuant, 0, fmt::format("{} relu6 q6 128", op_name(base.op)));
  }
}

TEST_P(CosimErrors, BadQuantRecord) {
  for (const Desc& base : {conv3(), dw3(), fc(), shape(Op::Conv, 8, 8, 16, 3 * cfg_.cols + 1)}) {
    for (uint8_t bad_s : {0, 48}) {
      for (int which = 0; which < 3; ++which) {
        Program p = program({base});
        const Desc& d = p.descs[0];
        const uint32_t c = which == 0 ? 0 : which == 1 ? d.cout / 2 : d.cout - 1u;
        p.image[d.prm_addr + uint64_t{c} * hw::kParamBytes + 6] = bad_s;
        expect_error(p, Err::BadQuant, 0,
                     fmt::format("{} record {} S {}", op_name(base.op), c, bad_s));
      }
    }
  }
  // In the second layer of a program: the first completes.
  Program p = program({conv3(), fc()});
  p.image[p.descs[1].prm_addr + 6] = 0;
  expect_error(p, Err::BadQuant, 1, "second layer record 0");
  // In the last channel tile of a middle layer: all its loads are issued, so the next descriptor
  // is being fetched or decoded ahead when the run aborts; it must leave no trace.
  for (const Desc& mid : {shape(Op::Conv, 6, 6, 8, 2 * cfg_.cols + 3, 3), dw3()}) {
    Program q = program({conv3(), mid, maxpool()});
    const Desc& d = q.descs[1];
    q.image[d.prm_addr + uint64_t{d.cout - 1u} * hw::kParamBytes + 6] = 0;
    expect_error(q, Err::BadQuant, 1, fmt::format("{} last record, descriptor 2 prefetched",
                                                  op_name(mid.op)));
  }
}

TEST_P(CosimErrors, WindowPerTensor) {
  struct Field {
    std::string name;
    Desc base;
    uint32_t Desc::*addr;
    uint64_t (*size)(const Desc&);
  };
  const std::vector<Field> fields = {
      {"input", conv3(), &Desc::in_addr, [](const Desc& d) { return shape_of(d).in_bytes; }},
      {"second input", add(), &Desc::in2_addr, [](const Desc& d) { return shape_of(d).in_bytes; }},
      {"weights", conv3(), &Desc::wgt_addr, [](const Desc& d) { return shape_of(d).wgt_bytes; }},
      {"dw weights", dw3(), &Desc::wgt_addr, [](const Desc& d) { return shape_of(d).wgt_bytes; }},
      {"fc weights", fc(), &Desc::wgt_addr, [](const Desc& d) { return shape_of(d).wgt_bytes; }},
      {"params", conv3(), &Desc::prm_addr, [](const Desc& d) { return shape_of(d).prm_bytes; }},
      {"output", conv3(), &Desc::out_addr, [](const Desc& d) { return shape_of(d).out_bytes; }},
      {"gap output", gap(), &Desc::out_addr, [](const Desc& d) { return shape_of(d).out_bytes; }},
  };
  for (const Field& f : fields) {
    // Starts one byte before the window; ends one byte past it; far away (wraps 32 bits).
    const std::vector<std::pair<std::string, uint32_t (*)(const Program&, uint64_t)>> where = {
        {"before", [](const Program& p, uint64_t) { return p.win_base - 1; }},
        {"past end", [](const Program& p,
                        uint64_t size) { return static_cast<uint32_t>(p.win_limit - size + 1); }},
        {"wrapping", [](const Program&, uint64_t) { return 0xFFFFFFF0u; }},
    };
    for (const auto& w : where) {
      expect_error(
          edited({f.base}, 0, [&](Desc& d, Program& p) { d.*(f.addr) = w.second(p, f.size(d)); }),
          Err::Window, 0, fmt::format("{} {}", f.name, w.first));
    }
  }
}

TEST_P(CosimErrors, WindowDescriptor) {
  {
    Program p = program({conv3()});
    p.desc_addr = 0;  // the window starts at 1 or later
    expect_error(p, Err::Window, 0, "descriptor at address 0, before the window");
  }
  {
    Program p = program({conv3()});
    p.desc_addr = p.win_base - 1;
    expect_error(p, Err::Window, 0, "descriptor straddling the window start");
  }
  {
    Program p = program({conv3()});
    p.win_limit = p.win_base;  // empty window
    expect_error(p, Err::Window, 0, "empty window");
  }
  {
    // Descriptors placed last: cutting the window through descriptor 1 leaves layer 0 legal.
    Program p = program({conv3(), maxpool()}, true);
    p.win_limit = p.desc_addr + hw::kDescBytes + hw::kDescBytes / 2;
    expect_error(p, Err::Window, 1, "descriptor 1 straddling the window end");
  }
}

// The on-chip scratch's window (docs/engine.md "On-chip scratch"): a layer's inputs and output
// lie wholly inside it or wholly outside it, its weights, records and descriptor outside it
// (Window). Without a scratch (fpga) CSR ScratchBase reads 0 and changes nothing.
TEST_P(CosimErrors, WindowScratch) {
  if (cfg_.scratch_bytes == 0) {
    Program p = program({conv3()});
    p.scratch_base = p.descs[0].wgt_addr & ~uint32_t{63};
    const CosimResult r = run_case(*cs_, p);
    EXPECT_TRUE(r.ok) << case_report(*cs_, p, r, "cosim_errors_scratch_none");
    EXPECT_EQ(r.ref_err, 0u);
    EXPECT_EQ(cs_->engine().csr_read(static_cast<uint32_t>(hw::Csr::ScratchBase)), 0u);
    return;
  }
  const uint32_t lo = cfg_.scratch_bytes, hi = 2 * cfg_.scratch_bytes;
  // a one-layer program whose memory (and window) reaches past the scratch's window at `lo`
  auto with_window = [&](const Desc& layer, const std::function<void(Desc&, Program&)>& edit) {
    Program p = program({layer});
    p.image.resize(hi + 4096, 0x5A);
    p.win_limit = hi + 2048;
    p.scratch_base = lo + 17;  // (the low bits are ignored)
    Desc d = p.descs[0];
    edit(d, p);
    rewrite_desc(p, 0, d);
    return p;
  };
  const struct {
    std::string what;
    Desc layer;
    std::function<void(Desc&, Program&)> edit;
  } cases[] = {
      {"weights inside", conv3(), [&](Desc& d, Program&) { d.wgt_addr = lo + 64; }},
      {"weights straddling the start", conv3(), [&](Desc& d, Program&) { d.wgt_addr = lo - 8; }},
      {"records inside", conv3(), [&](Desc& d, Program&) { d.prm_addr = hi - 64 * 8; }},
      {"input straddling the start", conv3(), [&](Desc& d, Program&) { d.in_addr = lo - 5; }},
      {"second input straddling the end", add(),
       [&](Desc& d, Program&) { d.in2_addr = hi - 3; }},
      {"output straddling the end", conv3(), [&](Desc& d, Program&) { d.out_addr = hi - 7; }},
      {"descriptor inside", conv3(),
       [&](Desc& d, Program& p) {
         p.desc_addr = lo + 128;
         p.descs[0] = d;
       }},
  };
  for (const auto& c : cases) expect_error(with_window(c.layer, c.edit), Err::Window, 0, c.what);
  // and a CSR write keeps the window's base aligned
  EXPECT_EQ(cs_->engine().csr_read(static_cast<uint32_t>(hw::Csr::ScratchBase)), lo);
}

TEST_P(CosimErrors, EmptyProgram) {
  Program p = program({conv3()});
  p.desc_count = 0;
  expect_error(p, Err::EmptyProgram, 0, "DESC_COUNT 0");
}

TEST_P(CosimErrors, ErrorInLaterLayer) {
  Program p = program({conv3(), dw3(), maxpool(), fc()});
  Desc d = p.descs[2];
  d.k = 5;
  rewrite_desc(p, 2, d);
  expect_error(p, Err::BadKernel, 2, "third layer bad kernel");
}

// After an error the engine runs the next program correctly without a reset.
TEST_P(CosimErrors, RecoversWithoutReset) {
  Program bad = program({conv3()});
  Desc d = bad.descs[0];
  d.op = 0;
  rewrite_desc(bad, 0, d);
  EngineSim& e = cs_->engine();
  e.load_memory(bad.image);
  e.reset();
  const RunStatus st = e.run(bad.desc_addr, 1, bad.win_base, bad.win_limit, 100000);
  ASSERT_TRUE(st.done);
  ASSERT_EQ(st.err_code, static_cast<uint32_t>(Err::BadOpcode));

  const Program good = program({conv3(), avgpool()});
  std::vector<uint8_t> expect = good.image;
  ASSERT_EQ(ref::run(expect, cfg_, good.desc_addr, 2, good.win_base, good.win_limit).err,
            Err::None);
  e.load_memory(good.image);  // memory only: the engine keeps its state
  const RunStatus st2 = e.run(good.desc_addr, 2, good.win_base, good.win_limit, 10'000'000);
  ASSERT_TRUE(st2.done && !st2.timeout);
  EXPECT_EQ(st2.err_code, 0u);
  EXPECT_EQ(st2.status & hw::kStatusError, 0u);
  EXPECT_EQ(st2.layers_done, 2u);
  expect_same_memory(e.memory(), expect,
                     MemoryCheck("memory after recovery (expected: reference)"));
}

// Configurations with an address space smaller than 32 bits (the fpga board's 128 KB): a window
// programmed past 2^AddrBits is clamped to it, so regions beyond it are out of the window even
// though the programmed window covers them; a region ending exactly at 2^AddrBits is legal.
class CosimAddrSpace : public CosimErrors {
 protected:
  // `layers` with the memory (and the programmed window) grown to 2^AddrBits + 4 KB.
  Program beyond(const std::vector<Desc>& layers) {
    Program p = program(layers);
    p.image.resize(cfg_.addr_space() + 4096, 0x5A);
    p.win_limit = static_cast<uint32_t>(p.image.size());
    return p;
  }
};

// The board's controller does not pack images (its ROM is full): BadPack where the engine runs
// them.
TEST_P(CosimAddrSpace, PackedImagesOnlyOnTheEngine) {
  Program p = program({conv3()});
  Desc d = p.descs[0];
  d.images = 2;
  d.in_stride = 0;
  d.out_stride = 0;  // (both images write the same output: the same bytes)
  rewrite_desc(p, 0, d);
  const CosimResult r = cs_->run(p);
  EXPECT_EQ(r.ref_err, cfg_.mcu ? static_cast<uint32_t>(Err::BadPack) : 0u);
  EXPECT_TRUE(r.ok) << format_failure(p, r);
}

TEST_P(CosimAddrSpace, RegionsPastTheAddressSpace) {
  const auto top = static_cast<uint32_t>(cfg_.addr_space());
  {
    Program p = beyond({conv3()});
    Desc d = p.descs[0];
    d.out_addr = top - static_cast<uint32_t>(shape_of(d).out_bytes);
    rewrite_desc(p, 0, d);
    const CosimResult r = cs_->run(p);
    EXPECT_EQ(r.ref_err, 0u) << "output ending at 2^AddrBits";
    EXPECT_TRUE(r.ok) << format_failure(p, r);
  }
  {
    Program p = beyond({conv3()});
    Desc d = p.descs[0];
    d.out_addr = top - static_cast<uint32_t>(shape_of(d).out_bytes) + 1;
    rewrite_desc(p, 0, d);
    expect_error(p, Err::Window, 0, "output one byte past 2^AddrBits");
  }
  {
    Program p = beyond({dw3()});
    Desc d = p.descs[0];
    d.wgt_addr = top + 64;
    rewrite_desc(p, 0, d);
    expect_error(p, Err::Window, 0, "weights past 2^AddrBits");
  }
  {
    Program p = beyond({conv3(), maxpool()});
    // descriptor 0 ends at 2^AddrBits (legal), descriptor 1 lies past it: layer 0 runs
    p.desc_addr = top - hw::kDescBytes;
    write_desc(p.image, p.desc_addr, p.descs[0]);
    write_desc(p.image, p.desc_addr + hw::kDescBytes, p.descs[1]);
    expect_error(p, Err::Window, 1, "descriptor 1 past 2^AddrBits");
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, CosimErrors, ::testing::ValuesIn(engine_config_names()),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(Configs, CosimAddrSpace, ::testing::ValuesIn(engine_config_names(true)),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace nasa::sim
