// The batch-run CSRs and writable tables as the host programs them (docs/fusion.md): what the
// compiler fills in, the runtime writes to a device and the reference model of a batch run reads.
#pragma once

#include <array>
#include <cstdint>

#include "nasa/hw_spec.h"

namespace nasa::batch {

// The batch CSRs and writable tables (values as the host programmed them). The arrays hold the
// largest configuration's tables; a configuration uses its own capacities' first entries (OpTab
// index: layer * Config::max_choices + choice).
struct Regs {
  uint32_t num_layers = 0, cand_addr = 0, cand_stride = 0, cand_count = 0;
  uint32_t tpl_addr = 0, stem_tpl = 0, head_tpl = 0;
  uint32_t img_addr = 0, img_stride = 0, img_count = 0, label_addr = 0, mini_batch = 0;
  uint32_t classes = 0, logits_addr = 0, logits_stride = 0;
  uint32_t scratch_stride = 0;
  uint32_t gen_mode = 0, gen_seed = 0, gen_prob = 0, parent_addr = 0, parent_count = 0;
  std::array<uint32_t, hw::kMaxLayers * hw::kMaxChoices> optab{};
  std::array<uint32_t, hw::kMaxLayers> layer_k{};
  std::array<uint32_t, hw::kMaxLayers + 1> arena_addr{}, arena_stride{};
};


}  // namespace nasa::batch
