// Opening an FST waveform on a Verilated model, shared by the unit benches and the engine harness
// so that a path that cannot be written fails loudly in both rather than tracing nothing.
#pragma once

#include <fmt/format.h>
#include <verilated.h>
#include <verilated_fst_c.h>

#include <memory>
#include <stdexcept>
#include <string>

namespace nasa::sim {

// A waveform of every signal of `top` (the context must have traceEverOn) written to `path`.
template <class Model>
std::unique_ptr<VerilatedFstC> open_fst(Model& top, const std::string& path) {
  auto fst = std::make_unique<VerilatedFstC>();
  top.trace(fst.get(), 99);
  fst->open(path.c_str());
  if (!fst->isOpen()) {
    throw std::runtime_error(fmt::format("cannot open FST waveform '{}' for writing", path));
  }
  return fst;
}

}  // namespace nasa::sim
