// The one definition of the hardware/software interface: opcodes, activations, error codes,
// CSR map, counters, descriptor fields, memory records and hardware configurations.
// rtl/nasa_pkg.sv is generated from this file (build/bin/nasa-gen-pkg); a test checks they agree.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>

namespace nasa::hw {

// ---- Tables (X-macros). Each row: name, value, one-line meaning. ----

#define NASA_OPCODES(X)                                                                      \
  X(Conv, 1, "kxk convolution, stride 1/2, same padding, OHWI weights, per-channel params")  \
  X(DwConv, 2, "kxk depthwise convolution, HWC weights, per-channel params")                 \
  X(Fc, 3, "fully connected over the flattened HWC input, OHWI weights, per-channel params") \
  X(MaxPool, 4, "3x3 max pool, stride 1/2, padding ignored")                                 \
  X(AvgPool, 5, "3x3 average pool (sum incl. zero padding) then requant (M,S)")              \
  X(Add, 6, "residual add: requant(a,M,S) + requant(b,Mb,Sb), saturated")                    \
  X(Gap, 7, "global average pool: per-channel sum then requant (M,S), output 1x1xC")

#define NASA_ACTS(X)                \
  X(None, 0, "clamp to [-128,127]") \
  X(Relu, 1, "clamp to [0,127]")    \
  X(Relu6, 2, "clamp to [0,q6]")

// Checked in this order; the first failing check is reported.
#define NASA_ERRORS(X)                                                                      \
  X(None, 0, "no error")                                                                    \
  X(BadOpcode, 1, "unknown opcode")                                                         \
  X(BadAct, 2, "unknown activation")                                                        \
  X(BadStride, 3, "stride not 1 or 2")                                                      \
  X(BadKernel, 4, "kernel not in {1,3,5,7} (conv, depthwise) or not 3 (pools)")             \
  X(ZeroDim, 5, "a dimension (H, W, Cin, Cout) is zero")                                    \
  X(BadChannels, 6, "Cout != Cin for an op that keeps channels")                            \
  X(Oversize, 7, "input does not fit the input buffer or k*k*Cin exceeds KredMax")          \
  X(BadQuant, 8, "requant shift S outside [1,47] or ReLU6 q6 > 127")                        \
  X(Window, 9, "an access range lies outside the programmed memory window")                 \
  X(EmptyProgram, 10, "DESC_COUNT is zero")                                                 \
  X(EmptyBatch, 11, "batch run with CAND_COUNT or IMG_COUNT zero")                          \
  X(BadBatchCfg, 12, "batch setup out of range (NUM_LAYERS, a layer's K, MINI_BATCH, ...)") \
  X(BadChoice, 13, "a candidate picks a choice >= its layer's K (ERR_INDEX: candidate)")    \
  X(NodeOverflow, 14, "the fused graph needs more nodes than NodeCap (ERR_INDEX: candidate)") \
  X(Fault, 15, "the board's controller (up5k) stopped at an illegal instruction")           \
  X(BadBand, 16, "row band: OutRows > ceil(H/stride), PadTop > (k-1)/2, or not a window op") \
  X(BadResidual, 17, "a folded residual (Res) on an op other than Conv/DwConv, or stride 2") \
  X(BadPack, 18, "Images > 1 on an op other than Conv/DwConv/Fc, a band, a residual, or on " \
                 "the board's controller")

#define NASA_CSRS(X)                                                                       \
  X(Ctrl, 0x000, "W: bit0 start, bit1 clear done/error, bit2 start a batch run")           \
  X(Status, 0x004, "R: bit0 busy, bit1 done, bit2 error")                                  \
  X(ErrCode, 0x008, "R: error code of the run")                                            \
  X(ErrIndex, 0x00C, "R: index of the descriptor that failed")                             \
  X(DescAddr, 0x010, "RW: byte address of descriptor 0")                                   \
  X(DescCount, 0x014, "RW: number of descriptors to run")                                  \
  X(WinBase, 0x018, "RW: first byte of the accessible window (at most 2^AddrBits)")         \
  X(WinLimit, 0x01C, "RW: one past the last byte of the window (at most 2^AddrBits)")       \
  X(HwShape, 0x020, "R: Rows | Cols << 16")                                                \
  X(HwMem, 0x024, "R: memory port bytes | burst max << 16 | AddrBits << 24")               \
  X(HwInBuf, 0x028, "R: input buffer bytes")                                               \
  X(HwKredMax, 0x02C, "R: max reduction length k*k*Cin of one output channel")             \
  X(Magic, 0x030, "R: 0x4E415341 'NASA'")                                                  \
  X(LayersDone, 0x034, "R: descriptors completed in this run")                             \
  X(NumLayers, 0x040, "RW: batch: choice layers L of the supernet")                        \
  X(CandAddr, 0x044, "RW: batch: candidate vectors, one byte per layer")                   \
  X(CandStride, 0x048, "RW: batch: bytes between candidate vectors")                       \
  X(CandCount, 0x04C, "RW: batch: candidates in the batch")                                \
  X(TplAddr, 0x050, "RW: batch: byte address of template descriptor 0")                    \
  X(StemTpl, 0x054, "RW: batch: stem templates, first | count << 24")                      \
  X(HeadTpl, 0x058, "RW: batch: head templates, first | count << 24")                      \
  X(ImgAddr, 0x05C, "RW: batch: input image 0 (int8 HWC)")                                 \
  X(ImgStride, 0x060, "RW: batch: bytes between input images")                             \
  X(ImgCount, 0x064, "RW: batch: images to evaluate")                                      \
  X(LabelAddr, 0x068, "RW: batch: labels, one byte per image")                             \
  X(MiniBatch, 0x06C, "RW: batch: images per mini-batch (arena slots per depth)")          \
  X(Classes, 0x070, "RW: batch: logits per image")                                         \
  X(LogitsAddr, 0x074, "RW: batch: where the head's FC writes logits (see LOGITS_STRIDE)") \
  X(LogitsStride, 0x078,                                                                   \
    "RW: 0: image b of a mini-batch at LOGITS_ADDR+b*Classes; else leaf n, image g at "    \
    "+n*stride+g*Classes")                                                                 \
  X(GenMode, 0x07C, "RW: 0 candidates from memory; 1 sample, 2 mutate, 3 crossover")       \
  X(GenSeed, 0x080, "RW: cand_gen seed (0 means 0x9E3779B9)")                              \
  X(GenProb, 0x084, "RW: cand_gen mutation probability, 0..65536 = 0..1")                  \
  X(ParentAddr, 0x088, "RW: cand_gen parent vectors (CAND_STRIDE apart)")                  \
  X(ParentCount, 0x08C, "RW: cand_gen parents")                                            \
  X(NodeCount, 0x090, "R: batch: nodes in the node table after fusion")                    \
  X(TblAddr, 0x094, "RW: batch table access: table << 24 | index")                         \
  X(TblData, 0x098, "RW: entry at TBL_ADDR; the index advances after each access")         \
  X(HwBatch, 0x09C, "R: NodeCap | MaxLayers << 16 | MaxChoices << 24")                     \
  X(ScratchStride, 0x0A0, "RW: batch: bytes between the scratch tensors of consecutive images") \
  X(ScratchBase, 0x0A4,                                                                    \
    "RW: on-chip scratch window [base, base + ScratchBytes); base a multiple of "           \
    "ScratchBytes (low bits ignored), 0: none")                                             \
  X(CounterBase, 0x100, "R: 64-bit counters, id i at 0x100 + 8*i (lo) and +4 (hi)")

#define NASA_COUNTERS(X)                                                \
  X(Cycles, 0, "cycles from start to done")                             \
  X(PeBusy, 1, "cycles the PE array issued a MAC step")                 \
  X(VecBusy, 2, "cycles the vector unit issued a tap")                  \
  X(Macs, 3, "multiply-accumulates executed (conv, fc, depthwise)")     \
  X(DramRdBytes, 4, "bytes read on the memory port (whole bus words)")  \
  X(DramWrBytes, 5, "bytes written on the memory port (enabled bytes)") \
  X(StallInput, 6, "cycles compute waited for input data")              \
  X(StallWeight, 7, "cycles compute waited for weights/params")         \
  X(StallOutput, 8, "cycles compute waited for the output path")        \
  X(StallDesc, 9, "cycles waiting for a descriptor (fetch, decode; no layer running)")      \
  X(InBufWrites, 10, "port words written into the input buffer (every replica)")          \
  X(WBufWrites, 11, "port words written into the weight ring")                            \
  X(PrmWrites, 12, "port words written into the per-channel record memory")               \
  X(ScratchReads, 13, "port words read from the on-chip scratch (input loads)")            \
  X(ScratchWrites, 14, "strobed port words written into the on-chip scratch (outputs)")

// Candidate generation (CSR GenMode): where a batch run's candidates come from.
#define NASA_GEN_MODES(X)                                                       \
  X(Memory, 0, "candidates from memory (CandAddr, CandStride)")                 \
  X(Sample, 1, "cand_gen samples each layer uniformly from GenSeed")             \
  X(Mutate, 2, "cand_gen re-samples each layer of a parent with prob. GenProb") \
  X(Crossover, 3, "cand_gen takes each layer from one of two parents")

// Vector-unit modes (the engine's pools, residual add and global average pool; the board's dot
// unit has its own: NASA_MCU_DOT_MODES).
#define NASA_VEC_MODES(X)                                 \
  X(Sum, 1, "sum of the taps (average pool, global pool)") \
  X(Max, 2, "max of the taps (max pool)")                  \
  X(Add, 3, "requant(a) + requant(b) (residual add)")

// Micro-architecture depths and limits the cycle model mirrors (sw/model/cycle_model.cpp):
// changing one in the RTL changes the engine's timing, so both read them from here.
// Row: name, value, meaning.
#define NASA_ENGINE_DEPTHS(X)                                                          \
  X(JobDepth, 4, "DMA job queue entries in front of the memory port")                   \
  X(WriterDepth, 4, "drained output rows the output writer queues")                     \
  X(DecodeSteps, 16, "cycles of descriptor decode and validation (one check per step)") \
  X(KsLogMax, 2, "log2 of the most column groups a K-split tile's reduction runs in (0-2)")

// Descriptor: 16 little-endian 32-bit words (64 bytes). Row: name, word, lsb, width.
// OutRows != 0 makes a sliding-window layer a row band (docs/engine.md "Row bands"): it computes
// OutRows output rows, and output row oy's window starts at input row oy*stride - PadTop (PadTop
// replaces the top padding (k-1)/2; rows past H still read zero).
// Res = 1 folds a residual add into a Conv/DwConv (docs/engine.md "Folded residual"): out =
// act(requant(y, M, S) + requant(r, Mb, Sb)), y the layer's own result saturated to int8, r the
// Ho x Wo x Cout tensor at IN2_ADDR.
// Images > 1 packs that many images into one Conv/DwConv/Fc layer (docs/engine.md "Packed
// images"): image i reads IN_ADDR + i*InStride and writes OUT_ADDR + i*OutStride, its positions
// following image i-1's on the PE array's rows (0 and 1: one image).
#define NASA_DESC_FIELDS(X) \
  X(Op, 0, 0, 8)            \
  X(Act, 0, 8, 8)           \
  X(K, 0, 16, 8)            \
  X(Stride, 0, 24, 8)       \
  X(H, 1, 0, 16)            \
  X(W, 1, 16, 16)           \
  X(Cin, 2, 0, 16)          \
  X(Cout, 2, 16, 16)        \
  X(InAddr, 3, 0, 32)       \
  X(In2Addr, 4, 0, 32)      \
  X(OutAddr, 5, 0, 32)      \
  X(WgtAddr, 6, 0, 32)      \
  X(PrmAddr, 7, 0, 32)      \
  X(M, 8, 0, 16)            \
  X(S, 8, 16, 8)            \
  X(Q6, 8, 24, 8)           \
  X(Mb, 9, 0, 16)           \
  X(Sb, 9, 16, 8)           \
  X(Patch, 10, 0, 8)        \
  X(Res, 10, 8, 1)          \
  X(OutRows, 11, 0, 16)     \
  X(PadTop, 11, 16, 8)      \
  X(Images, 11, 24, 8)      \
  X(InStride, 12, 0, 32)    \
  X(OutStride, 13, 0, 32)

// Batch-mode tables behind TBL_ADDR/TBL_DATA. Row: name, id, access, meaning.
#define NASA_TABLES(X)                                                                       \
  X(Node, 0, "R", "node n: parent | layer << 16 | choice << 24 (root: 0xFFFF, 0xFF, 0xFF)")  \
  X(Leaf, 1, "R", "candidate c: its leaf node")                                              \
  X(Correct, 2, "R", "node n: correct answers counted at leaf n")                            \
  X(OpTab, 3, "RW", "layer i * MaxChoices + choice: templates, first | count << 24")         \
  X(LayerK, 4, "RW", "layer i: its choice count K_i")                                        \
  X(ArenaAddr, 5, "RW", "depth d (0: stem output, d: output of layer d-1): slot of image 0") \
  X(ArenaStride, 6, "RW", "depth d: bytes between the slots of consecutive images")

// Descriptor PATCH bits (batch mode only): the scheduler adds to these address fields of a
// template. X: the node's input for the current image; Y: the node's arena slot; L: logits;
// S: b * SCRATCH_STRIDE for image b of the mini-batch (a node's insides, one copy per image).
// The template's field holds an offset from X, Y or L: 0, or a row band's (docs/engine.md).
#define NASA_PATCH_BITS(X)                                \
  X(InFromX, 0, "IN_ADDR <- IN_ADDR + X")                 \
  X(In2FromX, 1, "IN2_ADDR <- IN2_ADDR + X")              \
  X(OutFromY, 2, "OUT_ADDR <- OUT_ADDR + Y")              \
  X(OutFromL, 3, "OUT_ADDR <- OUT_ADDR + logits address") \
  X(InPlusS, 4, "IN_ADDR <- IN_ADDR + S")                 \
  X(OutPlusS, 5, "OUT_ADDR <- OUT_ADDR + S")

// Hardware configurations (parameters of one RTL source). Row: name, Rows, Cols, MemBytes
// (memory port width), InBufBytes, KredMax, BurstMax (beats per read burst), and the batch-mode
// capacities NodeCap (node table entries, root included), MaxLayers (choice layers), MaxChoices
// (choices per layer), MaxCands (candidates per batch). CSR HwBatch reports the capacities.
// Then RqLanes (requant lanes: a drained row of n results takes ceil(n / RqLanes) cycles),
// AddrBits (the address space is [0, 2^AddrBits): WinBase/WinLimit are clamped to it; 17 on the
// 128 KB board) and DmaInflight (read jobs the DMA keeps in flight, a power of two: enough to
// cover the memory's latency; on fpga 8 jobs of 8 beats cover the DRAM model's 32 cycles, and the
// board's SPRAM answers in one) and WTiles (channel tiles the weight ring holds at once, a power
// of two >= 2: its bytes are 2 * KredMax per lane whatever the count; a layer whose tiles all fit
// keeps them on chip for a next layer with the same weights; 2 is plain double buffering),
// ScratchBytes (the on-chip scratch memory behind the window of CSR ScratchBase: layers read
// their inputs from it and write their outputs into it without the memory port; a power of two,
// 0: none, docs/engine.md "On-chip scratch") and Mcu
// (1: the configuration's core is the RV32IM controller running the firmware of fpga/fw/ with
// its one-MAC dot-product unit, top module nasa_mcu, docs/fpga.md: Rows = Cols = 1, single-beat
// port of 8 bytes, one row of the board's four SPRAMs side by side; 0: the engine and the batch
// units, top module nasa_top). up5k is the iCEBreaker board's core: the engine at 4x4 (fpga) takes
// 27,800 LUTs, five times the UP5K's 5,280 logic cells. CSR HwMem reports MemBytes, BurstMax and
// AddrBits.
#define NASA_CONFIGS(X)                                                                 \
  X(fpga, 4, 4, 4, 2048, 256, 8, 256, 8, 8, 256, 1, 17, 8, 2, 0, 0)                   \
  X(sim, 16, 16, 32, 131072, 8192, 8, 1024, 16, 16, 1024, 16, 32, 16, 16, 2097152, 0)   \
  X(large, 32, 32, 64, 131072, 8192, 8, 1024, 16, 16, 1024, 32, 32, 16, 16, 2097152, 0) \
  X(up5k, 1, 1, 8, 32768, 256, 1, 256, 8, 8, 256, 1, 17, 2, 2, 0, 1)

// The columns of NASA_CONFIGS, in order. Row: Config member, RTL parameter name (every column
// but Mcu is a parameter of the core's top module, passed as -G<Param>=<value>, and a field of
// nasa_pkg::cfg_t, the one parameter Cfg of the engine's units), RTL parameter (1; 2: of nasa_top
// only, the board controller nasa_mcu has no such parameter; 0: none), meaning.
#define NASA_CONFIG_FIELDS(X)                                                                   \
  X(rows, Rows, 1, "PE array rows: output positions of a tile")                                 \
  X(cols, Cols, 1, "PE array columns and vector-unit lanes: output channels of a tile")         \
  X(mem_bytes, MemBytes, 1, "memory port bytes a beat")                                         \
  X(in_buf_bytes, InBufBytes, 1, "input buffer bytes (a power of two)")                         \
  X(kred_max, KredMax, 1, "largest reduction k*k*Cin of one output channel")                    \
  X(burst_max, BurstMax, 1, "beats of a memory read burst, at most")                            \
  X(node_cap, NodeCap, 1, "node table entries of the fused graph (root included)")              \
  X(max_layers, MaxLayers, 1, "choice layers of a batch run")                                   \
  X(max_choices, MaxChoices, 1, "choices of a layer")                                           \
  X(max_cands, MaxCands, 1, "candidates of a batch run")                                        \
  X(rq_lanes, RqLanes, 1, "requant lanes: a drained row takes Cols/RqLanes cycles")             \
  X(addr_bits, AddrBits, 1, "address space [0, 2^AddrBits)")                                    \
  X(dma_inflight, DmaInflight, 1, "DMA read jobs in flight (a power of two)")                   \
  X(wtiles, WTiles, 1, "channel tiles the weight ring holds (a power of two)")                  \
  X(scratch_bytes, ScratchBytes, 2, "on-chip scratch bytes (a power of two, or 0: none)")       \
  X(mcu, Mcu, 0, "1: the core is the firmware-driven controller nasa_mcu")

// The board controller's memory map (configurations with Mcu = 1: rtl/nasa_mcu.sv, the firmware
// of fpga/fw/ and the board's host model, docs/fpga.md). Row: name, C name (MCU_<name> in the
// firmware's nasa_hw.h; McuName in nasa_pkg, hw::mcu::kName in C++), value, meaning.
#define NASA_MCU_MAP(X)                                                                       \
  X(RegionGo, REGION_GO, 0x0,                                                                 \
    "address bits 31:28: GO (read: waits for a run; bit 0 program, "                          \
    "bit 1 batch; the run's Cycles count from here)")                                         \
  X(RegionMain, REGION_MAIN, 0x1, "main memory: byte a at address (REGION_MAIN << 28) + a")   \
  X(RegionMmio, REGION_MMIO, 0x3, "registers and tables (page: address bits 15:12)")          \
  X(RegionRom, REGION_ROM, 0x4, "the firmware (instructions, read-only data)")                \
  X(RamBytes, RAM_BYTES, 2560,                                                                \
    "the firmware's RAM (data, stack): the last bytes of main memory, which the host cannot " \
    "reach")                                                                                  \
  X(RomBytes, ROM_BYTES, 8192, "ROM size (fpga/fw/link.ld and the RTL's RomWords follow it)") \
  X(PageCtrl, PAGE_CTRL, 0x1, "MMIO page: control registers (write only)")                    \
  X(PageDot, PAGE_DOT, 0x5, "MMIO page: the dot-product unit's registers")                    \
  X(PageBytes, PAGE_BYTES, 4096,                                                              \
    "the host page (CSRs, tables): the last bytes of main memory below the RAM")              \
  X(ParamWords, PARAM_WORDS, 256, "host page words of the parameter part; [0, 64) CSR 4k")    \
  X(PNode, P_NODE, 256, "host page word: table Node (written by the core)")                   \
  X(PLeaf, P_LEAF, 512, "host page word: table Leaf (written by the core)")                   \
  X(PCorrect, P_CORRECT, 768, "host page word: table Correct (written by the core)")          \
  X(POpTab, P_OPTAB, 64, "parameter page: table OpTab")                                       \
  X(PLayerK, P_LAYERK, 128, "parameter page: table LayerK")                                   \
  X(PArenaAddr, P_ARENA_ADDR, 136, "parameter page: table ArenaAddr")                         \
  X(PArenaStride, P_ARENA_STRIDE, 145, "parameter page: table ArenaStride")                   \
  X(PMacs, P_MACS, 160, "parameter page: the Macs counter, low then high word")               \
  X(PLeafCount, P_LEAF_COUNT, 162, "parameter page: entries of Leaf the host may read")       \
  X(CFinish, C_FINISH, 1, "control: ends the run with error code bits 7:0 (0: none)")         \
  X(CLayerEnd, C_LAYER_END, 4, "control: a layer completed (pulses layer_end_o)")             \
  X(DX, D_X, 0, "dot unit: x address (advanced by XO after each run)")                        \
  X(DW, D_W, 1, "dot unit: w address (advanced by WO)")                                       \
  X(DShape, D_SHAPE, 2, "dot unit: n (15:0) | runs << 16 | mode << 24")                       \
  X(DXstr, D_XSTR, 3, "dot unit: XI (15:0) | XO << 16 (16 bits each)")                        \
  X(DWstr, D_WSTR, 4, "dot unit: WI | WO << 16")                                              \
  X(DAcc, D_ACC, 5, "dot unit: write the initial accumulator to start; read the result")      \
  X(DotMac, DOT_MAC, 0, "dot mode: acc += x * w")                                             \
  X(DotSum, DOT_SUM, 1, "dot mode: acc += x")                                                 \
  X(DotMax, DOT_MAX, 2, "dot mode: acc = max(acc, x)")                                        \
  X(DotMaxN, DOT_MAX_N, 65535, "dot unit: longest run")                                       \
  X(DotMaxRuns, DOT_MAX_RUNS, 255, "dot unit: most runs per start")                           \
  X(DotMaxStride, DOT_MAX_STRIDE, 65535, "dot unit: largest stride")                          \
  X(PageArray, PAGE_ARRAY, 0x6, "MMIO page: the MAC array's registers (Array = 1)")           \
  X(AIn, A_IN, 0, "array: the input's (a's) address, 8-aligned")                              \
  X(AWgt, A_WGT, 1, "array: the weights' (b's) address, 8-aligned")                           \
  X(AOut, A_OUT, 2, "array: the output's address")                                            \
  X(APrm, A_PRM, 3, "array: the records' address, 8-aligned")                                 \
  X(APix, A_PIX, 4, "array: P, the output pixels (the add's bytes), bits 15:0")               \
  X(AGeom, A_GEOM, 5, "array: the window's geometry (fields AG*)")                            \
  X(ARowB, A_ROWB, 6, "array: W x C, the input's row bytes (bits 11:0)")                      \
  X(ARun, A_RUN, 7,                                                                           \
    "array: channels, clamp (AR*); a write starts the layer, a read waits for its end")       \
  X(AgOw, AG_OW, 0, "AGeom bits 7:0: the output's width")                                     \
  X(AgIw, AG_IW, 8, "AGeom bits 15:8: the input's width")                                     \
  X(AgIh, AG_IH, 16, "AGeom bits 23:16: the input's height")                                  \
  X(AgPadt, AG_PADT, 24, "AGeom bits 25:24: rows of zeros above the input")                   \
  X(AgS2, AG_S2, 26, "AGeom bit 26: stride 2")                                                \
  X(AgK, AG_K, 27, "AGeom bits 29:27: k (odd, 1..7)")                                         \
  X(AgSt, AG_ST, 30, "AGeom bit 30: the stem (Conv of one input channel)")                    \
  X(AgDw, AG_DW, 31, "AGeom bit 31: depthwise")                                               \
  X(ArCin, AR_CIN, 0, "ARun bits 8:0: C")                                                     \
  X(ArCout, AR_COUT, 9, "ARun bits 17:9: K")                                                  \
  X(ArNeg, AR_NEG, 18, "ARun bit 18: the clamp's low end is -128 (else 0)")                   \
  X(ArHi, AR_HI, 19, "ARun bits 26:19: the clamp's high end (0..127)")                        \
  X(ArAdd, AR_ADD, 27, "ARun bit 27: a residual add (a at AIn, b at AWgt)")                   \
  X(ArFault, AR_FAULT, 0, "ARun read bit 0: a write the memory did not take")                 \
  X(ArBadRec, AR_BAD_REC, 1,                                                                  \
    "ARun read bit 1: a record's S outside [1, MaxShift]; the layer stopped at its block")    \
  X(AStemBytes, A_STEM_BYTES, 200,                                                            \
    "array image: bytes of a stem's tap-major weights, ceil(K / 8) x 8 x k x k")              \
  X(CounterBits, COUNTER_BITS, 48,                                                            \
    "the controller's Cycles and memory byte counters: bits (they wrap at 2^48, 136 days of " \
    "24 MHz cycles; the CSRs' high words' top bits read 0)")

// ---- C++ views of the tables. ----

#define NASA_ENUM_ROW(n, v, d) n = v,
enum class Op : uint8_t { NASA_OPCODES(NASA_ENUM_ROW) };
enum class Act : uint8_t { NASA_ACTS(NASA_ENUM_ROW) };
enum class Err : uint8_t { NASA_ERRORS(NASA_ENUM_ROW) };
enum class Csr : uint32_t { NASA_CSRS(NASA_ENUM_ROW) };
enum class Counter : uint8_t { NASA_COUNTERS(NASA_ENUM_ROW) };
enum class GenMode : uint8_t { NASA_GEN_MODES(NASA_ENUM_ROW) };
enum class VecMode : uint8_t { NASA_VEC_MODES(NASA_ENUM_ROW) };
#define NASA_TABLE_ROW(n, v, a, d) n = v,
enum class Table : uint8_t { NASA_TABLES(NASA_TABLE_ROW) };
#undef NASA_TABLE_ROW
#define NASA_PATCH_ROW(n, b, d) n = 1u << b,
enum Patch : uint8_t { NASA_PATCH_BITS(NASA_PATCH_ROW) };
#undef NASA_PATCH_ROW
#undef NASA_ENUM_ROW

#define NASA_COUNT_ROW(...) +1
inline constexpr int kNumCounters = 0 NASA_COUNTERS(NASA_COUNT_ROW);
#undef NASA_COUNT_ROW

#define NASA_DEPTH_ROW(n, v, d) inline constexpr uint32_t k##n = v;
NASA_ENGINE_DEPTHS(NASA_DEPTH_ROW)
#undef NASA_DEPTH_ROW
namespace mcu {
#define NASA_MCU_ROW(n, c, v, d) inline constexpr uint32_t k##n = v;
NASA_MCU_MAP(NASA_MCU_ROW)
#undef NASA_MCU_ROW
// The base address of region r (address bits 31:28) and the MMIO address of word k of page p.
constexpr uint32_t region_base(uint32_t r) { return r << 28; }
constexpr uint32_t mmio_addr(uint32_t page, uint32_t k) {
  return region_base(kRegionMmio) | page << 12 | k << 2;
}
}  // namespace mcu

inline constexpr uint32_t kMagic = 0x4E415341u;
inline constexpr uint32_t kDescWords = 16;
inline constexpr uint32_t kDescBytes = kDescWords * 4;
// Per-output-channel parameter record (conv, fc, depthwise): int32 bias at +0, uint16 M at +4,
// uint8 S at +6, one reserved byte at +7; little endian.
inline constexpr uint32_t kParamBytes = 8;
inline constexpr uint32_t kMaxShift = 47;
inline constexpr uint32_t kCtrlStart = 1u << 0;
inline constexpr uint32_t kCtrlClear = 1u << 1;
inline constexpr uint32_t kCtrlBatch = 1u << 2;
// Batch-mode capacities: the largest of any configuration (Config::node_cap etc. are each one's;
// these size host-side arrays and are the RTL modules' default parameters).
inline constexpr uint32_t kNodeCap = 1024;   // node table entries (root included)
inline constexpr uint32_t kMaxLayers = 16;   // choice layers
inline constexpr uint32_t kMaxChoices = 16;  // choices per layer
inline constexpr uint32_t kMaxCands = 1024;  // candidates per batch (leaf table)
inline constexpr uint32_t kNoNode = 0xFFFF;  // "no node" in node table links
// CSR GenMode: the last valid mode, and the modes that read parent vectors.
inline constexpr uint32_t kGenModeLast = static_cast<uint32_t>(GenMode::Crossover);
constexpr bool gen_mode_needs_parents(uint32_t mode) {
  return mode == static_cast<uint32_t>(GenMode::Mutate) ||
         mode == static_cast<uint32_t>(GenMode::Crossover);
}
// A template reference (CSRs StemTpl/HeadTpl, table OpTab): the first template's index in bits
// 23:0, the number of templates in bits 31:24.
inline constexpr uint32_t kTplFirstBits = 24;
constexpr uint32_t tpl_word(uint32_t first, uint32_t count) { return first | count << kTplFirstBits; }
constexpr uint32_t tpl_first(uint32_t word) { return word & ((1u << kTplFirstBits) - 1); }
constexpr uint32_t tpl_count(uint32_t word) { return word >> kTplFirstBits; }
// A node-table entry (table Node): parent node | layer << 16 | choice << 24; the root's is
// node_word(kNoNode, 0xFF, 0xFF).
constexpr uint32_t node_word(uint32_t parent, uint32_t layer, uint32_t choice) {
  return parent | layer << 16 | choice << 24;
}
constexpr uint32_t node_parent(uint32_t word) { return word & 0xFFFF; }
constexpr uint32_t node_layer(uint32_t word) { return (word >> 16) & 0xFF; }
constexpr uint32_t node_choice(uint32_t word) { return word >> 24; }
// CSR TblAddr: table id in bits 31:24, entry index in bits 23:0 (the same split as tpl_word).
constexpr uint32_t tbl_addr(uint32_t table, uint32_t index) { return tpl_word(index, table); }
constexpr uint32_t tbl_table(uint32_t addr) { return tpl_count(addr); }
constexpr uint32_t tbl_index(uint32_t addr) { return tpl_first(addr); }
// TblAddr after a TblData access: the next index of the same table (wrapping in 24 bits).
constexpr uint32_t tbl_next(uint32_t addr) {
  return tbl_addr(tbl_table(addr), tbl_index(addr + 1));
}
inline constexpr uint32_t kStatusBusy = 1u << 0;
inline constexpr uint32_t kStatusDone = 1u << 1;
inline constexpr uint32_t kStatusError = 1u << 2;

struct DescField {
  std::string_view name;
  uint32_t word, lsb, width;
};
namespace field {
#define NASA_FIELD_ROW(n, w, l, b) inline constexpr DescField n{#n, w, l, b};
NASA_DESC_FIELDS(NASA_FIELD_ROW)
#undef NASA_FIELD_ROW
}  // namespace field

struct Config {
  std::string_view name;
  uint32_t rows, cols, mem_bytes, in_buf_bytes, kred_max, burst_max;
  uint32_t node_cap, max_layers, max_choices, max_cands;  // batch mode
  uint32_t rq_lanes, addr_bits, dma_inflight, wtiles;
  uint32_t scratch_bytes;  // the on-chip scratch (docs/engine.md "On-chip scratch"); 0: none
  uint32_t mcu;  // 1: the core is the firmware-driven controller (nasa_mcu)
  // The identification CSRs HwShape, HwMem and HwBatch (HwInBuf, HwKredMax: the fields).
  constexpr uint32_t hw_shape() const { return rows | cols << 16; }
  constexpr uint32_t hw_mem() const { return mem_bytes | burst_max << 16 | addr_bits << 24; }
  // The highest window limit the core accepts: the size of its address space, less, on the
  // board's controller (Mcu), the host page (its CSRs and tables, mcu::kPage*) and the firmware's
  // RAM (mcu::kRamBytes) at its top.
  constexpr uint64_t addr_space() const {
    return (uint64_t{1} << addr_bits) - (mcu == 1 ? mcu::kPageBytes + mcu::kRamBytes : 0);
  }
  // The main memory the host reaches: all of it, less the board controller's RAM (its bridge
  // answers a frame past this BAD_ADDR).
  constexpr uint64_t host_space() const {
    return (uint64_t{1} << addr_bits) - (mcu == 1 ? mcu::kRamBytes : 0);
  }
  // Main memory's byte address of the board controller's host page (Mcu = 1).
  constexpr uint32_t mcu_page() const { return static_cast<uint32_t>(addr_space()); }
  // A window bound as CSR WinBase/WinLimit hold it (clamped to the address space).
  constexpr uint32_t clamp_window(uint32_t v) const {
    return static_cast<uint32_t>(std::min<uint64_t>(v, addr_space()));
  }
  constexpr uint32_t hw_batch() const { return node_cap | max_layers << 16 | max_choices << 24; }
  // The scratch window's base as CSR ScratchBase holds it (aligned down; 0: no window).
  constexpr uint32_t scratch_window(uint32_t base) const {
    return scratch_bytes == 0 ? 0 : base & ~(scratch_bytes - 1);
  }
  // The dual drain (docs/engine.md "Dual drain"): a PE tile without a folded residual drains two
  // rows a cycle and the writer stores two words a cycle into the scratch (its even and odd
  // banks), on configurations with a scratch whose requant lanes take a whole row a cycle
  // (RTL nasa_engine_pkg::dual_drain).
  constexpr bool dual_drain() const {
    return scratch_bytes != 0 && rq_lanes == cols && rows >= 2 && mcu == 0;
  }
};
#define NASA_CONFIG_ROW(n, ...) Config{#n, __VA_ARGS__},
inline constexpr std::array kConfigs = {NASA_CONFIGS(NASA_CONFIG_ROW)};
#undef NASA_CONFIG_ROW

// The columns as data (generators of the configuration table's other views walk these).
struct ConfigField {
  std::string_view member, param;
  bool rtl;          // a parameter of the core's top module
  bool engine_only;  // ... of nasa_top only: the board controller's (Mcu = 1) has none
  uint32_t Config::*value;
  std::string_view doc;
};
#define NASA_FIELD_OF_CONFIG(m, p, r, d) ConfigField{#m, #p, r != 0, r == 2, &Config::m, d},
inline constexpr std::array kConfigFields = {NASA_CONFIG_FIELDS(NASA_FIELD_OF_CONFIG)};
#undef NASA_FIELD_OF_CONFIG
static_assert(sizeof(Config) == (sizeof(std::string_view) + kConfigFields.size() * sizeof(uint32_t) +
                                 alignof(Config) - 1) / alignof(Config) * alignof(Config),
              "NASA_CONFIG_FIELDS must list every column of Config, in order");
namespace detail {
constexpr bool configs_within_maxima() {
  for (const Config& c : kConfigs) {
    if (c.node_cap > kNodeCap || c.max_layers > kMaxLayers || c.max_choices > kMaxChoices ||
        c.max_cands > kMaxCands || c.node_cap < 2 || c.max_layers == 0 || c.max_choices == 0 ||
        c.max_cands == 0 || c.rq_lanes == 0 || c.cols % c.rq_lanes != 0 ||
        (c.rq_lanes & (c.rq_lanes - 1)) != 0 || c.addr_bits < 16 || c.addr_bits > 32 ||
        c.dma_inflight < 2 || (c.dma_inflight & (c.dma_inflight - 1)) != 0 || c.wtiles < 2 ||
        (c.wtiles & (c.wtiles - 1)) != 0 || (c.scratch_bytes & (c.scratch_bytes - 1)) != 0 ||
        (c.scratch_bytes != 0 && c.scratch_bytes < 2 * c.mem_bytes) || c.mcu > 1 ||
        (c.mcu == 1 && (c.mem_bytes != 8 || c.node_cap > 256 || c.max_cands > 256 ||
                        c.max_layers * c.max_choices > 64 || c.max_layers > 8))) {
      return false;
    }
  }
  return true;
}
}  // namespace detail
static_assert(
    detail::configs_within_maxima(),
    "a configuration's batch capacities exceed kNodeCap/kMaxLayers/kMaxChoices/kMaxCands, "
    "or RqLanes is not a power of two dividing Cols, or AddrBits is not in [16, 32], or "
    "DmaInflight or WTiles is not a power of two >= 2, or ScratchBytes is not 0 or a "
    "power of two of at least two port words, or Mcu is not 0/1 (1 needs an "
    "8-byte memory port and tables that fit its host page)");

// PE utilization: the MACs a run executed over what Rows x Cols PEs could in its cycles (the
// metric of docs/engine.md "Utilization"; 0 for a run of no cycles).
inline double pe_utilization(uint64_t macs, uint64_t cycles, const Config& c) {
  return cycles == 0 ? 0.0
                     : static_cast<double>(macs) /
                           (static_cast<double>(c.rows) * c.cols * static_cast<double>(cycles));
}

// ---- The RTL's buses: the packed structs nasa_pkg declares for them (csr_req_t ...), fields
// most significant first. Protocols: docs/engine.md "Ports". The data fields are as wide as the
// widest configuration's memory port (a configuration uses the low MemBytes bytes of them) and
// come last, so a simulator's port image has them at bit 0 (sim/include/nasa/sim/bus.h). ----
inline constexpr uint32_t kMemBytesMax = [] {
  uint32_t m = 0;
  for (const Config& c : kConfigs) m = std::max(m, c.mem_bytes);
  return m;
}();

struct BusField {
  std::string_view name;
  uint32_t width;
  std::string_view doc;
  uint32_t bits_per_port_byte = 0;  // a data field: width = this x kMemBytesMax
};
// A data field of the memory port: `bits` bits for each of its kMemBytesMax bytes.
constexpr BusField port_field(std::string_view name, uint32_t bits) {
  return {name, bits * kMemBytesMax, "", bits};
}
// CSR bus: a request is taken with req.valid && rsp.ready; read data come the next cycle.
inline constexpr std::array kCsrReq = {BusField{"valid", 1, ""}, BusField{"we", 1, ""},
                                       BusField{"addr", 12, ""}, BusField{"wdata", 32, ""}};
inline constexpr std::array kCsrRsp = {BusField{"ready", 1, "the request is taken"},
                                       BusField{"valid", 1, "read data of last cycle's request"},
                                       BusField{"rdata", 32, ""}};
// Memory port: read bursts of len+1 beats and single strobed write beats.
inline constexpr std::array kMemReq = {
    BusField{"valid", 1, ""},
    BusField{"we", 1, ""},
    BusField{"addr", 32, ""},
    BusField{"len", 8, "read burst: beats - 1 (writes: 0)"},
    BusField{"rsp_ready", 1, "a read beat is taken"},
    port_field("wstrb", 1),
    port_field("wdata", 8)};
inline constexpr std::array kMemRsp = {BusField{"ready", 1, "the request is taken"},
                                       BusField{"valid", 1, "a read beat"},
                                       port_field("rdata", 8)};
// Byte port of the control units (cand_gen, fusion_unit, eval_unit, the UART bridge).
inline constexpr std::array kByteReq = {BusField{"valid", 1, ""}, BusField{"we", 1, ""},
                                        BusField{"addr", 32, ""}, BusField{"wdata", 8, ""}};
inline constexpr std::array kByteRsp = {BusField{"ready", 1, "the request is taken"},
                                        BusField{"valid", 1, "a read's byte (always taken)"},
                                        BusField{"rdata", 8, ""}};

// A bus struct's width, and the lsb and width of one of its fields (a compile error when it has
// none).
template <size_t N>
constexpr uint32_t bus_width(const std::array<BusField, N>& fields) {
  uint32_t w = 0;
  for (const BusField& f : fields) w += f.width;
  return w;
}
template <size_t N>
constexpr uint32_t bus_lsb(const std::array<BusField, N>& fields, std::string_view name) {
  uint32_t lsb = bus_width(fields);
  for (const BusField& f : fields) {
    lsb -= f.width;
    if (f.name == name) return lsb;
  }
  throw "bus_lsb: no such field";
}
template <size_t N>
constexpr uint32_t bus_field_width(const std::array<BusField, N>& fields, std::string_view name) {
  for (const BusField& f : fields) {
    if (f.name == name) return f.width;
  }
  throw "bus_field_width: no such field";
}

}  // namespace nasa::hw
