// `mpirun -np N mpi_train_grads`: the gradients of a data-parallel training step (train.h
// step_gradients, the step train_supernet takes), summed over N ranks, each rank running its own
// path on its share of the batch, equal the gradients one process computes for the same paths on
// the same shares (docs/mpi.md). Choices no path used get no gradient on any rank; a choice one
// path used gets one on every rank. Prints "MPI GRADIENTS OK" on rank 0.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "nasa/dist.h"
#include "nasa/spec.h"
#include "nasa/supernet_weights.h"
#include "nasa/train.h"
#include "random_batch.h"

namespace {

int run(int argc, char** argv) {
  nasa::dist::init(argc, argv);
  nasa::dist::Comm& world = nasa::dist::world();
  const int n_ranks = world.size();
  const nasa::spec::Supernet net = nasa::spec::builtin_space("fmnist-mb");
  const nasa::weights::TensorFile w = nasa::weights::random_weights(net, 7);
  // paths that differ in every layer where they can
  std::vector<nasa::spec::Candidate> paths;
  for (int r = 0; r < n_ranks; ++r) {
    nasa::spec::Candidate c(net.layers.size());
    for (size_t l = 0; l < c.size(); ++l) {
      c[l] = static_cast<int>((static_cast<size_t>(r) + l) % net.layers[l].choices.size());
    }
    paths.push_back(c);
  }
  // a batch of 37 images (shares of unequal size), deterministic
  const size_t n = 37;
  const auto batch = nasa::testing::random_batch(net, n, 11);
  const auto& images = batch.images;
  const auto& labels = batch.labels;

  const auto summed = nasa::train::step_gradients(net, w, paths, images, labels, world);
  if (!world.root()) {
    nasa::dist::finalize();
    return 0;
  }
  nasa::dist::Comm self;  // one process, every path in turn
  const auto one = nasa::train::step_gradients(net, w, paths, images, labels, self);
  double max_diff = 0, max_abs = 0;
  size_t nonzero = 0, zero = 0, bitwise = 0;
  for (const auto& [name, g1] : one.grad) {
    const auto& gn = summed.grad.at(name);
    if (gn.size() != g1.size()) {
      fmt::print("FAIL: {}: {} vs {} elements\n", name, gn.size(), g1.size());
      return 1;
    }
    bool any = false, same = true;
    for (size_t i = 0; i < g1.size(); ++i) {
      max_diff = std::max(max_diff, static_cast<double>(std::fabs(gn[i] - g1[i])));
      max_abs = std::max(max_abs, static_cast<double>(std::fabs(g1[i])));
      any = any || g1[i] != 0.0f || gn[i] != 0.0f;
      same = same && gn[i] == g1[i];
    }
    (any ? nonzero : zero) += 1;
    bitwise += same ? 1 : 0;
  }
  fmt::print(
      "{} ranks, {} paths, {} images: {} parameter tensors ({} with a gradient, {} without), "
      "{} bitwise equal; max |difference| {:.3g} (max |gradient| {:.3g}); loss {:.6f} vs {:.6f}\n",
      n_ranks, paths.size(), n, one.grad.size(), nonzero, zero, bitwise, max_diff, max_abs,
      summed.loss, one.loss);
  const bool ok = max_diff <= 1e-6 * std::max(1.0, max_abs) &&
                  std::fabs(summed.loss - one.loss) <= 1e-9 * std::max(1.0, one.loss) &&
                  nonzero > 0 && (n_ranks == 1 || zero > 0 || net.layers.empty());
  fmt::print("{}\n", ok ? "MPI GRADIENTS OK" : "FAIL: the summed gradients differ");
  nasa::dist::finalize();
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const int rc = run(argc, argv);
    if (rc != 0) nasa::dist::abort_job(rc);
    return rc;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mpi_train_grads: %s: %s\n", nasa::dist::rank_label().c_str(), e.what());
    nasa::dist::abort_job(1);
  }
}
