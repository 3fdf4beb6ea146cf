/* GENERATED FILE - DO NOT EDIT. nasa-gen-pkg --c-header up5k (sw/tools/gen_pkg.cpp) from
 * sw/base/include/nasa/hw_spec.h, the one definition of the hardware/software interface. */
#ifndef NASA_HW_H
#define NASA_HW_H

#define NASA_OP_CONV 1u /* kxk convolution, stride 1/2, same padding, OHWI weights, per-channel params */
#define NASA_OP_DW_CONV 2u /* kxk depthwise convolution, HWC weights, per-channel params */
#define NASA_OP_FC 3u /* fully connected over the flattened HWC input, OHWI weights, per-channel params */
#define NASA_OP_MAX_POOL 4u /* 3x3 max pool, stride 1/2, padding ignored */
#define NASA_OP_AVG_POOL 5u /* 3x3 average pool (sum incl. zero padding) then requant (M,S) */
#define NASA_OP_ADD 6u /* residual add: requant(a,M,S) + requant(b,Mb,Sb), saturated */
#define NASA_OP_GAP 7u /* global average pool: per-channel sum then requant (M,S), output 1x1xC */

#define NASA_ACT_NONE 0u /* clamp to [-128,127] */
#define NASA_ACT_RELU 1u /* clamp to [0,127] */
#define NASA_ACT_RELU6 2u /* clamp to [0,q6] */

#define NASA_ERR_NONE 0u /* no error */
#define NASA_ERR_BAD_OPCODE 1u /* unknown opcode */
#define NASA_ERR_BAD_ACT 2u /* unknown activation */
#define NASA_ERR_BAD_STRIDE 3u /* stride not 1 or 2 */
#define NASA_ERR_BAD_KERNEL 4u /* kernel not in {1,3,5,7} (conv, depthwise) or not 3 (pools) */
#define NASA_ERR_ZERO_DIM 5u /* a dimension (H, W, Cin, Cout) is zero */
#define NASA_ERR_BAD_CHANNELS 6u /* Cout != Cin for an op that keeps channels */
#define NASA_ERR_OVERSIZE 7u /* input does not fit the input buffer or k*k*Cin exceeds KredMax */
#define NASA_ERR_BAD_QUANT 8u /* requant shift S outside [1,47] or ReLU6 q6 > 127 */
#define NASA_ERR_WINDOW 9u /* an access range lies outside the programmed memory window */
#define NASA_ERR_EMPTY_PROGRAM 10u /* DESC_COUNT is zero */
#define NASA_ERR_EMPTY_BATCH 11u /* batch run with CAND_COUNT or IMG_COUNT zero */
#define NASA_ERR_BAD_BATCH_CFG 12u /* batch setup out of range (NUM_LAYERS, a layer's K, MINI_BATCH, ...) */
#define NASA_ERR_BAD_CHOICE 13u /* a candidate picks a choice >= its layer's K (ERR_INDEX: candidate) */
#define NASA_ERR_NODE_OVERFLOW 14u /* the fused graph needs more nodes than NodeCap (ERR_INDEX: candidate) */
#define NASA_ERR_FAULT 15u /* the board's controller (up5k) stopped at an illegal instruction */
#define NASA_ERR_BAD_BAND 16u /* row band: OutRows > ceil(H/stride), PadTop > (k-1)/2, or not a window op */
#define NASA_ERR_BAD_RESIDUAL 17u /* a folded residual (Res) on an op other than Conv/DwConv, or stride 2 */
#define NASA_ERR_BAD_PACK 18u /* Images > 1 on an op other than Conv/DwConv/Fc, a band, a residual, or on the board's controller */

#define NASA_CSR_CTRL 0u /* W: bit0 start, bit1 clear done/error, bit2 start a batch run */
#define NASA_CSR_STATUS 4u /* R: bit0 busy, bit1 done, bit2 error */
#define NASA_CSR_ERR_CODE 8u /* R: error code of the run */
#define NASA_CSR_ERR_INDEX 12u /* R: index of the descriptor that failed */
#define NASA_CSR_DESC_ADDR 16u /* RW: byte address of descriptor 0 */
#define NASA_CSR_DESC_COUNT 20u /* RW: number of descriptors to run */
#define NASA_CSR_WIN_BASE 24u /* RW: first byte of the accessible window (at most 2^AddrBits) */
#define NASA_CSR_WIN_LIMIT 28u /* RW: one past the last byte of the window (at most 2^AddrBits) */
#define NASA_CSR_HW_SHAPE 32u /* R: Rows | Cols << 16 */
#define NASA_CSR_HW_MEM 36u /* R: memory port bytes | burst max << 16 | AddrBits << 24 */
#define NASA_CSR_HW_IN_BUF 40u /* R: input buffer bytes */
#define NASA_CSR_HW_KRED_MAX 44u /* R: max reduction length k*k*Cin of one output channel */
#define NASA_CSR_MAGIC 48u /* R: 0x4E415341 'NASA' */
#define NASA_CSR_LAYERS_DONE 52u /* R: descriptors completed in this run */
#define NASA_CSR_NUM_LAYERS 64u /* RW: batch: choice layers L of the supernet */
#define NASA_CSR_CAND_ADDR 68u /* RW: batch: candidate vectors, one byte per layer */
#define NASA_CSR_CAND_STRIDE 72u /* RW: batch: bytes between candidate vectors */
#define NASA_CSR_CAND_COUNT 76u /* RW: batch: candidates in the batch */
#define NASA_CSR_TPL_ADDR 80u /* RW: batch: byte address of template descriptor 0 */
#define NASA_CSR_STEM_TPL 84u /* RW: batch: stem templates, first | count << 24 */
#define NASA_CSR_HEAD_TPL 88u /* RW: batch: head templates, first | count << 24 */
#define NASA_CSR_IMG_ADDR 92u /* RW: batch: input image 0 (int8 HWC) */
#define NASA_CSR_IMG_STRIDE 96u /* RW: batch: bytes between input images */
#define NASA_CSR_IMG_COUNT 100u /* RW: batch: images to evaluate */
#define NASA_CSR_LABEL_ADDR 104u /* RW: batch: labels, one byte per image */
#define NASA_CSR_MINI_BATCH 108u /* RW: batch: images per mini-batch (arena slots per depth) */
#define NASA_CSR_CLASSES 112u /* RW: batch: logits per image */
#define NASA_CSR_LOGITS_ADDR 116u /* RW: batch: where the head's FC writes logits (see LOGITS_STRIDE) */
#define NASA_CSR_LOGITS_STRIDE 120u /* RW: 0: image b of a mini-batch at LOGITS_ADDR+b*Classes; else leaf n, image g at +n*stride+g*Classes */
#define NASA_CSR_GEN_MODE 124u /* RW: 0 candidates from memory; 1 sample, 2 mutate, 3 crossover */
#define NASA_CSR_GEN_SEED 128u /* RW: cand_gen seed (0 means 0x9E3779B9) */
#define NASA_CSR_GEN_PROB 132u /* RW: cand_gen mutation probability, 0..65536 = 0..1 */
#define NASA_CSR_PARENT_ADDR 136u /* RW: cand_gen parent vectors (CAND_STRIDE apart) */
#define NASA_CSR_PARENT_COUNT 140u /* RW: cand_gen parents */
#define NASA_CSR_NODE_COUNT 144u /* R: batch: nodes in the node table after fusion */
#define NASA_CSR_TBL_ADDR 148u /* RW: batch table access: table << 24 | index */
#define NASA_CSR_TBL_DATA 152u /* RW: entry at TBL_ADDR; the index advances after each access */
#define NASA_CSR_HW_BATCH 156u /* R: NodeCap | MaxLayers << 16 | MaxChoices << 24 */
#define NASA_CSR_SCRATCH_STRIDE 160u /* RW: batch: bytes between the scratch tensors of consecutive images */
#define NASA_CSR_SCRATCH_BASE 164u /* RW: on-chip scratch window [base, base + ScratchBytes); base a multiple of ScratchBytes (low bits ignored), 0: none */
#define NASA_CSR_COUNTER_BASE 256u /* R: 64-bit counters, id i at 0x100 + 8*i (lo) and +4 (hi) */

#define NASA_CNT_CYCLES 0u /* cycles from start to done */
#define NASA_CNT_PE_BUSY 1u /* cycles the PE array issued a MAC step */
#define NASA_CNT_VEC_BUSY 2u /* cycles the vector unit issued a tap */
#define NASA_CNT_MACS 3u /* multiply-accumulates executed (conv, fc, depthwise) */
#define NASA_CNT_DRAM_RD_BYTES 4u /* bytes read on the memory port (whole bus words) */
#define NASA_CNT_DRAM_WR_BYTES 5u /* bytes written on the memory port (enabled bytes) */
#define NASA_CNT_STALL_INPUT 6u /* cycles compute waited for input data */
#define NASA_CNT_STALL_WEIGHT 7u /* cycles compute waited for weights/params */
#define NASA_CNT_STALL_OUTPUT 8u /* cycles compute waited for the output path */
#define NASA_CNT_STALL_DESC 9u /* cycles waiting for a descriptor (fetch, decode; no layer running) */
#define NASA_CNT_IN_BUF_WRITES 10u /* port words written into the input buffer (every replica) */
#define NASA_CNT_WBUF_WRITES 11u /* port words written into the weight ring */
#define NASA_CNT_PRM_WRITES 12u /* port words written into the per-channel record memory */
#define NASA_CNT_SCRATCH_READS 13u /* port words read from the on-chip scratch (input loads) */
#define NASA_CNT_SCRATCH_WRITES 14u /* strobed port words written into the on-chip scratch (outputs) */

#define NASA_TBL_NODE 0u /* R node n: parent | layer << 16 | choice << 24 (root: 0xFFFF, 0xFF, 0xFF) */
#define NASA_TBL_LEAF 1u /* R candidate c: its leaf node */
#define NASA_TBL_CORRECT 2u /* R node n: correct answers counted at leaf n */
#define NASA_TBL_OP_TAB 3u /* RW layer i * MaxChoices + choice: templates, first | count << 24 */
#define NASA_TBL_LAYER_K 4u /* RW layer i: its choice count K_i */
#define NASA_TBL_ARENA_ADDR 5u /* RW depth d (0: stem output, d: output of layer d-1): slot of image 0 */
#define NASA_TBL_ARENA_STRIDE 6u /* RW depth d: bytes between the slots of consecutive images */

#define NASA_GEN_MEMORY 0u /* candidates from memory (CandAddr, CandStride) */
#define NASA_GEN_SAMPLE 1u /* cand_gen samples each layer uniformly from GenSeed */
#define NASA_GEN_MUTATE 2u /* cand_gen re-samples each layer of a parent with prob. GenProb */
#define NASA_GEN_CROSSOVER 3u /* cand_gen takes each layer from one of two parents */

#define NASA_PATCH_IN_FROM_X 1u /* IN_ADDR <- IN_ADDR + X */
#define NASA_PATCH_IN2_FROM_X 2u /* IN2_ADDR <- IN2_ADDR + X */
#define NASA_PATCH_OUT_FROM_Y 4u /* OUT_ADDR <- OUT_ADDR + Y */
#define NASA_PATCH_OUT_FROM_L 8u /* OUT_ADDR <- OUT_ADDR + logits address */
#define NASA_PATCH_IN_PLUS_S 16u /* IN_ADDR <- IN_ADDR + S */
#define NASA_PATCH_OUT_PLUS_S 32u /* OUT_ADDR <- OUT_ADDR + S */

#define NASA_DESC_OP_WORD 0u
#define NASA_DESC_OP_LSB 0u
#define NASA_DESC_OP_WIDTH 8u
#define NASA_DESC_ACT_WORD 0u
#define NASA_DESC_ACT_LSB 8u
#define NASA_DESC_ACT_WIDTH 8u
#define NASA_DESC_K_WORD 0u
#define NASA_DESC_K_LSB 16u
#define NASA_DESC_K_WIDTH 8u
#define NASA_DESC_STRIDE_WORD 0u
#define NASA_DESC_STRIDE_LSB 24u
#define NASA_DESC_STRIDE_WIDTH 8u
#define NASA_DESC_H_WORD 1u
#define NASA_DESC_H_LSB 0u
#define NASA_DESC_H_WIDTH 16u
#define NASA_DESC_W_WORD 1u
#define NASA_DESC_W_LSB 16u
#define NASA_DESC_W_WIDTH 16u
#define NASA_DESC_CIN_WORD 2u
#define NASA_DESC_CIN_LSB 0u
#define NASA_DESC_CIN_WIDTH 16u
#define NASA_DESC_COUT_WORD 2u
#define NASA_DESC_COUT_LSB 16u
#define NASA_DESC_COUT_WIDTH 16u
#define NASA_DESC_IN_ADDR_WORD 3u
#define NASA_DESC_IN_ADDR_LSB 0u
#define NASA_DESC_IN_ADDR_WIDTH 32u
#define NASA_DESC_IN2_ADDR_WORD 4u
#define NASA_DESC_IN2_ADDR_LSB 0u
#define NASA_DESC_IN2_ADDR_WIDTH 32u
#define NASA_DESC_OUT_ADDR_WORD 5u
#define NASA_DESC_OUT_ADDR_LSB 0u
#define NASA_DESC_OUT_ADDR_WIDTH 32u
#define NASA_DESC_WGT_ADDR_WORD 6u
#define NASA_DESC_WGT_ADDR_LSB 0u
#define NASA_DESC_WGT_ADDR_WIDTH 32u
#define NASA_DESC_PRM_ADDR_WORD 7u
#define NASA_DESC_PRM_ADDR_LSB 0u
#define NASA_DESC_PRM_ADDR_WIDTH 32u
#define NASA_DESC_M_WORD 8u
#define NASA_DESC_M_LSB 0u
#define NASA_DESC_M_WIDTH 16u
#define NASA_DESC_S_WORD 8u
#define NASA_DESC_S_LSB 16u
#define NASA_DESC_S_WIDTH 8u
#define NASA_DESC_Q6_WORD 8u
#define NASA_DESC_Q6_LSB 24u
#define NASA_DESC_Q6_WIDTH 8u
#define NASA_DESC_MB_WORD 9u
#define NASA_DESC_MB_LSB 0u
#define NASA_DESC_MB_WIDTH 16u
#define NASA_DESC_SB_WORD 9u
#define NASA_DESC_SB_LSB 16u
#define NASA_DESC_SB_WIDTH 8u
#define NASA_DESC_PATCH_WORD 10u
#define NASA_DESC_PATCH_LSB 0u
#define NASA_DESC_PATCH_WIDTH 8u
#define NASA_DESC_RES_WORD 10u
#define NASA_DESC_RES_LSB 8u
#define NASA_DESC_RES_WIDTH 1u
#define NASA_DESC_OUT_ROWS_WORD 11u
#define NASA_DESC_OUT_ROWS_LSB 0u
#define NASA_DESC_OUT_ROWS_WIDTH 16u
#define NASA_DESC_PAD_TOP_WORD 11u
#define NASA_DESC_PAD_TOP_LSB 16u
#define NASA_DESC_PAD_TOP_WIDTH 8u
#define NASA_DESC_IMAGES_WORD 11u
#define NASA_DESC_IMAGES_LSB 24u
#define NASA_DESC_IMAGES_WIDTH 8u
#define NASA_DESC_IN_STRIDE_WORD 12u
#define NASA_DESC_IN_STRIDE_LSB 0u
#define NASA_DESC_IN_STRIDE_WIDTH 32u
#define NASA_DESC_OUT_STRIDE_WORD 13u
#define NASA_DESC_OUT_STRIDE_LSB 0u
#define NASA_DESC_OUT_STRIDE_WIDTH 32u

#define NASA_NUM_COUNTERS 15u
#define NASA_DESC_BYTES 64u
#define NASA_PARAM_BYTES 8u
#define NASA_MAX_SHIFT 47u
#define NASA_MAGIC 0x4E415341u
#define NASA_NO_NODE 0xFFFFu
#define NASA_CTRL_START 1u
#define NASA_CTRL_CLEAR 2u
#define NASA_CTRL_BATCH 4u
#define NASA_STATUS_BUSY 1u
#define NASA_STATUS_DONE 2u
#define NASA_STATUS_ERROR 4u

/* Packed words (hw_spec.h tpl_word, node_word, tbl_addr). */
#define NASA_TPL_FIRST_BITS 24u
#define NASA_TPL_WORD(first, count) ((first) | (count) << 24)
#define NASA_TPL_FIRST(w) ((w) & ((1u << 24) - 1u))
#define NASA_TPL_COUNT(w) ((w) >> 24)
#define NASA_NODE_WORD(parent, layer, choice) ((parent) | (layer) << 16 | (choice) << 24)
#define NASA_NODE_PARENT(w) ((w) & 0xFFFFu)
#define NASA_NODE_LAYER(w) (((w) >> 16) & 0xFFu)
#define NASA_NODE_CHOICE(w) ((w) >> 24)

/* The controller's memory map. */
#define MCU_REGION_GO 0u /* address bits 31:28: GO (read: waits for a run; bit 0 program, bit 1 batch; the run's Cycles count from here) */
#define MCU_REGION_MAIN 1u /* main memory: byte a at address (REGION_MAIN << 28) + a */
#define MCU_REGION_MMIO 3u /* registers and tables (page: address bits 15:12) */
#define MCU_REGION_ROM 4u /* the firmware (instructions, read-only data) */
#define MCU_RAM_BYTES 2560u /* the firmware's RAM (data, stack): the last bytes of main memory, which the host cannot reach */
#define MCU_ROM_BYTES 8192u /* ROM size (fpga/fw/link.ld and the RTL's RomWords follow it) */
#define MCU_PAGE_CTRL 1u /* MMIO page: control registers (write only) */
#define MCU_PAGE_DOT 5u /* MMIO page: the dot-product unit's registers */
#define MCU_PAGE_BYTES 4096u /* the host page (CSRs, tables): the last bytes of main memory below the RAM */
#define MCU_PARAM_WORDS 256u /* host page words of the parameter part; [0, 64) CSR 4k */
#define MCU_P_NODE 256u /* host page word: table Node (written by the core) */
#define MCU_P_LEAF 512u /* host page word: table Leaf (written by the core) */
#define MCU_P_CORRECT 768u /* host page word: table Correct (written by the core) */
#define MCU_P_OPTAB 64u /* parameter page: table OpTab */
#define MCU_P_LAYERK 128u /* parameter page: table LayerK */
#define MCU_P_ARENA_ADDR 136u /* parameter page: table ArenaAddr */
#define MCU_P_ARENA_STRIDE 145u /* parameter page: table ArenaStride */
#define MCU_P_MACS 160u /* parameter page: the Macs counter, low then high word */
#define MCU_P_LEAF_COUNT 162u /* parameter page: entries of Leaf the host may read */
#define MCU_C_FINISH 1u /* control: ends the run with error code bits 7:0 (0: none) */
#define MCU_C_LAYER_END 4u /* control: a layer completed (pulses layer_end_o) */
#define MCU_D_X 0u /* dot unit: x address (advanced by XO after each run) */
#define MCU_D_W 1u /* dot unit: w address (advanced by WO) */
#define MCU_D_SHAPE 2u /* dot unit: n (15:0) | runs << 16 | mode << 24 */
#define MCU_D_XSTR 3u /* dot unit: XI (15:0) | XO << 16 (16 bits each) */
#define MCU_D_WSTR 4u /* dot unit: WI | WO << 16 */
#define MCU_D_ACC 5u /* dot unit: write the initial accumulator to start; read the result */
#define MCU_DOT_MAC 0u /* dot mode: acc += x * w */
#define MCU_DOT_SUM 1u /* dot mode: acc += x */
#define MCU_DOT_MAX 2u /* dot mode: acc = max(acc, x) */
#define MCU_DOT_MAX_N 65535u /* dot unit: longest run */
#define MCU_DOT_MAX_RUNS 255u /* dot unit: most runs per start */
#define MCU_DOT_MAX_STRIDE 65535u /* dot unit: largest stride */
#define MCU_PAGE_ARRAY 6u /* MMIO page: the MAC array's registers (Array = 1) */
#define MCU_A_IN 0u /* array: the input's (a's) address, 8-aligned */
#define MCU_A_WGT 1u /* array: the weights' (b's) address, 8-aligned */
#define MCU_A_OUT 2u /* array: the output's address */
#define MCU_A_PRM 3u /* array: the records' address, 8-aligned */
#define MCU_A_PIX 4u /* array: P, the output pixels (the add's bytes), bits 15:0 */
#define MCU_A_GEOM 5u /* array: the window's geometry (fields AG*) */
#define MCU_A_ROWB 6u /* array: W x C, the input's row bytes (bits 11:0) */
#define MCU_A_RUN 7u /* array: channels, clamp (AR*); a write starts the layer, a read waits for its end */
#define MCU_AG_OW 0u /* AGeom bits 7:0: the output's width */
#define MCU_AG_IW 8u /* AGeom bits 15:8: the input's width */
#define MCU_AG_IH 16u /* AGeom bits 23:16: the input's height */
#define MCU_AG_PADT 24u /* AGeom bits 25:24: rows of zeros above the input */
#define MCU_AG_S2 26u /* AGeom bit 26: stride 2 */
#define MCU_AG_K 27u /* AGeom bits 29:27: k (odd, 1..7) */
#define MCU_AG_ST 30u /* AGeom bit 30: the stem (Conv of one input channel) */
#define MCU_AG_DW 31u /* AGeom bit 31: depthwise */
#define MCU_AR_CIN 0u /* ARun bits 8:0: C */
#define MCU_AR_COUT 9u /* ARun bits 17:9: K */
#define MCU_AR_NEG 18u /* ARun bit 18: the clamp's low end is -128 (else 0) */
#define MCU_AR_HI 19u /* ARun bits 26:19: the clamp's high end (0..127) */
#define MCU_AR_ADD 27u /* ARun bit 27: a residual add (a at AIn, b at AWgt) */
#define MCU_AR_FAULT 0u /* ARun read bit 0: a write the memory did not take */
#define MCU_AR_BAD_REC 1u /* ARun read bit 1: a record's S outside [1, MaxShift]; the layer stopped at its block */
#define MCU_A_STEM_BYTES 200u /* array image: bytes of a stem's tap-major weights, ceil(K / 8) x 8 x k x k */
#define MCU_COUNTER_BITS 48u /* the controller's Cycles and memory byte counters: bits (they wrap at 2^48, 136 days of 24 MHz cycles; the CSRs' high words' top bits read 0) */

/* Configuration `up5k`. */
#define NASA_CFG_ROWS 1u
#define NASA_CFG_COLS 1u
#define NASA_CFG_MEM_BYTES 8u
#define NASA_CFG_IN_BUF_BYTES 32768u
#define NASA_CFG_KRED_MAX 256u
#define NASA_CFG_BURST_MAX 1u
#define NASA_CFG_NODE_CAP 256u
#define NASA_CFG_MAX_LAYERS 8u
#define NASA_CFG_MAX_CHOICES 8u
#define NASA_CFG_MAX_CANDS 256u
#define NASA_CFG_RQ_LANES 1u
#define NASA_CFG_ADDR_BITS 17u
#define NASA_CFG_DMA_INFLIGHT 2u
#define NASA_CFG_WTILES 2u
#define NASA_CFG_SCRATCH_BYTES 0u
#define NASA_CFG_MCU 1u
#define NASA_CFG_HW_SHAPE 0x00010001u
#define NASA_CFG_HW_MEM 0x11010008u
#define NASA_CFG_HW_BATCH 0x08080100u

#endif
