#include "nasa/train.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <malloc.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <numbers>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>

#include "nasa/files.h"
#include "nasa/float_eval.h"
#include "nasa/hw_spec.h"
#include "nasa/interrupt.h"
#include "nasa/supernet_weights.h"

namespace nasa::train {
namespace {

namespace fs = std::filesystem;
using spec::OpKind;

constexpr const char* kCheckpointFormat = "nasa-train-checkpoint-1";

// In place on `x` (a BatchNorm's output, which its backward does not need): ReLU6 as hardtanh,
// whose backward is one fused kernel (clamp's is four).
torch::Tensor activate(torch::Tensor x, int act) {
  if (act == static_cast<int>(hw::Act::Relu)) return torch::relu_(x);
  if (act == static_cast<int>(hw::Act::Relu6)) return torch::hardtanh_(x, 0.0, 6.0);
  return x;
}

// Names match weights::supernet_tensors: <prefix>.conv.weight, <prefix>.bn.{weight,bias,...}.
struct ConvBNImpl : torch::nn::Module {
  torch::nn::Conv2d conv{nullptr};
  torch::nn::BatchNorm2d bn{nullptr};
  int act = 0;
  ConvBNImpl(int64_t cin, int64_t cout, int64_t k, int64_t stride, int64_t groups, int act_)
      : act(act_) {
    conv = register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(cin, cout, k)
                                                         .stride(stride)
                                                         .padding((k - 1) / 2)
                                                         .groups(groups)
                                                         .bias(false)));
    // eps as in floatnet::forward (and the quantizer's BN fold)
    bn = register_module(
        "bn", torch::nn::BatchNorm2d(torch::nn::BatchNorm2dOptions(cout).eps(1e-5).momentum(0.1)));
  }
  // The output in channels-last (NHWC) memory whatever the input's: a one-channel input is both
  // layouts at once, and the convolution then picks NCHW for its output (and so would every
  // layer after it). A no-op for a channels-last output.
  torch::Tensor forward(const torch::Tensor& x) {
    return activate(bn(conv(x).contiguous(torch::MemoryFormat::ChannelsLast)), act);
  }
};
TORCH_MODULE(ConvBN);

struct MBConvImpl : torch::nn::Module {
  ConvBN expand{nullptr}, dw{nullptr}, project{nullptr};
  bool residual = false;
  MBConvImpl(const spec::LayerShape& s, const spec::OpSpec& op, int act) {
    const int64_t mid = int64_t{s.cin} * op.expand;
    if (op.expand != 1) expand = register_module("expand", ConvBN(s.cin, mid, 1, 1, 1, act));
    dw = register_module("dw", ConvBN(mid, mid, op.k, s.stride, mid, act));
    project = register_module("project", ConvBN(mid, s.cout, 1, 1, 1, 0));
    residual = s.stride == 1 && s.cin == s.cout;
  }
  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor t = expand ? expand->forward(x) : x;
    t = project->forward(dw->forward(t));
    return residual ? t + x : t;
  }
};
TORCH_MODULE(MBConv);

struct SkipImpl : torch::nn::Module {};
TORCH_MODULE(Skip);

struct LayerImpl : torch::nn::Module {
  torch::nn::ModuleList choices;
  LayerImpl() { choices = register_module("choices", torch::nn::ModuleList()); }
};
TORCH_MODULE(Layer);

struct HeadImpl : torch::nn::Module {
  torch::nn::Conv2d conv{nullptr};
  torch::nn::BatchNorm2d bn{nullptr};
  torch::nn::Linear fc{nullptr};
  HeadImpl(int64_t cin, int64_t channels, int64_t classes) {
    conv = register_module(
        "conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(cin, channels, 1).bias(false)));
    bn = register_module(
        "bn",
        torch::nn::BatchNorm2d(torch::nn::BatchNorm2dOptions(channels).eps(1e-5).momentum(0.1)));
    fc = register_module("fc", torch::nn::Linear(channels, classes));
  }
};
TORCH_MODULE(Head);

// The whole supernet: one module per (layer, choice), each with its own BatchNorm.
struct SupernetImpl : torch::nn::Module {
  struct Choice {
    OpKind kind = OpKind::Skip;
    MBConv mb{nullptr};
    ConvBN conv{nullptr};
  };
  int act = 2;
  // Layer outputs of forward() found in NCHW memory rather than NHWC (the slow layout; a test
  // requires none).
  int64_t nchw_activations = 0;
  ConvBN stem{nullptr};
  torch::nn::ModuleList layers;
  std::vector<std::vector<Choice>> choices;
  Head head{nullptr};

  explicit SupernetImpl(const spec::Supernet& net) {
    act = static_cast<int>(net.act == "relu" ? hw::Act::Relu : hw::Act::Relu6);
    stem = register_module(
        "stem", ConvBN(net.in_c, net.stem.out_channels, net.stem.k, net.stem.stride, 1, act));
    layers = register_module("layers", torch::nn::ModuleList());
    const auto shapes = spec::layer_shapes(net);
    for (size_t i = 0; i < net.layers.size(); ++i) {
      Layer layer;
      std::vector<Choice> cs;
      const auto& s = shapes[i];
      for (const spec::OpSpec& op : net.layers[i].choices) {
        Choice c;
        c.kind = op.kind;
        switch (op.kind) {
          case OpKind::MBConv:
            c.mb = MBConv(s, op, act);
            layer->choices->push_back(c.mb);
            break;
          case OpKind::Conv:
            c.conv = ConvBN(s.cin, s.cout, op.k, s.stride, 1, act);
            layer->choices->push_back(c.conv);
            break;
          case OpKind::Skip:
            layer->choices->push_back(Skip());
            break;
        }
        cs.push_back(std::move(c));
      }
      layers->push_back(layer);
      choices.push_back(std::move(cs));
    }
    const int64_t last = net.layers.empty() ? net.stem.out_channels : shapes.back().cout;
    head = register_module("head", Head(last, net.head.channels, net.classes));
  }

  torch::Tensor forward(torch::Tensor x, const spec::Candidate& cand) {
    // NHWC activations: 1.5-1.8x faster training on this CPU than NCHW (a network of the
    // default job, Fashion-MNIST: 4,900-5,200 vs 2,770 images/s; ConvBN keeps the one-channel
    // stem's output NHWC); values differ from NCHW only by the kernels' rounding.
    auto count = [&](const torch::Tensor& t) {
      if (!t.is_contiguous(torch::MemoryFormat::ChannelsLast)) ++nchw_activations;
    };
    x = stem->forward(x.contiguous(torch::MemoryFormat::ChannelsLast));
    count(x);
    for (size_t i = 0; i < choices.size(); ++i) {
      Choice& c = choices[i][static_cast<size_t>(cand[i])];
      if (c.kind == OpKind::MBConv) {
        x = c.mb->forward(x);
      } else if (c.kind == OpKind::Conv) {
        x = c.conv->forward(x);
      }
      count(x);
    }
    x = activate(head->bn(head->conv(x)), act);
    count(x);
    x = x.mean({2, 3});
    return head->fc(x);
  }

  // Convolution weights in the NHWC-friendly layout (call after changing weights in place).
  void channels_last() {
    torch::NoGradGuard no_grad;
    for (auto& m : modules(/*include_self=*/false)) {
      if (auto* c = m->as<torch::nn::Conv2d>()) {
        c->weight.set_data(c->weight.contiguous(torch::MemoryFormat::ChannelsLast));
      }
    }
  }

  // He-normal (fan_in) convolutions as weights::random_weights, small FC, BN at identity.
  void init_weights() {
    torch::NoGradGuard no_grad;
    for (auto& m : modules(/*include_self=*/false)) {
      if (auto* c = m->as<torch::nn::Conv2d>()) {
        torch::nn::init::kaiming_normal_(c->weight, 0.0, torch::kFanIn, torch::kReLU);
      } else if (auto* l = m->as<torch::nn::Linear>()) {
        torch::nn::init::normal_(l->weight, 0.0, 0.01);
        torch::nn::init::zeros_(l->bias);
      }
    }
    // Residual blocks start as the identity, so whatever path is sampled the network starts
    // shallow and trains from the first step.
    for (auto& layer : choices) {
      for (auto& c : layer) {
        if (c.kind == OpKind::MBConv && c.mb->residual) {
          torch::nn::init::zeros_(c.mb->project->bn->weight);
        }
      }
    }
  }
};
TORCH_MODULE(Supernet);

// Every tensor the weights file holds, by name (num_batches_tracked is torch bookkeeping).
std::map<std::string, torch::Tensor> named_tensors(Supernet& model) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& p : model->named_parameters(true)) out[p.key()] = p.value();
  for (const auto& b : model->named_buffers(true)) {
    if (b.key().ends_with("num_batches_tracked")) continue;
    out[b.key()] = b.value();
  }
  return out;
}

weights::TensorFile export_weights(const spec::Supernet& net, Supernet& model) {
  auto named = named_tensors(model);
  weights::TensorFile file;
  for (const weights::TensorSpec& ts : weights::supernet_tensors(net)) {
    auto it = named.find(ts.name);
    if (it == named.end()) {
      throw std::logic_error(fmt::format("torch supernet has no tensor '{}'", ts.name));
    }
    torch::Tensor t = it->second.detach().to(torch::kFloat).contiguous();
    if (t.sizes().vec() != ts.shape) {
      throw std::logic_error(fmt::format("torch tensor '{}' has shape [{}], expected [{}]", ts.name,
                                         fmt::join(t.sizes(), ","), fmt::join(ts.shape, ",")));
    }
    file.add_f32(ts.name, ts.shape, std::span<const float>(t.data_ptr<float>(), t.numel()));
    named.erase(it);
  }
  if (!named.empty()) {
    throw std::logic_error(
        fmt::format("torch supernet has tensor '{}' the spec does not", named.begin()->first));
  }
  return file;
}

void import_weights(const spec::Supernet& net, const weights::TensorFile& file, Supernet& model,
                    std::string_view source) {
  weights::check_weights(net, file, source);
  auto named = named_tensors(model);
  torch::NoGradGuard no_grad;
  for (auto& [name, t] : named) {
    const weights::Tensor& w = file.at(name);
    const auto v = w.f32();
    t.copy_(torch::from_blob(const_cast<float*>(v.data()), t.sizes(), torch::kFloat));
  }
}

// Deterministic in (seed, epoch) so a resumed run sees the same order.
std::vector<int64_t> epoch_order(uint64_t seed, int epoch, size_t n) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(epoch) + 1);
  std::vector<int64_t> p(n);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<int64_t>(i);
  for (size_t i = n; i > 1; --i) std::swap(p[i - 1], p[rng() % i]);
  return p;
}

// Training-time augmentation of a batch of [N, C, H, W] uint8 images: each image moved by up to
// `shift` pixels in each direction (the uncovered border zero, as Fashion-MNIST's background) and,
// with `flip`, mirrored left-right with probability 1/2. Deterministic in (seed, step), so a
// resumed run and every rank of a data-parallel one see the same batch.
torch::Tensor augment(const torch::Tensor& u8, int shift, bool flip, uint64_t seed, int64_t step) {
  if (shift == 0 && !flip) return u8;
  std::mt19937_64 rng((seed ^ 0xA0A0A0A0A0A0ULL) * 0x9E3779B97F4A7C15ULL +
                      static_cast<uint64_t>(step));
  const int64_t n = u8.size(0), h = u8.size(2), w = u8.size(3);
  // Each image's draws, in one order whatever the path below: its shift (dy, dx; 0 without
  // shifts), then whether it is mirrored (only when flip is on).
  struct Draw {
    int64_t dy, dx;
    bool mirror;
  };
  const auto span = static_cast<uint64_t>(2 * shift + 1);
  std::vector<Draw> draws(static_cast<size_t>(n));
  for (Draw& d : draws) {
    d.dy = static_cast<int64_t>(rng() % span);
    d.dx = static_cast<int64_t>(rng() % span);
    d.mirror = flip && (rng() & 1);
  }
  if (shift == 0) {  // mirroring only: one select over the batch instead of a copy per image
    std::vector<uint8_t> mirror(draws.size());
    for (size_t i = 0; i < draws.size(); ++i) mirror[i] = draws[i].mirror;
    const torch::Tensor mask =
        torch::from_blob(mirror.data(), {n, 1, 1, 1}, torch::kUInt8).to(torch::kBool);
    return torch::where(mask, u8.flip({3}), u8);
  }
  const torch::Tensor padded = torch::constant_pad_nd(u8, {shift, shift, shift, shift}, 0);
  torch::Tensor out = torch::empty_like(u8);
  for (int64_t i = 0; i < n; ++i) {
    const Draw& d = draws[static_cast<size_t>(i)];
    torch::Tensor v = padded[i].narrow(1, d.dy, h).narrow(2, d.dx, w);
    if (d.mirror) v = v.flip({2});
    out[i].copy_(v);
  }
  return out;
}

spec::Candidate sample(const spec::Supernet& net, std::mt19937_64& rng) {
  spec::Candidate c(net.layers.size());
  for (size_t i = 0; i < c.size(); ++i)
    c[i] = static_cast<int>(rng() % net.layers[i].choices.size());
  return c;
}

// Tensors' values concatenated in their logical order (whatever their memory format), each in a
// place the size of its `like` (itself, or the parameter of a gradient), followed by `extra`
// zeros; an undefined tensor leaves its place zero. And back: each tensor's place of
// `v`, times `scale`, copied into it.
std::vector<float> pack(std::span<const torch::Tensor> ts, std::span<const torch::Tensor> like,
                        size_t extra = 0) {
  int64_t n = 0;
  for (const auto& t : like) n += t.numel();
  std::vector<float> v(static_cast<size_t>(n) + extra, 0.0f);
  int64_t off = 0;
  for (size_t i = 0; i < like.size(); ++i) {
    if (ts[i].defined()) {
      const torch::Tensor c = ts[i].contiguous();
      std::copy_n(c.data_ptr<float>(), c.numel(), v.data() + off);
    }
    off += like[i].numel();
  }
  return v;
}
torch::Tensor unpacked(const std::vector<float>& v, int64_t off, const torch::Tensor& like) {
  return torch::from_blob(const_cast<float*>(v.data()) + off, like.sizes(), torch::kFloat);
}

// Sums the gradients over the ranks in one collective: a parameter gets the sum where any rank's
// path reached it, and stays without a gradient (skipped by the optimizer) where none did.
void sum_gradients(Supernet& model, dist::Comm& ranks) {
  const auto params = model->parameters();
  std::vector<torch::Tensor> grads;
  int64_t n = 0;
  for (const auto& p : params) grads.push_back(p.grad()), n += p.numel();
  // the gradients (zero where undefined), then one flag per parameter: 1 where this rank has
  // its gradient
  std::vector<float> buf = pack(grads, params, params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    if (grads[i].defined()) buf[static_cast<size_t>(n) + i] = 1.0f;
  }
  ranks.sum(buf);
  int64_t off = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    torch::Tensor p = params[i];
    if (buf[static_cast<size_t>(n) + i] > 0.0f) {
      torch::Tensor g = torch::empty_like(p);
      g.copy_(unpacked(buf, off, p));
      p.mutable_grad() = g;
    } else {
      p.mutable_grad() = torch::Tensor();
    }
    off += p.numel();
  }
}

// One step's forward and backward (without the optimizer): path r of `paths` on share r of the
// batch, its loss weighted by the share's size, for the paths r this rank takes (r mod N); then
// the gradients summed over the ranks. Returns the batch's mean loss (summed over the ranks).
// One path on one rank is plain single-path training.
double step_backward(Supernet& model, const torch::Tensor& x, const torch::Tensor& y,
                     std::span<const spec::Candidate> paths, dist::Comm& ranks,
                     double label_smoothing = 0) {
  for (auto& p : model->parameters()) p.mutable_grad() = torch::Tensor();
  const int64_t batch = x.size(0);
  const auto np = static_cast<int>(paths.size());
  double loss = 0;
  for (int r = ranks.rank(); r < np; r += ranks.size()) {
    const auto [b0, e0] = dist::share(static_cast<size_t>(batch), r, np);
    const auto b = static_cast<int64_t>(b0), e = static_cast<int64_t>(e0);
    if (b == e) continue;
    const torch::Tensor l = torch::nn::functional::cross_entropy(
        model->forward(x.slice(0, b, e), paths[static_cast<size_t>(r)]), y.slice(0, b, e),
        torch::nn::functional::CrossEntropyFuncOptions().label_smoothing(label_smoothing));
    if (np == 1) {
      l.backward();
      loss = l.item<double>();
    } else {
      const double share = static_cast<double>(e - b) / static_cast<double>(batch);
      (l * share).backward();
      loss += l.item<double>() * share;
    }
  }
  if (ranks.size() > 1) {
    sum_gradients(model, ranks);
    ranks.sum(std::span<double>(&loss, 1));
  }
  return loss;
}

// The BatchNorm running statistics averaged over the ranks (each rank's follow its own shares).
void average_bn_stats(Supernet& model, dist::Comm& ranks) {
  if (ranks.size() <= 1) return;
  std::vector<torch::Tensor> bufs;
  for (const auto& b : model->named_buffers(true)) {
    if (!b.key().ends_with("num_batches_tracked")) bufs.push_back(b.value());
  }
  std::vector<float> v = pack(bufs, bufs);
  ranks.sum(v);
  torch::NoGradGuard no_grad;
  int64_t off = 0;
  for (auto& t : bufs) {
    t.copy_(unpacked(v, off, t) / ranks.size());
    off += t.numel();
  }
}

double cosine_lr(double base, int64_t step, int64_t total) {
  return 0.5 * base *
         (1.0 + std::cos(std::numbers::pi * static_cast<double>(step) /
                         static_cast<double>(std::max<int64_t>(total, 1))));
}

std::string c10_message(const c10::Error& e) {
  std::string m = e.what_without_backtrace();
  const auto nl = m.find('\n');
  return nl == std::string::npos ? m : m.substr(0, nl);
}

// The settings a checkpoint must share with the run that resumes it.
nlohmann::json run_settings(const Config& cfg, size_t train_n) {
  return {
      {"epochs", cfg.epochs},
      {"batch", cfg.batch},
      {"optimizer", cfg.optimizer},
      {"lr", cfg.lr},
      {"weight_decay", cfg.weight_decay},
      {"seed", cfg.seed},
      {"train_images", train_n},
      {"val_split_images", cfg.val_images},
      {"augment_shift", cfg.augment_shift},
      {"augment_flip", cfg.augment_flip},
      {"label_smoothing", cfg.label_smoothing},
      {"paths_per_step", cfg.paths_per_step},
      {"arch", cfg.arch ? spec::format_candidate(*cfg.arch) : std::string("supernet")},
      {"init", cfg.init ? cfg.init->metadata.count("generator") ? cfg.init->metadata.at("generator")
                                                                : std::string("given")
                        : std::string("random")}};
}

// Images [begin, begin + count) of the dataset (default: all) as an [N, C, H, W] uint8 tensor of
// its HWC bytes, a copy that outlives `ds` (with one channel the permutation is already
// contiguous: contiguous() would return a view of `ds`).
torch::Tensor nchw_images(const spec::Supernet& net, const data::Dataset& ds, size_t begin = 0,
                          size_t count = SIZE_MAX) {
  data::check_fits(ds, net.name, net.in_h, net.in_w, net.in_c, net.classes, "the data");
  count = std::min(count, ds.size() - std::min(begin, ds.size()));
  const auto n = static_cast<int64_t>(count);
  const size_t per = static_cast<size_t>(net.in_h) * net.in_w * net.in_c;
  return torch::from_blob(const_cast<uint8_t*>(ds.images.data() + begin * per),
                          {n, net.in_h, net.in_w, net.in_c}, torch::kUInt8)
      .permute({0, 3, 1, 2})
      .clone(torch::MemoryFormat::Contiguous);  // (a copy even when the permutation is one)
}

// Labels [begin, begin + count) of the dataset (default: all) as an [N] int64 tensor, a copy.
torch::Tensor label_tensor(const data::Dataset& ds, size_t begin = 0, size_t count = SIZE_MAX) {
  count = std::min(count, ds.size() - std::min(begin, ds.size()));
  return torch::from_blob(const_cast<uint8_t*>(ds.labels.data() + begin),
                          {static_cast<int64_t>(count)}, torch::kUInt8)
      .to(torch::kLong);
}

// The network's input of a batch of [N, C, H, W] uint8 images: pixel / 255, normalized per
// channel (floatnet::Normalization) unless `norm` is empty.
class Inputs {
 public:
  Inputs() = default;
  explicit Inputs(floatnet::Normalization norm) : norm_(std::move(norm)) {
    if (norm_.empty()) return;
    const auto c = static_cast<int64_t>(norm_.mean.size());
    mean_ = torch::from_blob(norm_.mean.data(), {1, c, 1, 1}, torch::kFloat).clone();
    std_ = torch::from_blob(norm_.std.data(), {1, c, 1, 1}, torch::kFloat).clone();
  }
  torch::Tensor operator()(const torch::Tensor& u8) const {
    torch::Tensor x = u8.to(torch::kFloat).div_(255.0f);
    return norm_.empty() ? x : x.sub_(mean_).div_(std_);
  }
  const floatnet::Normalization& norm() const { return norm_; }

 private:
  floatnet::Normalization norm_;
  torch::Tensor mean_, std_;
};

struct Data {
  torch::Tensor images;  // [N, C, H, W] uint8
  torch::Tensor labels;  // [N] int64
  size_t train_n = 0, val_begin = 0, val_n = 0;
  Inputs inputs;  // normalization of the training split (or of the initial weights)
};

Data make_data(const spec::Supernet& net, const Config& cfg) {
  const data::Dataset ds = cfg.dataset ? *cfg.dataset : data::load_fashion_mnist("train");
  if (cfg.val_images >= ds.size()) {
    throw std::runtime_error(
        fmt::format("validation split of {} images leaves no training "
                    "images of the {} in the dataset",
                    cfg.val_images, ds.size()));
  }
  Data d;
  const size_t avail = ds.size() - cfg.val_images;
  if (cfg.train_images > avail) {
    throw std::runtime_error(fmt::format(
        "--train-images {} exceeds the {} training images (the last {} are the validation split)",
        cfg.train_images, avail, cfg.val_images));
  }
  d.train_n = cfg.train_images ? cfg.train_images : avail;
  d.val_begin = avail;
  d.val_n = cfg.val_images;
  // Weights to start from keep the normalization they were trained with; a new training
  // normalizes with its own training split's statistics (docs/data.md "Normalization").
  d.inputs = Inputs(cfg.init ? floatnet::read_normalization(*cfg.init, net.in_c, "initial weights")
                             : floatnet::channel_normalization(ds, 0, d.train_n));
  d.images = nchw_images(net, ds);
  d.labels = label_tensor(ds);
  return d;
}

double accuracy(Supernet& model, const spec::Candidate& cand, const torch::Tensor& images,
                const torch::Tensor& labels, const Inputs& inputs, int64_t begin, int64_t count) {
  torch::NoGradGuard no_grad;
  model->eval();
  int64_t correct = 0;
  for (int64_t b = begin; b < begin + count; b += 500) {
    const int64_t e = std::min(begin + count, b + 500);
    auto x = inputs(images.slice(0, b, e));
    auto pred = model->forward(x, cand).argmax(1);
    correct += pred.eq(labels.slice(0, b, e)).sum().item<int64_t>();
  }
  return count ? static_cast<double>(correct) / static_cast<double>(count) : 0.0;
}

void recalibrate_bn(const spec::Supernet& net, Supernet& model, const Data& d, int batch,
                    const std::optional<spec::Candidate>& arch) {
  std::vector<torch::nn::BatchNorm2dImpl*> bns;
  for (auto& m : model->modules(false)) {
    if (auto* bn = m->as<torch::nn::BatchNorm2d>()) bns.push_back(bn);
  }
  for (auto* bn : bns) {
    bn->reset_running_stats();
    bn->options.momentum(c10::nullopt);  // cumulative average over the batches seen
  }
  int64_t cycle = 1;  // every choice gets the same number of batches
  for (const auto& l : net.layers) cycle = std::lcm(cycle, static_cast<int64_t>(l.choices.size()));
  const int64_t bs = std::min<int64_t>(batch, 128);
  const int64_t batches =
      std::max<int64_t>(1, std::min<int64_t>(cycle * std::max<int64_t>(1, 4096 / (cycle * bs)),
                                             static_cast<int64_t>(d.train_n) / bs));
  torch::NoGradGuard no_grad;
  model->train();
  for (int64_t b = 0; b < batches; ++b) {
    spec::Candidate c(net.layers.size());
    for (size_t i = 0; i < c.size(); ++i) {
      c[i] = static_cast<int>((b + static_cast<int64_t>(i)) %
                              static_cast<int64_t>(net.layers[i].choices.size()));
    }
    if (arch) c = *arch;
    const int64_t lo = (b * bs) % std::max<int64_t>(1, static_cast<int64_t>(d.train_n) - bs + 1);
    const torch::Tensor x = d.inputs(d.images.slice(0, lo, lo + bs));
    model->forward(x, c);
  }
  for (auto* bn : bns) bn->options.momentum(0.1);
  model->eval();
}

void append_line(const fs::path& p, const std::string& line) { append_line_durable(p, line); }

struct Paths {
  fs::path spec, weights, ckpt, log_jsonl, log_csv;
  explicit Paths(const fs::path& d)
      : spec(d / "supernet.json"),
        weights(d / "weights.safetensors"),
        ckpt(d / "checkpoint.pt"),
        log_jsonl(d / "train_log.jsonl"),
        log_csv(d / "train_log.csv") {}
  std::vector<fs::path> all() const { return {spec, weights, ckpt, log_jsonl, log_csv}; }
};

void check_config(const Config& cfg) {
  auto bad = [](const std::string& m) { throw std::invalid_argument(m); };
  if (cfg.epochs < 1) bad(fmt::format("--epochs must be >= 1, got {}", cfg.epochs));
  if (cfg.batch < 1) bad(fmt::format("--batch must be >= 1, got {}", cfg.batch));
  if (!(cfg.lr > 0)) bad(fmt::format("--lr must be > 0, got {}", cfg.lr));
  if (cfg.weight_decay < 0) bad(fmt::format("--wd must be >= 0, got {}", cfg.weight_decay));
  if (!(cfg.label_smoothing >= 0 && cfg.label_smoothing < 1)) {
    bad(fmt::format("--label-smoothing must be in [0, 1), got {}", cfg.label_smoothing));
  }
  if (cfg.augment_shift < 0 || cfg.augment_shift > 8) {
    bad(fmt::format("--augment-shift must be in [0, 8] pixels, got {}", cfg.augment_shift));
  }
  if (cfg.threads < 1) bad(fmt::format("--threads must be >= 1, got {}", cfg.threads));
  if (cfg.paths_per_step < 0 || cfg.paths_per_step > cfg.batch) {
    bad(fmt::format("--paths-per-step must be in [0, --batch {}], got {}", cfg.batch,
                    cfg.paths_per_step));
  }
  if (cfg.optimizer != "sgd" && cfg.optimizer != "adam") {
    bad(fmt::format("--optimizer must be 'sgd' or 'adam', got '{}'", cfg.optimizer));
  }
  if (cfg.resume && cfg.force) bad("--resume and --force exclude each other");
}

std::string run_kind(const Config& cfg) {
  return cfg.arch ? fmt::format("standalone {}", spec::format_candidate(*cfg.arch))
                  : std::string("supernet");
}

struct CheckpointState {
  int epoch = 0;
  int64_t step = 0;
  std::string sampler_rng;
};

void save_checkpoint(const fs::path& path, const spec::Supernet& net,
                     const nlohmann::json& settings, const CheckpointState& st, Supernet& model,
                     torch::optim::Optimizer& opt) {
  torch::serialize::OutputArchive ar;
  ar.write("format", c10::IValue(std::string(kCheckpointFormat)));
  ar.write("spec", c10::IValue(spec::to_json(net).dump()));
  ar.write("settings", c10::IValue(settings.dump()));
  ar.write("epoch", c10::IValue(int64_t{st.epoch}));
  ar.write("step", c10::IValue(st.step));
  ar.write("sampler_rng", c10::IValue(st.sampler_rng));
  torch::serialize::OutputArchive m, o;
  model->save(m);
  opt.save(o);
  ar.write("model", m);
  ar.write("optimizer", o);
  write_atomic(path, [&](const fs::path& tmp) { ar.save_to(tmp.string()); });
}

CheckpointState load_checkpoint(const fs::path& path, const spec::Supernet& net,
                                const nlohmann::json& settings, Supernet& model,
                                torch::optim::Optimizer& opt) {
  const std::string where = fmt::format("checkpoint '{}'", path.string());
  torch::serialize::InputArchive ar;
  try {
    ar.load_from(path.string());
  } catch (const c10::Error& e) {
    throw std::runtime_error(
        fmt::format("{} is corrupt or not a checkpoint ({}); delete it and train without --resume",
                    where, c10_message(e)));
  }
  auto read_string = [&](const char* key) {
    c10::IValue v;
    try {
      ar.read(key, v);
    } catch (const c10::Error& e) {
      throw std::runtime_error(
          fmt::format("{} has no '{}' entry (not written by nasa train?)", where, key));
    }
    if (!v.isString())
      throw std::runtime_error(fmt::format("{}: '{}' is not a string", where, key));
    return v.toStringRef();
  };
  auto read_int = [&](const char* key) {
    c10::IValue v;
    try {
      ar.read(key, v);
    } catch (const c10::Error& e) {
      throw std::runtime_error(fmt::format("{} has no '{}' entry", where, key));
    }
    if (!v.isInt()) throw std::runtime_error(fmt::format("{}: '{}' is not an integer", where, key));
    return v.toInt();
  };
  const std::string format = read_string("format");
  if (format != kCheckpointFormat) {
    throw std::runtime_error(
        fmt::format("{} has format '{}', expected '{}'", where, format, kCheckpointFormat));
  }
  auto read_json = [&](const char* key) {
    try {
      return nlohmann::json::parse(read_string(key));
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(
          fmt::format("{}: '{}' is not valid JSON ({})", where, key, e.what()));
    }
  };
  const auto ck_spec = read_json("spec");
  if (ck_spec != spec::to_json(net)) {
    throw std::runtime_error(fmt::format(
        "{} was trained for supernet '{}', which differs from the spec being trained ('{}')", where,
        ck_spec.value("name", "?"), net.name));
  }
  const auto ck_settings = read_json("settings");
  for (const auto& [key, value] : settings.items()) {
    if (!ck_settings.contains(key) || ck_settings[key] != value) {
      throw std::runtime_error(fmt::format(
          "{} was written with {} = {}, this run has {} = {}; resume with the same settings", where,
          key, ck_settings.contains(key) ? ck_settings[key].dump() : "(none)", key, value.dump()));
    }
  }
  CheckpointState st;
  st.epoch = static_cast<int>(read_int("epoch"));
  st.step = read_int("step");
  st.sampler_rng = read_string("sampler_rng");
  try {
    torch::serialize::InputArchive m, o;
    ar.read("model", m);
    ar.read("optimizer", o);
    model->load(m);
    opt.load(o);
  } catch (const c10::Error& e) {
    throw std::runtime_error(fmt::format("{} does not match the model: {}", where, c10_message(e)));
  }
  return st;
}

}  // namespace

size_t resolved_paths_per_step(const spec::Supernet& net, const Config& cfg) {
  if (cfg.paths_per_step > 0) return static_cast<size_t>(cfg.paths_per_step);
  size_t widest = 1;
  for (const auto& layer : net.layers) widest = std::max(widest, layer.choices.size());
  return std::min(widest, static_cast<size_t>(cfg.batch));
}

std::vector<spec::Candidate> sample_paths(const spec::Supernet& net, size_t n,
                                          std::mt19937_64& rng) {
  if (n == 1) return {sample(net, rng)};
  std::vector<spec::Candidate> paths(n, spec::Candidate(net.layers.size()));
  for (size_t l = 0; l < net.layers.size(); ++l) {
    const size_t m = net.layers[l].choices.size();
    std::vector<int> perm(m);
    for (size_t j = 0; j < n; ++j) {
      if (j % m == 0) {
        for (size_t i = 0; i < m; ++i) perm[i] = static_cast<int>(i);
        for (size_t i = m; i > 1; --i) std::swap(perm[i - 1], perm[rng() % i]);
      }
      paths[j][l] = perm[j % m];
    }
  }
  return paths;
}

Result train_supernet(const spec::Supernet& net, const Config& cfg, const fs::path& dir) {
  const auto t_start = std::chrono::steady_clock::now();
  spec::validate(net);
  check_config(cfg);
  if (cfg.arch) spec::validate_candidate(net, *cfg.arch);
  if (cfg.init) weights::check_weights(net, *cfg.init, "initial weights");
  const Paths paths(dir);
  dist::Comm self;
  dist::Comm& ranks = cfg.ranks ? *cfg.ranks : self;
  const bool root = ranks.root();  // the only rank that writes

  // Never overwrite an earlier run silently.
  if (cfg.resume) {
    if (!fs::exists(paths.ckpt)) {
      throw std::runtime_error(
          fmt::format("--resume: '{}' does not exist (nothing to resume; train without --resume)",
                      paths.ckpt.string()));
    }
    if (fs::exists(paths.spec)) {
      const spec::Supernet prev = spec::load_supernet(paths.spec);
      if (!(prev == net)) {
        throw std::runtime_error(fmt::format(
            "'{}' holds supernet '{}', which differs from the spec being trained ('{}'); "
            "choose another --out",
            paths.spec.string(), prev.name, net.name));
      }
    }
  } else {
    std::vector<std::string> found;
    for (const auto& p : paths.all()) {
      if (fs::exists(p)) found.push_back(p.filename().string());
    }
    if (!found.empty() && !cfg.force) {
      throw std::runtime_error(fmt::format(
          "'{}' already holds a supernet or training run ({}); pass --resume to continue it, "
          "--force to start over, or choose another --out",
          dir.string(), fmt::join(found, ", ")));
    }
  }
  // every rank has checked the directory before rank 0 changes it
  ranks.barrier();
  if (root) {
    if (!cfg.resume) {
      for (const auto& p : paths.all()) fs::remove(p);
    }
    fs::create_directories(dir);
    remove_stale_temporaries(dir);  // of an earlier training killed while writing
  }

  // Keep freed activation buffers in the heap: without this every step maps and faults in
  // fresh pages for its large tensors.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  torch::set_num_threads(cfg.threads);
  torch::manual_seed(cfg.seed);
  const Data d = make_data(net, cfg);
  const nlohmann::json settings = run_settings(cfg, d.train_n);

  Supernet model(net);
  model->init_weights();
  if (cfg.init) import_weights(net, *cfg.init, model, "initial weights");
  model->channels_last();
  std::unique_ptr<torch::optim::Optimizer> opt;
  if (cfg.optimizer == "adam") {
    opt = std::make_unique<torch::optim::Adam>(
        model->parameters(), torch::optim::AdamOptions(cfg.lr).weight_decay(cfg.weight_decay));
  } else {
    opt = std::make_unique<torch::optim::SGD>(
        model->parameters(),
        torch::optim::SGDOptions(cfg.lr).momentum(0.9).nesterov(true).weight_decay(
            cfg.weight_decay));
  }

  std::mt19937_64 sampler(cfg.seed ^ 0x5A17E5EEDULL);
  Result res;
  res.dir = dir;
  int start_epoch = 0;
  int64_t step = 0;
  if (cfg.resume) {
    const CheckpointState st = load_checkpoint(paths.ckpt, net, settings, model, *opt);
    std::istringstream in(st.sampler_rng);
    in >> sampler;
    if (!in) {
      throw std::runtime_error(
          fmt::format("checkpoint '{}': sampler state is corrupt", paths.ckpt.string()));
    }
    model->channels_last();  // the checkpoint's tensors may come back in NCHW
    start_epoch = st.epoch;
    step = st.step;
    res.resumed = true;
  } else if (root) {
    spec::save_supernet(paths.spec, net);
    append_line(paths.log_csv, "epoch,step,loss,lr,images_per_s,seconds");
  }

  const int64_t steps_per_epoch = (static_cast<int64_t>(d.train_n) + cfg.batch - 1) / cfg.batch;
  const size_t paths_per_step = resolved_paths_per_step(net, cfg);
  const int64_t total_steps = steps_per_epoch * cfg.epochs;
  const auto t_train = std::chrono::steady_clock::now();
  int64_t images_seen = 0;
  auto since = [](auto t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };

  int epochs_this_run = 0;
  int epoch = start_epoch;
  for (; epoch < cfg.epochs; ++epoch) {
    if (cfg.stop_after_epochs > 0 && epochs_this_run >= cfg.stop_after_epochs) break;
    model->train();
    const auto order = epoch_order(cfg.seed, epoch, d.train_n);
    const torch::Tensor perm = torch::from_blob(const_cast<int64_t*>(order.data()),
                                                {static_cast<int64_t>(order.size())}, torch::kLong);
    double epoch_loss = 0, window_loss = 0;
    int window = 0;
    double lr = cfg.lr;
    for (int64_t s = 0; s < steps_per_epoch; ++s) {
      throw_if_interrupted("training");
      const int64_t b = s * cfg.batch;
      const int64_t e = std::min<int64_t>(b + cfg.batch, static_cast<int64_t>(d.train_n));
      const torch::Tensor idx = perm.slice(0, b, e);
      const torch::Tensor x = d.inputs(augment(d.images.index_select(0, idx), cfg.augment_shift,
                                               cfg.augment_flip, cfg.seed, step));
      const torch::Tensor y = d.labels.index_select(0, idx);
      // the step's paths (at least one per rank), all drawn from the one sampler (every rank
      // draws them all)
      const auto n_paths = std::max(paths_per_step, static_cast<size_t>(ranks.size()));
      const std::vector<spec::Candidate> cands =
          cfg.arch ? std::vector<spec::Candidate>(static_cast<size_t>(ranks.size()), *cfg.arch)
                   : sample_paths(net, n_paths, sampler);
      lr = cosine_lr(cfg.lr, step, total_steps);
      for (auto& g : opt->param_groups()) g.options().set_lr(lr);
      // Only the sampled paths get gradients: a parameter without a gradient is skipped by
      // the optimizer (no momentum, no weight decay).
      const double l = step_backward(model, x, y, cands, ranks, cfg.label_smoothing);
      opt->step();
      if (!std::isfinite(l)) {
        throw std::runtime_error(
            fmt::format("training diverged at epoch {} step {} (loss {}); try a smaller --lr",
                        epoch + 1, step + 1, l));
      }
      res.step_losses.push_back(l);
      epoch_loss += l;
      window_loss += l;
      ++window;
      ++step;
      images_seen += e - b;
      if (root && (window == 20 || s + 1 == steps_per_epoch)) {
        // Step-level log (an interrupted epoch is logged again when resumed; `step` tells).
        append_line(paths.log_jsonl,
                    nlohmann::json{{"event", "progress"},
                                   {"epoch", epoch + 1},
                                   {"step", step},
                                   {"loss", window_loss / window},
                                   {"lr", lr},
                                   {"images_per_s", images_seen / std::max(since(t_train), 1e-9)}}
                        .dump());
        if (cfg.on_progress) {
          cfg.on_progress({epoch + 1, cfg.epochs, step, steps_per_epoch, total_steps,
                           window_loss / window, lr, images_seen / std::max(since(t_train), 1e-9),
                           s + 1 == steps_per_epoch});
        }
        window_loss = 0;
        window = 0;
      }
    }
    ++epochs_this_run;
    average_bn_stats(model, ranks);
    if (!root) continue;
    std::ostringstream rng_state;
    rng_state << sampler;
    save_checkpoint(paths.ckpt, net, settings, {epoch + 1, step, rng_state.str()}, model, *opt);
    auto wf = export_weights(net, model);
    wf.metadata["supernet"] = net.name;
    wf.metadata["generator"] =
        fmt::format("nasa train ({}) seed {} epoch {}/{}", run_kind(cfg), cfg.seed, epoch + 1,
                    cfg.epochs);
    floatnet::write_normalization(wf, d.inputs.norm());
    weights::write_safetensors(paths.weights, wf);
    const double mean_loss = epoch_loss / static_cast<double>(steps_per_epoch);
    const double ips = images_seen / std::max(since(t_train), 1e-9);
    append_line(paths.log_jsonl, nlohmann::json{{"event", "epoch"},
                                                {"epoch", epoch + 1},
                                                {"step", step},
                                                {"loss", mean_loss},
                                                {"lr", lr},
                                                {"images_per_s", ips},
                                                {"seconds", since(t_train)}}
                                     .dump());
    append_line(paths.log_csv, fmt::format("{},{},{:.6f},{:.6g},{:.1f},{:.2f}", epoch + 1, step,
                                           mean_loss, lr, ips, since(t_train)));
  }
  res.train_seconds = since(t_train);
  res.epochs_done = epoch;
  res.steps_done = step;
  res.complete = epoch >= cfg.epochs;

  if (res.complete) {
    // The running BN statistics lag the weights (momentum 0.1, a choice's BN is updated only
    // when it is sampled): re-estimate them as exact averages over batches that visit every
    // choice of every layer equally often. The checkpoint keeps the un-recalibrated state.
    recalibrate_bn(net, model, d, cfg.batch, cfg.arch);
    auto wf = export_weights(net, model);
    wf.metadata["supernet"] = net.name;
    wf.metadata["generator"] =
        fmt::format("nasa train ({}) seed {} epochs {} (BN recalibrated)", run_kind(cfg),
                    cfg.seed, cfg.epochs);
    floatnet::write_normalization(wf, d.inputs.norm());
    if (root) weights::write_safetensors(paths.weights, wf);
    std::mt19937_64 eval_rng(cfg.seed + 0xE7A1);
    const size_t n_eval = cfg.eval_images ? std::min(cfg.eval_images, d.val_n) : d.val_n;
    nlohmann::json cj = nlohmann::json::array();
    const int n_cands = cfg.arch ? 1 : cfg.eval_candidates;
    for (int i = 0; i < n_cands && n_eval > 0; ++i) {
      const spec::Candidate c = cfg.arch ? *cfg.arch : sample(net, eval_rng);
      const double acc = accuracy(model, c, d.images, d.labels, d.inputs,
                                  static_cast<int64_t>(d.val_begin), static_cast<int64_t>(n_eval));
      res.candidates.push_back({c, acc});
      cj.push_back({{"arch", spec::format_candidate(c)}, {"val_accuracy_float", acc}});
    }
    if (root)
      append_line(paths.log_jsonl, nlohmann::json{{"event", "final"},
                                                  {"epochs", cfg.epochs},
                                                  {"steps", step},
                                                  {"eval_images", n_eval},
                                                  {"candidates", cj}}
                                       .dump());
  }
  res.seconds = since(t_start);
  return res;
}

StepGradients step_gradients(const spec::Supernet& net, const weights::TensorFile& wf,
                             std::span<const spec::Candidate> paths, std::span<const float> images,
                             std::span<const int64_t> labels, dist::Comm& ranks) {
  for (const auto& c : paths) spec::validate_candidate(net, c);
  const size_t per = static_cast<size_t>(net.in_c) * net.in_h * net.in_w;
  const auto n = static_cast<int64_t>(labels.size());
  if (paths.empty() || images.size() != per * labels.size()) {
    throw std::invalid_argument(fmt::format("step_gradients: {} paths, {} floats for {} images",
                                            paths.size(), images.size(), labels.size()));
  }
  Supernet model(net);
  import_weights(net, wf, model, "step_gradients weights");
  model->channels_last();
  model->train();
  const torch::Tensor x = torch::from_blob(const_cast<float*>(images.data()),
                                           {n, net.in_c, net.in_h, net.in_w}, torch::kFloat)
                              .contiguous(torch::MemoryFormat::ChannelsLast);
  const torch::Tensor y =
      torch::from_blob(const_cast<int64_t*>(labels.data()), {n}, torch::kLong).clone();
  StepGradients out;
  out.loss = step_backward(model, x, y, paths, ranks);
  out.nchw_activations = model->nchw_activations;
  for (const auto& p : model->named_parameters(true)) {
    const torch::Tensor g = p.value().grad().defined() ? p.value().grad().contiguous()
                                                       : torch::zeros_like(p.value()).contiguous();
    out.grad[p.key()] = {g.data_ptr<float>(), g.data_ptr<float>() + g.numel()};
  }
  return out;
}

namespace {

// The float model of `wf` for evaluation (eval mode) on `threads` torch threads.
Supernet eval_model(const spec::Supernet& net, const weights::TensorFile& wf, int threads,
                    const std::string& what) {
  torch::set_num_threads(threads);
  Supernet model(net);
  import_weights(net, wf, model, what);
  model->channels_last();
  model->eval();
  return model;
}

void check_range(size_t begin, size_t count, size_t size) {
  if (begin + count > size) {
    throw std::out_of_range(
        fmt::format("images [{}, {}) exceed the {} of the dataset", begin, begin + count, size));
  }
}

}  // namespace

std::vector<float> torch_forward(const spec::Supernet& net, const weights::TensorFile& wf,
                                 const spec::Candidate& cand, std::span<const float> images, int n,
                                 int threads) {
  spec::validate_candidate(net, cand);
  const size_t per = static_cast<size_t>(net.in_c) * net.in_h * net.in_w;
  if (n < 0 || images.size() != per * static_cast<size_t>(n)) {
    throw std::invalid_argument(fmt::format("torch_forward: {} floats for {} images of {}x{}x{}",
                                            images.size(), n, net.in_c, net.in_h, net.in_w));
  }
  Supernet model = eval_model(net, wf, threads, "torch_forward weights");
  torch::NoGradGuard no_grad;
  const torch::Tensor x = torch::from_blob(const_cast<float*>(images.data()),
                                           {n, net.in_c, net.in_h, net.in_w}, torch::kFloat);
  const torch::Tensor y = model->forward(x, cand).contiguous();
  return {y.data_ptr<float>(), y.data_ptr<float>() + y.numel()};
}

namespace {

// The BatchNorms of choice `c` (none for a skip).
std::vector<torch::nn::BatchNorm2dImpl*> choice_bns(SupernetImpl::Choice& c) {
  std::vector<torch::nn::BatchNorm2dImpl*> out;
  torch::nn::Module* m = c.kind == OpKind::MBConv ? static_cast<torch::nn::Module*>(c.mb.get())
                         : c.kind == OpKind::Conv ? static_cast<torch::nn::Module*>(c.conv.get())
                                                  : nullptr;
  if (!m) return out;
  for (auto& sub : m->modules(false)) {
    if (auto* bn = sub->as<torch::nn::BatchNorm2d>()) out.push_back(bn);
  }
  return out;
}

// Re-estimates `bns` as exact averages over `x`'s batches run through `f` in training mode
// (momentum off: a cumulative average), then leaves them in eval mode.
template <typename F>
void recalibrate(const std::vector<torch::nn::BatchNorm2dImpl*>& bns, const torch::Tensor& x,
                 F&& f) {
  if (bns.empty()) return;
  for (auto* bn : bns) {
    bn->reset_running_stats();
    bn->options.momentum(c10::nullopt);
    bn->train();
  }
  constexpr int64_t kBatch = 256;
  for (int64_t b = 0; b < x.size(0); b += kBatch) f(x.slice(0, b, std::min(x.size(0), b + kBatch)));
  for (auto* bn : bns) {
    bn->options.momentum(0.1);
    bn->eval();
  }
}

// `f` over `x` in pieces (eval mode), concatenated.
template <typename F>
torch::Tensor in_pieces(const torch::Tensor& x, F&& f) {
  constexpr int64_t kBatch = 500;
  std::vector<torch::Tensor> parts;
  for (int64_t b = 0; b < x.size(0); b += kBatch)
    parts.push_back(f(x.slice(0, b, std::min(x.size(0), b + kBatch))));
  return parts.size() == 1 ? parts[0] : torch::cat(parts);
}

}  // namespace

namespace {

// The MACs of a recalibration per calibration image (Recalibrated::macs_*) and its trie's size.
struct TrieCost {
  size_t nodes = 0;
  uint64_t macs_fused = 0, macs_alone = 0;
};

// Per-candidate BN recalibration over the candidates' trie (candidates in lexicographic order, a
// node per distinct prefix): each node's BatchNorms are re-estimated on the calibration inputs
// `xc` as they arrive through the node's own prefix, each node's outputs computed once, and `xe`
// (undefined: none) carried along the same way. At each leaf, with the head's BatchNorm
// recalibrated too, calls leaf(indices of the candidates of that path, the head's logits on xe
// or an undefined tensor); every BatchNorm on that path then holds the path's statistics.
TrieCost recalibrate_trie(
    const spec::Supernet& net, Supernet& model, std::span<const spec::Candidate> cands,
    const torch::Tensor& xc, const torch::Tensor& xe,
    const std::function<void(std::span<const size_t>, const torch::Tensor&)>& leaf) {
  TrieCost out;
  const uint64_t stem = spec::stem_cost(net).macs, head = spec::head_cost(net).macs;
  out.macs_fused = stem;
  for (const auto& c : cands) {
    uint64_t m = stem + head;
    for (size_t l = 0; l < c.size(); ++l)
      m += spec::op_cost(net, l, static_cast<size_t>(c[l])).macs;
    out.macs_alone += m;
  }
  std::vector<size_t> order(cands.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return cands[a] < cands[b]; });
  // f over the evaluation inputs, when there are any
  auto carry = [](const torch::Tensor& ev, const auto& f) {
    return ev.defined() ? in_pieces(ev, f) : torch::Tensor();
  };

  std::vector<torch::nn::BatchNorm2dImpl*> stem_bns = {model->stem->bn.get()};
  recalibrate(stem_bns, xc, [&](const torch::Tensor& x) { model->stem->forward(x); });
  auto stem_f = [&](const torch::Tensor& x) { return model->stem->forward(x); };
  const torch::Tensor sc = in_pieces(xc, stem_f), se = carry(xe, stem_f);

  const size_t depth = net.layers.size();
  // visit(l, cal, ev, [lo, hi)): the candidates order[lo..hi) share the prefix of length l,
  // whose outputs on the calibration and evaluation images are cal and ev
  std::function<void(size_t, const torch::Tensor&, const torch::Tensor&, size_t, size_t)> visit =
      [&](size_t l, const torch::Tensor& cal, const torch::Tensor& ev, size_t lo, size_t hi) {
        throw_if_interrupted("recalibration");
        if (l == depth) {
          auto& h = *model->head;
          auto head_f = [&](const torch::Tensor& x) {
            return h.fc(activate(h.bn(h.conv(x)), model->act).mean({2, 3}));
          };
          recalibrate({h.bn.get()}, cal, [&](const torch::Tensor& x) { h.bn(h.conv(x)); });
          out.macs_fused += head;
          leaf(std::span<const size_t>(order).subspan(lo, hi - lo), carry(ev, head_f));
          return;
        }
        for (size_t i = lo; i < hi;) {
          const int choice = cands[order[i]][l];
          size_t j = i;
          while (j < hi && cands[order[j]][l] == choice) ++j;
          auto& c = model->choices[l][static_cast<size_t>(choice)];
          auto op = [&](const torch::Tensor& x) {
            return c.kind == OpKind::MBConv ? c.mb->forward(x)
                   : c.kind == OpKind::Conv ? c.conv->forward(x)
                                            : x;
          };
          recalibrate(choice_bns(c), cal, op);
          ++out.nodes;
          out.macs_fused += spec::op_cost(net, l, static_cast<size_t>(choice)).macs;
          visit(l + 1, in_pieces(cal, op), carry(ev, op), i, j);
          i = j;
        }
      };
  if (!cands.empty()) visit(0, sc, se, 0, cands.size());
  return out;
}

// The first calib_n images of `calib` as the network takes them (normalized, channels last).
torch::Tensor calibration_inputs(const spec::Supernet& net, const data::Dataset& calib,
                                 size_t calib_n, const Inputs& inputs) {
  if (calib_n == 0 || calib_n > calib.size()) {
    throw std::out_of_range(
        fmt::format("recalibration: {} calibration images of the {} given", calib_n, calib.size()));
  }
  return inputs(nchw_images(net, calib, 0, calib_n)).contiguous(torch::MemoryFormat::ChannelsLast);
}

}  // namespace

Recalibrated recalibrated_accuracy(const spec::Supernet& net, const weights::TensorFile& wf,
                                   std::span<const spec::Candidate> cands,
                                   const data::Dataset& calib, size_t calib_n,
                                   const data::Dataset& eval, size_t begin, size_t count,
                                   int threads) {
  for (const auto& c : cands) spec::validate_candidate(net, c);
  check_range(begin, count, eval.size());
  Supernet model = eval_model(net, wf, threads, "recalibration weights");
  torch::NoGradGuard no_grad;
  const Inputs inputs(floatnet::read_normalization(wf, net.in_c, "recalibration weights"));
  const torch::Tensor xc = calibration_inputs(net, calib, calib_n, inputs);
  const torch::Tensor xe =
      inputs(nchw_images(net, eval, begin, count)).contiguous(torch::MemoryFormat::ChannelsLast);
  const torch::Tensor labels = label_tensor(eval, begin, count);
  Recalibrated out;
  out.accuracy.assign(cands.size(), 0.0);
  const TrieCost cost = recalibrate_trie(
      net, model, cands, xc, xe, [&](std::span<const size_t> idx, const torch::Tensor& logits) {
        const double acc =
            count ? static_cast<double>(logits.argmax(1).eq(labels).sum().item<int64_t>()) /
                        static_cast<double>(count)
                  : 0.0;
        for (size_t i : idx) out.accuracy[i] = acc;
      });
  out.nodes = cost.nodes;
  out.macs_fused = cost.macs_fused;
  out.macs_alone = cost.macs_alone;
  return out;
}

std::vector<weights::TensorFile> recalibrated_weights(const spec::Supernet& net,
                                                      const weights::TensorFile& wf,
                                                      std::span<const spec::Candidate> cands,
                                                      const data::Dataset& calib, size_t calib_n,
                                                      int threads) {
  for (const auto& c : cands) spec::validate_candidate(net, c);
  Supernet model = eval_model(net, wf, threads, "recalibration weights");
  torch::NoGradGuard no_grad;
  const Inputs inputs(floatnet::read_normalization(wf, net.in_c, "recalibration weights"));
  const torch::Tensor xc = calibration_inputs(net, calib, calib_n, inputs);
  std::vector<weights::TensorFile> out(cands.size());
  recalibrate_trie(net, model, cands, xc, torch::Tensor(),
                   [&](std::span<const size_t> idx, const torch::Tensor&) {
                     weights::TensorFile f = export_weights(net, model);
                     f.metadata = wf.metadata;
                     for (size_t i : idx) out[i] = f;
                   });
  return out;
}

double float_accuracy(const spec::Supernet& net, const weights::TensorFile& wf,
                      const spec::Candidate& cand, const data::Dataset& ds, size_t begin,
                      size_t count, int threads) {
  spec::validate_candidate(net, cand);
  check_range(begin, count, ds.size());
  Supernet model = eval_model(net, wf, threads, "float_accuracy weights");
  // only the evaluated images are converted
  const auto n = static_cast<int64_t>(count);
  const torch::Tensor images = nchw_images(net, ds, begin, count);
  const torch::Tensor labels = label_tensor(ds, begin, count);
  return accuracy(model, cand, images, labels,
                  Inputs(floatnet::read_normalization(wf, net.in_c, "float_accuracy weights")), 0,
                  n);
}

}  // namespace nasa::train
