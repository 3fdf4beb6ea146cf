// Compiled candidates: int8 logits track the float evaluator, and the RTL gives exactly the
// reference model's logits and cycles on the same program.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <random>
#include <vector>

#include "nasa/compiler.h"
#include "nasa/data.h"
#include "nasa/device.h"
#include "nasa/sim/rtl_device.h"
#include "nasa/supernet_weights.h"

namespace {

using nasa::compile::Program;

std::vector<std::vector<uint8_t>> sample_images(size_t n) {
  std::vector<std::vector<uint8_t>> out;
  if (std::filesystem::exists(nasa::data::default_fashion_mnist_dir())) {
    const auto ds = nasa::data::load_fashion_mnist("test", n);
    for (size_t i = 0; i < ds.size(); ++i) {
      const auto im = ds.image(i);
      out.emplace_back(im.begin(), im.end());
    }
    return out;
  }
  std::mt19937 rng(3);  // synthetic blobs when the dataset is absent (outside make test)
  for (size_t i = 0; i < n; ++i) {
    std::vector<uint8_t> im(28 * 28);
    for (auto& v : im) v = static_cast<uint8_t>(rng() % 256);
    out.push_back(im);
  }
  return out;
}

std::vector<int8_t> run_logits(nasa::device::Device& dev, const Program& p, int classes,
                               uint64_t* cycles) {
  dev.write_memory(0, p.image);
  const auto w = dev.run(p.desc_addr, p.desc_count, p.win_base, p.win_limit, 200'000'000,
                         p.scratch_base);
  EXPECT_TRUE(w.done && w.err == nasa::hw::Err::None)
      << dev.name() << " err " << static_cast<int>(w.err);
  std::vector<int8_t> out;
  for (uint32_t a : p.logits_addr) {
    std::vector<uint8_t> l(static_cast<size_t>(classes));
    dev.read_memory(a, l);
    for (uint8_t v : l) out.push_back(static_cast<int8_t>(v));
  }
  if (cycles) *cycles = dev.counter(nasa::hw::Counter::Cycles);
  return out;
}

struct Fixture {
  nasa::spec::Supernet net = nasa::spec::builtin_space("fmnist-mb");
  nasa::weights::TensorFile w = nasa::weights::random_weights(net, 11);
  std::vector<std::vector<uint8_t>> images = sample_images(16);
  nasa::compile::QSupernet q;
  Fixture() {
    std::vector<nasa::floatnet::Tensor> calib;
    for (size_t i = 0; i < 8; ++i) {
      calib.push_back(nasa::floatnet::image_from_u8(images[i].data(), 28, 28, 1));
    }
    q = nasa::compile::quantize(net, w, calib);
  }
};

TEST(Compile, Int8LogitsTrackFloat) {
  Fixture f;
  const auto& cfg = nasa::config_by_name("sim");
  std::mt19937 rng(5);
  double worst = 1.0;
  for (int trial = 0; trial < 6; ++trial) {
    nasa::spec::Candidate c;
    for (const auto& l : f.net.layers) c.push_back(static_cast<int>(rng() % l.choices.size()));
    SCOPED_TRACE(nasa::spec::format_candidate(c));
    const std::vector<std::vector<uint8_t>> imgs(f.images.begin() + 8, f.images.end());
    const Program p = nasa::compile::compile(f.q, c, imgs, cfg);
    auto ref = nasa::device::make_ref_device(cfg, p.image.size());
    const auto q = run_logits(*ref, p, f.net.classes, nullptr);
    for (size_t n = 0; n < imgs.size(); ++n) {
      const auto fl = nasa::floatnet::forward(
          f.net, f.w, c, nasa::floatnet::image_from_u8(imgs[n].data(), 28, 28, 1));
      double dot = 0, a2 = 0, b2 = 0;
      for (int k = 0; k < f.net.classes; ++k) {
        const double a = fl[k], b = q[n * f.net.classes + k] * f.q.logit_scale;
        dot += a * b;
        a2 += a * a;
        b2 += b * b;
      }
      worst = std::min(worst, dot / std::sqrt(a2 * b2 + 1e-30));
    }
  }
  RecordProperty("worst_cosine", std::to_string(worst));
  std::printf("worst cosine similarity int8 vs float logits: %.4f\n", worst);
  EXPECT_GE(worst, 0.99);
}

// Compiled candidates on the RTL and the reference model: the same logits and cycles, with the
// activations in the on-chip scratch (docs/engine.md "On-chip scratch": they never touch the
// memory port) and without it (compile's on_chip = false), which gives the same logits.
TEST(Compile, RtlMatchesReferenceOnCompiledCandidates) {
  Fixture f;
  const auto& cfg = nasa::config_by_name("sim");
  const std::vector<std::vector<uint8_t>> imgs(f.images.begin(), f.images.begin() + 3);
  for (const nasa::spec::Candidate& c :
       {nasa::spec::Candidate{0, 4, 1, 5, 2, 3}, nasa::spec::Candidate{3, 0, 4, 2, 0, 5}}) {
    SCOPED_TRACE(nasa::spec::format_candidate(c));
    std::vector<int8_t> logits[2];
    uint64_t dram[2] = {};
    for (const bool on_chip : {true, false}) {
      SCOPED_TRACE(on_chip ? "on chip" : "in memory");
      const Program p = nasa::compile::compile(f.q, c, imgs, cfg, on_chip);
      EXPECT_EQ(p.scratch_base != 0, on_chip);
      auto ref = nasa::device::make_ref_device(cfg, p.image.size());
      auto rtl = nasa::sim::make_rtl_device(cfg, p.image.size());
      uint64_t c_ref = 0, c_rtl = 0;
      logits[on_chip] = run_logits(*ref, p, f.net.classes, &c_ref);
      EXPECT_EQ(logits[on_chip], run_logits(*rtl, p, f.net.classes, &c_rtl));
      EXPECT_EQ(c_ref, c_rtl);
      for (const auto id : {nasa::hw::Counter::ScratchReads, nasa::hw::Counter::ScratchWrites,
                            nasa::hw::Counter::DramRdBytes, nasa::hw::Counter::DramWrBytes}) {
        EXPECT_EQ(ref->counter(id), rtl->counter(id)) << static_cast<int>(id);
      }
      EXPECT_EQ(ref->counter(nasa::hw::Counter::ScratchWrites) != 0, on_chip);
      dram[on_chip] = ref->counter(nasa::hw::Counter::DramRdBytes) +
                      ref->counter(nasa::hw::Counter::DramWrBytes);
    }
    EXPECT_EQ(logits[0], logits[1]);
    EXPECT_LT(dram[1], dram[0]);
  }
}

// Packed images (docs/engine.md "Packed images"): a program of 5 images packs its small layers
// in groups of at most 3 (at least two groups), each group's inputs in half the input buffer,
// every image covered once, strides the images' buffer distance; and each image's logits equal
// those of a program of that image alone (nothing packed).
TEST(Compile, PacksEachLayersImagesInGroups) {
  Fixture f;
  const auto& cfg = nasa::config_by_name("sim");
  const std::vector<std::vector<uint8_t>> imgs(f.images.begin(), f.images.begin() + 5);
  const nasa::spec::Candidate c{1, 4, 0, 5, 3, 2};
  const Program p = nasa::compile::compile(f.q, c, imgs, cfg);
  size_t packed = 0, covered = 0;
  for (size_t i = 0; i + 1 < p.descs.size(); ++i) {  // (the last: the classifier, all images)
    const nasa::Desc& d = p.descs[i];
    covered += nasa::images_of(d);
    if (!nasa::is_packed(d)) continue;
    ++packed;
    EXPECT_LE(d.images, 3);
    EXPECT_LE(nasa::input_buffer_need(d, cfg), cfg.in_buf_bytes / 2);
    EXPECT_GE(d.out_stride, nasa::shape_of(d).out_bytes);
  }
  EXPECT_GT(packed, 10u);
  // every layer of every image once: 5 times the layers of a one-image program (its last
  // descriptor the classifier)
  const std::vector<std::vector<uint8_t>> first(imgs.begin(), imgs.begin() + 1);
  const Program one = nasa::compile::compile(f.q, c, first, cfg);
  EXPECT_EQ(covered, 5 * (one.descs.size() - 1));
  auto ref = nasa::device::make_ref_device(cfg, p.image.size());
  const auto all = run_logits(*ref, p, f.net.classes, nullptr);
  for (size_t n = 0; n < imgs.size(); ++n) {
    const std::vector<std::vector<uint8_t>> one(imgs.begin() + n, imgs.begin() + n + 1);
    const Program q = nasa::compile::compile(f.q, c, one, cfg);
    EXPECT_TRUE(std::none_of(q.descs.begin(), q.descs.end(),
                             [](const nasa::Desc& d) { return nasa::is_packed(d); }));
    auto r1 = nasa::device::make_ref_device(cfg, q.image.size());
    const auto alone = run_logits(*r1, q, f.net.classes, nullptr);
    EXPECT_TRUE(std::equal(alone.begin(), alone.end(), all.begin() + n * f.net.classes))
        << "image " << n;
  }
}

// Image groups (docs/engine.md "Image groups"): a program whose first layers run two images at a
// time, group after group, gives the RTL the reference model's logits, cycles and counters, and
// the logits of the layer-major program; the groups' own tensors take one scratch block per
// group.
TEST(Compile, ImageGroupsRunExactly) {
  Fixture f;
  const auto& cfg = nasa::config_by_name("sim");
  const std::vector<std::vector<uint8_t>> imgs(f.images.begin(), f.images.begin() + 5);
  const nasa::spec::Candidate c{1, 4, 0, 5, 3, 2};
  const Program lm = nasa::compile::compile(f.q, c, imgs, cfg, true, {0, 0});
  EXPECT_EQ(lm.order.prefix_layers, 0);
  const Program p = nasa::compile::compile(f.q, c, imgs, cfg, true, {3, 2});
  EXPECT_EQ(p.order.prefix_layers, 3);
  EXPECT_EQ(p.order.group, 2u);
  auto encoded = [](const Program& x) {
    std::vector<std::array<uint32_t, nasa::hw::kDescWords>> v;
    for (const nasa::Desc& d : x.descs) v.push_back(nasa::encode(d));
    return v;
  };
  EXPECT_NE(encoded(p), encoded(lm));
  EXPECT_TRUE(std::any_of(p.regions.begin(), p.regions.end(), [](const auto& r) {
    return r.name.find("activation blocks") != std::string::npos;
  }));
  auto ref = nasa::device::make_ref_device(cfg, p.image.size());
  auto rtl = nasa::sim::make_rtl_device(cfg, p.image.size());
  uint64_t c_ref = 0, c_rtl = 0;
  const auto logits = run_logits(*ref, p, f.net.classes, &c_ref);
  EXPECT_EQ(logits, run_logits(*rtl, p, f.net.classes, &c_rtl));
  EXPECT_EQ(c_ref, c_rtl);
  for (int id = 0; id < nasa::hw::kNumCounters; ++id) {
    EXPECT_EQ(ref->counter(static_cast<nasa::hw::Counter>(id)),
              rtl->counter(static_cast<nasa::hw::Counter>(id)))
        << id;
  }
  auto r2 = nasa::device::make_ref_device(cfg, lm.image.size());
  EXPECT_EQ(logits, run_logits(*r2, lm, f.net.classes, nullptr));
}

// compile() chooses image groups when a layer's tensors of the whole mini-batch exceed the
// scratch: with 48 images the 28x28x96 expansion of fmnist-mb's layer 2 (mb_k3_e6, 3.6 MB of
// them) does not fit the 2 MiB window layer-major; with 5 it does.
TEST(Compile, ChoosesImageGroupsWhenTensorsOutgrowTheScratch) {
  Fixture f;
  const auto& cfg = nasa::config_by_name("sim");
  const nasa::spec::Candidate c{2, 2, 3, 3, 3, 3};
  std::vector<std::vector<uint8_t>> imgs;
  for (size_t n = 0; n < 48; ++n) imgs.push_back(f.images[n % f.images.size()]);
  const Program p = nasa::compile::compile(f.q, c, imgs, cfg);
  EXPECT_EQ(p.order.prefix_layers, 3);  // through layer 2
  EXPECT_EQ(p.order.group, 13u);        // 1 MiB / 75,264 bytes
  const Program lm = nasa::compile::compile(f.q, c, imgs, cfg, true, {0, 0});
  auto r1 = nasa::device::make_ref_device(cfg, p.image.size());
  auto r2 = nasa::device::make_ref_device(cfg, lm.image.size());
  EXPECT_EQ(run_logits(*r1, p, f.net.classes, nullptr),
            run_logits(*r2, lm, f.net.classes, nullptr));
  EXPECT_LT(r1->counter(nasa::hw::Counter::DramRdBytes) +
                r1->counter(nasa::hw::Counter::DramWrBytes),
            r2->counter(nasa::hw::Counter::DramRdBytes) +
                r2->counter(nasa::hw::Counter::DramWrBytes));
  const std::vector<std::vector<uint8_t>> few(imgs.begin(), imgs.begin() + 5);
  EXPECT_EQ(nasa::compile::compile(f.q, c, few, cfg).order.prefix_layers, 0);
}

TEST(Compile, MemoryMapCoversEveryBlockWithoutOverlap) {
  Fixture f;
  const std::vector<std::vector<uint8_t>> imgs(f.images.begin(), f.images.begin() + 2);
  const Program p =
      nasa::compile::compile(f.q, {1, 4, 0, 5, 3, 2}, imgs, nasa::config_by_name("sim"));
  ASSERT_FALSE(p.regions.empty());
  for (size_t i = 1; i < p.regions.size(); ++i) {
    EXPECT_GE(p.regions[i].addr, p.regions[i - 1].addr + p.regions[i - 1].size)
        << p.regions[i - 1].name << " overlaps " << p.regions[i].name;
  }
  EXPECT_LE(p.regions.back().addr + p.regions.back().size, p.win_limit);
  EXPECT_EQ(p.regions.back().name, "descriptors");
  EXPECT_EQ(p.regions.back().addr, p.desc_addr);
}

TEST(Compile, RejectsWrongImageSize) {
  Fixture f;
  const std::vector<std::vector<uint8_t>> bad = {std::vector<uint8_t>(10)};
  EXPECT_THROW(nasa::compile::compile(f.q, {0, 0, 0, 0, 0, 0}, bad, nasa::config_by_name("sim")),
               std::invalid_argument);
}

// A layer too large for a configuration is refused with the numbers: fmnist-mb's 28x28x16
// activations do not fit the fpga configuration's 2 KB input buffer.
TEST(Compile, OversizeLayerNamesItsInputAndTheBuffer) {
  Fixture f;
  const auto& fpga = nasa::config_by_name("fpga");
  try {
    nasa::compile::compile(f.q, {0, 0, 0, 0, 0, 0}, f.images, fpga);
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("does not run on config 'fpga': Oversize: its input "), std::string::npos)
        << m;
    EXPECT_NE(m.find("of the 2048-byte input buffer"), std::string::npos) << m;
  }
}

}  // namespace
