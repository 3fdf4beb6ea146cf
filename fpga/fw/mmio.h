/* The controller's memory map (the RV32IM core of the `fpga` configuration, docs/fpga.md):
 * shared by the firmware (C), rtl/nasa_mcu.sv and the host-side system model
 * (sw/src/mcu_system.cpp). Plain C: the firmware includes it too. */
#ifndef NASA_FW_MMIO_H
#define NASA_FW_MMIO_H

/* Regions of the core's address space (bits 31:28 select one). */
#define MCU_GO_ADDR 0x00000000u   /* R: waits until the host starts a run; bit 0 a program run,
                                     bit 1 a batch run (the run's Cycles count from here) */
#define MCU_MAIN_BASE 0x10000000u /* + a: byte a of main memory (the memory port) */
#define MCU_RAM_BASE 0x20000000u  /* the controller's own RAM: stack, data */
#define MCU_MMIO_BASE 0x30000000u /* registers and tables below */
#define MCU_ROM_BASE 0x40000000u  /* the firmware (instructions, read-only data) */

#define MCU_RAM_BYTES 2048u
#define MCU_ROM_BYTES 7168 /* the firmware ROM (link.ld, the RTL's RomWords follow it) */

/* Parameter page: word k of
 *   [0, 64):    CSR address 4k: the RW CSRs as the host wrote them (DESC_ADDR, ..., WIN_LIMIT as
 *               clamped, the batch registers), and the read-only CSRs the firmware writes for the
 *               host to read (identification at boot; ERR_INDEX, LAYERS_DONE, NODE_COUNT during a
 *               run); the host reads every CSR below the counters here but STATUS, ERR_CODE and
 *               TBL_ADDR/TBL_DATA
 *   [64, 128):  table OpTab, [128, 136): LayerK, [136, 145): ArenaAddr, [145, 154): ArenaStride
 *   160, 161:   the Macs counter, low and high word (written by the firmware)
 * The core writes it with plain stores (a store the cycle the host writes the page waits). */
#define MCU_PARAM(k) (MCU_MMIO_BASE + 4u * (k))
#define MCU_PARAM_WORDS 256u
#define MCU_P_OPTAB 64u
#define MCU_P_LAYERK 128u
#define MCU_P_ARENA_ADDR 136u
#define MCU_P_ARENA_STRIDE 145u
#define MCU_P_MACS 160u

/* Control registers (write only). */
#define MCU_CTRL(k) (MCU_MMIO_BASE + 0x1000u + 4u * (k))
#define MCU_C_FINISH 1u     /* ends the run with error code bits 7:0 (0: none) */
#define MCU_C_LAYER_END 4u  /* a layer completed (pulses layer_end_o) */
#define MCU_C_NODE_COUNT 7u /* entries of Node and Correct the host may read */
#define MCU_C_LEAF_COUNT 8u /* entries of Leaf the host may read (0 after a failed run) */

/* The dot-product unit (rtl/nasa_mcu_dot.sv): registers; a write or read waits while it runs,
 * and so does the core's next main-memory access. */
#define MCU_DOT(k) (MCU_MMIO_BASE + 0x5000u + 4u * (k))
#define MCU_D_X 0u     /* x address (advanced by XO after each run) */
#define MCU_D_W 1u     /* w address (advanced by WO) */
#define MCU_D_SHAPE 2u /* n (11:0) | runs << 16 | mode << 24 */
#define MCU_D_XSTR 3u  /* XI (11:0) | XO << 16 (12 bits each) */
#define MCU_D_WSTR 4u  /* WI | WO << 16 */
#define MCU_D_ACC 5u   /* write: initial accumulator, starts; read: the result */
#define MCU_DOT_MAC 0u /* acc += x * w */
#define MCU_DOT_SUM 1u /* acc += x */
#define MCU_DOT_MAX 2u /* acc = max(acc, x) */
#define MCU_DOT_MAX_N 4095u
#define MCU_DOT_MAX_RUNS 255u
#define MCU_DOT_MAX_STRIDE 4095u

/* Result tables (written by the core, read by the host through TBL_DATA): word i of Node
 * (parent | layer << 16 | choice << 24), Leaf and Correct. */
#define MCU_NODE(i) (MCU_MMIO_BASE + 0x2000u + 4u * (i))
#define MCU_LEAF(i) (MCU_MMIO_BASE + 0x3000u + 4u * (i))
#define MCU_CORRECT(i) (MCU_MMIO_BASE + 0x4000u + 4u * (i))

#endif
