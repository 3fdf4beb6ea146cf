// nasa-gen-pkg: prints the SystemVerilog package `nasa_pkg` (rtl/nasa_pkg.sv) generated from the
// X-macro tables of nasa/hw_spec.h, so the RTL and the C++ host share one interface definition.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <bit>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nasa/hw_spec.h"

namespace {

struct Row {
  std::string_view name;
  uint32_t value;
  std::string_view doc;
};

#define NASA_GEN_ROW(n, v, d) Row{#n, static_cast<uint32_t>(v), d},
const std::vector<Row> kOps = {NASA_OPCODES(NASA_GEN_ROW)};
const std::vector<Row> kActs = {NASA_ACTS(NASA_GEN_ROW)};
const std::vector<Row> kErrors = {NASA_ERRORS(NASA_GEN_ROW)};
const std::vector<Row> kCsrs = {NASA_CSRS(NASA_GEN_ROW)};
const std::vector<Row> kCounters = {NASA_COUNTERS(NASA_GEN_ROW)};
const std::vector<Row> kPatchBits = {NASA_PATCH_BITS(NASA_GEN_ROW)};
const std::vector<Row> kGenModes = {NASA_GEN_MODES(NASA_GEN_ROW)};
const std::vector<Row> kVecModes = {NASA_VEC_MODES(NASA_GEN_ROW)};
const std::vector<Row> kDepths = {NASA_ENGINE_DEPTHS(NASA_GEN_ROW)};
struct McuRow {
  std::string_view name, c_name;
  uint32_t value;
  std::string_view doc;
};
#define NASA_GEN_MCU(n, c, v, d) McuRow{#n, #c, v, d},
const std::vector<McuRow> kMcuMap = {NASA_MCU_MAP(NASA_GEN_MCU)};
#undef NASA_GEN_MCU
#undef NASA_GEN_ROW
#define NASA_GEN_TABLE(n, v, a, d) Row{#n, static_cast<uint32_t>(v), a " " d},
const std::vector<Row> kTables = {NASA_TABLES(NASA_GEN_TABLE)};
#undef NASA_GEN_TABLE

#define NASA_GEN_FIELD(n, w, l, b) nasa::hw::field::n,
const std::vector<nasa::hw::DescField> kFields = {NASA_DESC_FIELDS(NASA_GEN_FIELD)};
#undef NASA_GEN_FIELD

std::string upper_camel(std::string_view s) {
  std::string out(s);
  if (!out.empty()) out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  return out;
}

// A typed enum of `bits` bits; the doc strings become comments above each value.
void emit_enum(std::string& out, std::string_view title, std::string_view type,
               std::string_view prefix, const std::vector<Row>& rows, uint32_t bits = 8) {
  out += fmt::format("  // {}\n  typedef enum logic [{}:0] {{\n", title, bits - 1);
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    out += fmt::format("    // {}\n", r.doc);
    out += fmt::format("    {}{} = {}'d{}{}\n", prefix, r.name, bits, r.value,
                       i + 1 < rows.size() ? "," : "");
  }
  out += fmt::format("  }} {};\n\n", type);
}

// One block of `localparam int unsigned` with aligned names and values; a doc string goes after
// the value when the line stays within 100 columns, else on its own line above.
class ParamBlock {
 public:
  explicit ParamBlock(std::string_view title) : title_(title) {}
  ParamBlock& add(std::string name, std::string value, std::string_view doc = {}) {
    rows_.push_back({std::move(name), std::move(value), std::string(doc)});
    return *this;
  }
  ParamBlock& add(std::string name, uint32_t value, std::string_view doc = {}) {
    return add(std::move(name), fmt::format("{}", value), doc);
  }
  void emit(std::string& out) const {
    size_t name_w = 0, value_w = 0;
    for (const auto& r : rows_) {
      name_w = std::max(name_w, r.name.size());
      value_w = std::max(value_w, r.value.size() + 1);  // + the ';'
    }
    out += fmt::format("  // {}\n", title_);
    for (const auto& r : rows_) {
      std::string line = fmt::format("  localparam int unsigned {:<{}} = {:<{}}", r.name, name_w,
                                     r.value + ";", value_w);
      if (!r.doc.empty()) {
        const std::string with_doc = fmt::format("{}  // {}", line, r.doc);
        if (with_doc.size() <= 100) {
          line = with_doc;
        } else {
          out += fmt::format("  // {}\n", r.doc);
        }
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
    out += "\n";
  }

 private:
  struct Param {
    std::string name, value, doc;
  };
  std::string title_;
  std::vector<Param> rows_;
};

// "InAddr" -> "in_addr" (upper: "IN_ADDR").
std::string snake(std::string_view s, bool upper) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (std::isupper(c) && i > 0 && !std::isupper(static_cast<unsigned char>(s[i - 1]))) {
      out += '_';
    }
    out += static_cast<char>(upper ? std::toupper(c) : std::tolower(c));
  }
  return out;
}
std::string lower_snake(std::string_view s) { return snake(s, false); }
std::string upper_snake(std::string_view s) { return snake(s, true); }

// The descriptor as one packed struct (word 15's top bit first), so RTL reads fields by name;
// bits no field covers are `rsvd<word>_<lsb>`.
void emit_desc_struct(std::string& out) {
  namespace hw = nasa::hw;
  out += fmt::format("  // A descriptor: {} little-endian words; word 0 bit 0 is bit 0.\n",
                     hw::kDescWords);
  out += "  typedef struct packed {\n";
  for (int w = static_cast<int>(hw::kDescWords) - 1; w >= 0; --w) {
    std::vector<hw::DescField> in_word;
    for (const hw::DescField& f : kFields) {
      if (f.word == static_cast<uint32_t>(w)) in_word.push_back(f);
    }
    std::sort(in_word.begin(), in_word.end(),
              [](const hw::DescField& a, const hw::DescField& b) { return a.lsb > b.lsb; });
    uint32_t top = 32;  // one past the highest bit not yet emitted
    auto gap = [&](uint32_t lsb) {
      if (top > lsb) {
        out += fmt::format("    logic [{}:0] rsvd{}_{};\n", top - lsb - 1, w, lsb);
      }
    };
    for (const hw::DescField& f : in_word) {
      gap(f.lsb + f.width);
      out += fmt::format("    logic [{}:0] {};\n", f.width - 1, lower_snake(f.name));
      top = f.lsb;
    }
    gap(0);
  }
  out += "  } desc_t;\n\n";
}

// The configurations: cfg_t, a packed struct of the RTL columns of NASA_CONFIGS (the one
// parameter Cfg of the engine's units; the core's top modules take the columns as separate
// parameters for -G and build it), and one constant of it per configuration. Concatenations, not
// assignment patterns: Yosys reads those.
void emit_configs(std::string& out) {
  namespace hw = nasa::hw;
  out += R"(  // A hardware configuration (hw_spec.h NASA_CONFIGS): the parameter Cfg of the engine's
  // units. The core's top modules (nasa_top, nasa_mcu) take the fields as parameters of the
  // same names in UpperCamelCase (-GRows=...); nasa_top builds its Cfg from them.
  typedef struct packed {
)";
  for (const hw::ConfigField& f : hw::kConfigFields) {
    if (f.rtl) out += fmt::format("    {:<36} // {}\n", fmt::format("int unsigned {};", f.member), f.doc);
  }
  out += "  } cfg_t;\n\n";
  for (const hw::Config& c : hw::kConfigs) {
    std::vector<std::string> v, named;
    for (const hw::ConfigField& f : hw::kConfigFields) {
      if (!f.rtl) continue;
      v.push_back(fmt::format("32'd{}", c.*f.value));
      named.push_back(fmt::format("{} {}", f.param, c.*f.value));
    }
    std::string line = fmt::format("  // Configuration `{}`:", c.name);
    for (const std::string& n : named) {
      if (line.size() + n.size() + 2 > 100) {
        out += line + "\n";
        line = "  //  ";
      }
      line += " " + n + (&n == &named.back() ? "" : ",");
    }
    out += line + "\n";
    out += fmt::format("  localparam cfg_t Cfg{} = {{\n", upper_camel(c.name));
    for (size_t i = 0; i < v.size(); i += 8) {
      std::vector<std::string> chunk(v.begin() + i, v.begin() + std::min(v.size(), i + 8));
      out += fmt::format("    {}{}\n", fmt::join(chunk, ", "), i + 8 < v.size() ? "," : "");
    }
    out += "  };\n\n";
  }
}

// The buses as packed structs (after the layout block: their widths use MemBytesMax).
template <size_t N>
void emit_bus_struct(std::string& out, std::string_view type,
                     const std::array<nasa::hw::BusField, N>& fields) {
  namespace hw = nasa::hw;
  out += "  typedef struct packed {\n";
  for (const nasa::hw::BusField& f : fields) {
    std::string width;
    if (f.bits_per_port_byte == 1) width = "[MemBytesMax-1:0]";
    else if (f.bits_per_port_byte > 1)
      width = fmt::format("[MemBytesMax*{}-1:0]", f.bits_per_port_byte);
    else if (f.width > 1) width = fmt::format("[{}:0]", f.width - 1);
    std::string line = fmt::format("    logic {:<19} {};", width, f.name);
    if (!f.doc.empty()) line = fmt::format("{:<43} // {}", line, f.doc);
    out += line + "\n";
  }
  out += fmt::format("  }} {};\n\n", type);
}

void emit_buses(std::string& out) {
  namespace hw = nasa::hw;
  out += R"(  // The accelerator's buses (hw_spec.h kCsrReq ...; docs/engine.md "Ports"): a request
  // struct (master to slave) and a response struct (slave to master) each, every struct
  // carrying the ready of the other direction's channel.
  //   - CSR bus: a request is taken with req.valid && rsp.ready; a read's data return the
  //     next cycle with rsp.valid.
  //   - Memory port: a request (a read burst of len+1 beats, or one strobed write beat) is
  //     taken with req.valid && rsp.ready; read beats return in order, taken with
  //     rsp.valid && req.rsp_ready. Data fields are MemBytesMax bytes wide (the widest
  //     configuration's); a configuration uses the low MemBytes bytes, the rest are zero.
  //   - Byte port of the control units: one byte a request, taken with req.valid &&
  //     rsp.ready; a read's byte returns with rsp.valid (always taken).
)";
  emit_bus_struct(out, "csr_req_t", hw::kCsrReq);
  emit_bus_struct(out, "csr_rsp_t", hw::kCsrRsp);
  emit_bus_struct(out, "mem_req_t", hw::kMemReq);
  emit_bus_struct(out, "mem_rsp_t", hw::kMemRsp);
  emit_bus_struct(out, "byte_req_t", hw::kByteReq);
  emit_bus_struct(out, "byte_rsp_t", hw::kByteRsp);
}

std::string generate() {
  namespace hw = nasa::hw;
  std::string out;
  out +=
      "// GENERATED FILE - DO NOT EDIT.\n"
      "// Generated by nasa-gen-pkg (sw/tools/gen_pkg.cpp) from sw/base/include/nasa/hw_spec.h,\n"
      "// the one definition of the hardware/software interface. Regenerate with `make gen`;\n"
      "// the ctest `gen_pkg_check` fails when this file is stale.\n"
      "\n"
      "// The package is a table of the whole interface: no single module uses every entry.\n"
      "// verilator lint_off UNUSEDPARAM\n"
      "package nasa_pkg;\n\n";

  emit_enum(out, "Layer opcodes (descriptor field Op).", "op_e", "Op", kOps);
  emit_enum(out, "Activation clamps (descriptor field Act).", "act_e", "Act", kActs);
  emit_enum(out, "Error codes (CSR ErrCode), checked in this order.", "err_e", "Err", kErrors);
  emit_enum(out, "Candidate sources (CSR GenMode bits 1:0).", "gen_mode_e", "Gen", kGenModes, 2);
  emit_enum(out, "Vector-unit modes.", "vec_mode_e", "Vec", kVecModes, 2);
  emit_desc_struct(out);

  ParamBlock csrs("CSR byte addresses.");
  for (const Row& r : kCsrs)
    csrs.add("Csr" + std::string(r.name), fmt::format("'h{:03X}", r.value), r.doc);
  csrs.emit(out);

  ParamBlock counters("Performance counter ids (64-bit counter i at CSR CounterBase + 8*i).");
  for (const Row& r : kCounters) counters.add("Cnt" + std::string(r.name), r.value, r.doc);
  counters.add("NumCounters", static_cast<uint32_t>(hw::kNumCounters));
  counters.emit(out);

  ParamBlock fields("Descriptor fields: 32-bit word index, lsb and width of each field.");
  for (const hw::DescField& f : kFields) {
    fields.add(fmt::format("Desc{}Word", f.name), f.word);
    fields.add(fmt::format("Desc{}Lsb", f.name), f.lsb);
    fields.add(fmt::format("Desc{}Width", f.name), f.width);
  }
  fields.emit(out);

  ParamBlock depths("Engine depths the cycle model mirrors (sw/model/cycle_model.cpp).");
  for (const Row& r : kDepths) depths.add(std::string(r.name), r.value, r.doc);
  depths.emit(out);

  ParamBlock mcu("The board controller's memory map (configurations with Mcu = 1).");
  for (const McuRow& r : kMcuMap) mcu.add("Mcu" + std::string(r.name), r.value, r.doc);
  mcu.emit(out);

  ParamBlock layout("Layout constants.");
  layout.add("DescWords", hw::kDescWords, "32-bit little-endian words per descriptor")
      .add("DescBytes", hw::kDescBytes, "bytes per descriptor")
      .add("ParamBytes", hw::kParamBytes, "per-channel record: int32 bias, u16 M, u8 S, 1 spare")
      .add("MaxShift", hw::kMaxShift, "requant shift S in [1, MaxShift]")
      .add("MemBytesMax", hw::kMemBytesMax, "memory port bytes, largest of any config")
      .add("Magic", fmt::format("'h{:08X}", hw::kMagic), "value of CSR Magic, 'NASA'");
  layout.emit(out);
  emit_buses(out);

  ParamBlock batch("Batch mode: capacities, tables (CSR TblAddr[31:24]) and PATCH bits.");
  batch.add("NodeCap", hw::kNodeCap, "node table entries (root included); largest of any config")
      .add("MaxLayers", hw::kMaxLayers, "choice layers; largest of any config")
      .add("MaxChoices", hw::kMaxChoices, "choices per layer; largest of any config")
      .add("MaxCands", hw::kMaxCands, "candidates per batch; largest of any config")
      .add("NoNode", fmt::format("'h{:04X}", hw::kNoNode), "no node (table links)");
  for (const Row& r : kTables) batch.add("Tbl" + std::string(r.name), r.value, r.doc);
  for (const Row& r : kPatchBits) batch.add("Patch" + std::string(r.name) + "Bit", r.value, r.doc);
  batch.emit(out);

  ParamBlock bits("Bit positions in CSR Ctrl and CSR Status.");
  bits.add("CtrlStartBit", static_cast<uint32_t>(std::countr_zero(hw::kCtrlStart)))
      .add("CtrlBatchBit", static_cast<uint32_t>(std::countr_zero(hw::kCtrlBatch)))
      .add("CtrlClearBit", static_cast<uint32_t>(std::countr_zero(hw::kCtrlClear)))
      .add("StatusBusyBit", static_cast<uint32_t>(std::countr_zero(hw::kStatusBusy)))
      .add("StatusDoneBit", static_cast<uint32_t>(std::countr_zero(hw::kStatusDone)))
      .add("StatusErrorBit", static_cast<uint32_t>(std::countr_zero(hw::kStatusError)));
  bits.emit(out);

  emit_configs(out);
  out += "endpackage\n// verilator lint_on UNUSEDPARAM\n";
  return out;
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The same interface as C macros, with one configuration's row: the firmware of the board's
// controller (fpga/fw/) includes it (fpga/fw/nasa_hw.h, the first configuration with Mcu = 1).
std::string generate_c(const nasa::hw::Config& c) {
  namespace hw = nasa::hw;
  std::string out = fmt::format(
      "/* GENERATED FILE - DO NOT EDIT. nasa-gen-pkg --c-header {} (sw/tools/gen_pkg.cpp) from\n"
      " * sw/base/include/nasa/hw_spec.h, the one definition of the hardware/software interface. */\n"
      "#ifndef NASA_HW_H\n#define NASA_HW_H\n\n",
      c.name);
  auto rows = [&](std::string_view prefix, const std::vector<Row>& rs) {
    for (const Row& r : rs) {
      out += fmt::format("#define NASA_{}_{} {}u /* {} */\n", prefix, upper_snake(r.name),
                         r.value, r.doc);
    }
    out += "\n";
  };
  rows("OP", kOps);
  rows("ACT", kActs);
  rows("ERR", kErrors);
  rows("CSR", kCsrs);
  rows("CNT", kCounters);
  rows("TBL", kTables);
  rows("GEN", kGenModes);
  for (const Row& r : kPatchBits) {
    out += fmt::format("#define NASA_PATCH_{} {}u /* {} */\n", upper_snake(r.name), 1u << r.value,
                       r.doc);
  }
  out += "\n";
  for (const hw::DescField& f : kFields) {
    const std::string n = upper_snake(f.name);
    out += fmt::format("#define NASA_DESC_{}_WORD {}u\n#define NASA_DESC_{}_LSB {}u\n"
                       "#define NASA_DESC_{}_WIDTH {}u\n",
                       n, f.word, n, f.lsb, n, f.width);
  }
  out += fmt::format(
      "\n#define NASA_NUM_COUNTERS {}u\n#define NASA_DESC_BYTES {}u\n#define NASA_PARAM_BYTES {}u\n"
      "#define NASA_MAX_SHIFT {}u\n#define NASA_MAGIC 0x{:08X}u\n#define NASA_NO_NODE 0x{:04X}u\n"
      "#define NASA_CTRL_START {}u\n#define NASA_CTRL_CLEAR {}u\n#define NASA_CTRL_BATCH {}u\n"
      "#define NASA_STATUS_BUSY {}u\n#define NASA_STATUS_DONE {}u\n#define NASA_STATUS_ERROR {}u\n\n",
      hw::kNumCounters, hw::kDescBytes, hw::kParamBytes, hw::kMaxShift, hw::kMagic, hw::kNoNode,
      hw::kCtrlStart, hw::kCtrlClear, hw::kCtrlBatch, hw::kStatusBusy, hw::kStatusDone,
      hw::kStatusError);
  out += fmt::format(
      "/* Packed words (hw_spec.h tpl_word, node_word, tbl_addr). */\n"
      "#define NASA_TPL_FIRST_BITS {0}u\n"
      "#define NASA_TPL_WORD(first, count) ((first) | (count) << {0})\n"
      "#define NASA_TPL_FIRST(w) ((w) & ((1u << {0}) - 1u))\n"
      "#define NASA_TPL_COUNT(w) ((w) >> {0})\n"
      "#define NASA_NODE_WORD(parent, layer, choice) ((parent) | (layer) << 16 | (choice) << 24)\n"
      "#define NASA_NODE_PARENT(w) ((w) & 0xFFFFu)\n"
      "#define NASA_NODE_LAYER(w) (((w) >> 16) & 0xFFu)\n"
      "#define NASA_NODE_CHOICE(w) ((w) >> 24)\n\n",
      hw::kTplFirstBits);
  out += "/* The controller's memory map. */\n";
  for (const McuRow& r : kMcuMap) {
    out += fmt::format("#define MCU_{} {}u /* {} */\n", r.c_name, r.value, r.doc);
  }
  out += "\n";
  out += fmt::format("/* Configuration `{}`. */\n", c.name);
  for (const hw::ConfigField& f : hw::kConfigFields) {
    out += fmt::format("#define NASA_CFG_{} {}u\n", upper_snake(f.member), c.*f.value);
  }
  out += fmt::format("#define NASA_CFG_HW_SHAPE 0x{:08X}u\n#define NASA_CFG_HW_MEM 0x{:08X}u\n"
                     "#define NASA_CFG_HW_BATCH 0x{:08X}u\n",
                     c.hw_shape(), c.hw_mem(), c.hw_batch());
  out += "\n#endif\n";
  return out;
}

constexpr const char* kGeneratedBy =
    "GENERATED FILE - DO NOT EDIT. Generated by nasa-gen-pkg (sw/tools/gen_pkg.cpp) from the\n"
    "NASA_CONFIGS table of sw/base/include/nasa/hw_spec.h; regenerate with `make gen` (the ctest\n"
    "gen_pkg_check fails when it is stale).";

std::string comment_lines(std::string_view text, std::string_view mark) {
  std::string out;
  for (const std::string& l : split_lines(std::string(text))) out += fmt::format("{} {}\n", mark, l);
  return out;
}

// The configuration table for CMake: NASA_CONFIG_NAMES, NASA_CFG_<name>_<FIELD> for every column,
// and NASA_CFG_<name>_GPARAMS, the -G options of the core's top module.
const nasa::hw::Config& mcu_config();

std::string generate_cmake() {
  namespace hw = nasa::hw;
  std::string out = comment_lines(kGeneratedBy, "#") + "\n";
  std::vector<std::string> names;
  for (const hw::Config& c : hw::kConfigs) names.emplace_back(c.name);
  out += fmt::format("set(NASA_CONFIG_NAMES {})\n", fmt::join(names, " "));
  out += fmt::format("# the board controller's firmware ROM (bytes)\nset(NASA_MCU_ROM_BYTES {})\n",
                     hw::mcu::kRomBytes);
  {
    // the firmware's RAM as the core addresses it: the last RamBytes of main memory
    const nasa::hw::Config& m = mcu_config();
    const uint64_t top = hw::mcu::region_base(hw::mcu::kRegionMain) + (uint64_t{1} << m.addr_bits);
    out += fmt::format(
        "# its RAM (the last bytes of main memory, as the core addresses them)\n"
        "set(NASA_MCU_RAM_BASE 0x{:X})\nset(NASA_MCU_RAM_TOP 0x{:X})\n",
        top - hw::mcu::kRamBytes, top);
  }
  for (const hw::Config& c : hw::kConfigs) {
    out += fmt::format("\n# {}\n", c.name);
    std::vector<std::string> gparams;
    for (const hw::ConfigField& f : hw::kConfigFields) {
      out += fmt::format("set(NASA_CFG_{}_{} {})\n", c.name, upper_snake(f.member), c.*f.value);
      if (f.rtl && !(c.mcu && f.engine_only)) {
        gparams.push_back(fmt::format("-G{}={}", f.param, c.*f.value));
      }
    }
    out += fmt::format("set(NASA_CFG_{}_GPARAMS {})\n", c.name, fmt::join(gparams, " "));
  }
  return out;
}

// The same for the shell scripts (synth/, fpga/): bash arrays, sourced by synth/common.sh.
std::string generate_shell() {
  namespace hw = nasa::hw;
  std::string out = comment_lines(kGeneratedBy, "#") + "\n";
  std::vector<std::string> names, params, fields, engine_only;
  for (const hw::Config& c : hw::kConfigs) names.emplace_back(c.name);
  for (const hw::ConfigField& f : hw::kConfigFields) {
    fields.push_back(upper_snake(f.member));
    if (f.rtl) params.emplace_back(f.param);
    if (f.engine_only) engine_only.emplace_back(f.param);
  }
  out += fmt::format("NASA_CONFIG_NAMES=({})\n", fmt::join(names, " "));
  out += fmt::format("# the columns (CFG_<FIELD> after nasa_config NAME)\nNASA_CONFIG_FIELDS=({})\n",
                     fmt::join(fields, " "));
  out += fmt::format("# the RTL parameters of the core's top module, in column order\n"
                     "NASA_PARAM_NAMES=({})\n",
                     fmt::join(params, " "));
  out += fmt::format("# ... of nasa_top only (the board controller, Mcu = 1, has none of them)\n"
                     "NASA_ENGINE_ONLY_PARAMS=({})\n",
                     fmt::join(engine_only, " "));
  for (const hw::Config& c : hw::kConfigs) {
    std::vector<uint32_t> v;
    for (const hw::ConfigField& f : hw::kConfigFields) v.push_back(c.*f.value);
    out += fmt::format("NASA_CFG_{}=({})\n", c.name, fmt::join(v, " "));
  }
  return out;
}

// The configuration whose controller runs the firmware: the first with Mcu = 1.
const nasa::hw::Config& mcu_config() {
  for (const auto& c : nasa::hw::kConfigs) {
    if (c.mcu) return c;
  }
  throw std::logic_error("hw_spec.h: no configuration has Mcu = 1 (the firmware's)");
}

// Every generated file of the tree, relative to its root.
std::vector<std::pair<std::string, std::string>> tree_files() {
  return {{"rtl/nasa_pkg.sv", generate()},
          {"cmake/nasa_configs.cmake", generate_cmake()},
          {"synth/nasa_configs.sh", generate_shell()},
          {"fpga/fw/nasa_hw.h", generate_c(mcu_config())}};
}

// Returns 0 when `path` holds exactly what generate() produces; otherwise prints the differing
// lines (first 20) and how to fix it, and returns 1.
int check(const std::string& path, const std::string& expected) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    fmt::print(stderr, "nasa-gen-pkg: cannot read {}; run `make gen` to create it\n", path);
    return 1;
  }
  const std::string actual((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (actual == expected) {
    fmt::print("nasa-gen-pkg: {} is up to date with hw_spec.h\n", path);
    return 0;
  }
  const auto want = split_lines(expected);
  const auto have = split_lines(actual);
  fmt::print(stderr, "nasa-gen-pkg: {} differs from what sw/base/include/nasa/hw_spec.h generates\n",
             path);
  fmt::print(stderr, "--- {} (in the tree)\n+++ generated\n", path);
  int shown = 0;
  const size_t n = std::max(want.size(), have.size());
  for (size_t i = 0; i < n && shown < 20; ++i) {
    const bool has_w = i < want.size(), has_h = i < have.size();
    if (has_w && has_h && want[i] == have[i]) continue;
    if (has_h) fmt::print(stderr, "{}: -{}\n", i + 1, have[i]);
    if (has_w) fmt::print(stderr, "{}: +{}\n", i + 1, want[i]);
    ++shown;
  }
  if (shown == 0) fmt::print(stderr, "(only line endings or the final newline differ)\n");
  fmt::print(stderr, "Run `make gen` to regenerate it (never edit it by hand).\n");
  return 1;
}

// Writes beside the target and renames, so a failed write never leaves a truncated file.
void write_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << text;
    if (!f.flush()) throw std::runtime_error("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    throw std::runtime_error("cannot rename " + tmp + " to " + path);
  }
  fmt::print("nasa-gen-pkg: wrote {}\n", path);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Prints the SystemVerilog package nasa_pkg generated from nasa/hw_spec.h"};
  std::string check_path, out_path, c_config;
  app.add_option("--check", check_path, "exit 1 with a diff if FILE differs from the output")
      ->option_text("FILE");
  app.add_option("--c-header", c_config,
                 "print the interface as C macros with configuration CONFIG's row instead")
      ->option_text("CONFIG");
  app.add_option("-o,--output", out_path, "write to FILE instead of stdout")->option_text("FILE");
  std::string check_tree, write_tree;
  app.add_option("--check-tree", check_tree,
                 "exit 1 with a diff if any generated file under ROOT (rtl/nasa_pkg.sv, "
                 "cmake/nasa_configs.cmake, synth/nasa_configs.sh, fpga/fw/nasa_hw.h) is stale")
      ->option_text("ROOT");
  app.add_option("--write-tree", write_tree, "regenerate every generated file under ROOT")
      ->option_text("ROOT");
  CLI11_PARSE(app, argc, argv);
  try {
    if (!check_tree.empty()) {
      int bad = 0;
      for (const auto& [rel, text] : tree_files()) bad |= check(check_tree + "/" + rel, text);
      return bad;
    }
    if (!write_tree.empty()) {
      for (const auto& [rel, text] : tree_files()) write_file(write_tree + "/" + rel, text);
      return 0;
    }
    std::string pkg;
    if (c_config.empty()) {
      pkg = generate();
    } else {
      const nasa::hw::Config* cfg = nullptr;
      for (const auto& c : nasa::hw::kConfigs) {
        if (c.name == c_config) cfg = &c;
      }
      if (cfg == nullptr) throw std::invalid_argument("--c-header: no configuration " + c_config);
      pkg = generate_c(*cfg);
    }
    if (!check_path.empty()) return check(check_path, pkg);
    if (out_path.empty()) {
      fmt::print("{}", pkg);
      return 0;
    }
    write_file(out_path, pkg);
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "nasa-gen-pkg: {}\n", e.what());
    return 1;
  }
}
