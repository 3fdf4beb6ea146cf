/* The controller's memory map as the firmware addresses it (the board's core, docs/fpga.md).
 * Every number is the NASA_MCU_MAP table of sw/base/include/nasa/hw_spec.h, generated into
 * nasa_hw.h (MCU_*); rtl/nasa_mcu.sv and the host model (fpga/model/) read the same table. */
#ifndef NASA_FW_MMIO_H
#define NASA_FW_MMIO_H

#include "nasa_hw.h"

#define MCU_REGION(r) ((r) << 28)
#define MCU_GO_ADDR MCU_REGION(MCU_REGION_GO)
#define MCU_MAIN_BASE MCU_REGION(MCU_REGION_MAIN)
#define MCU_MMIO_BASE MCU_REGION(MCU_REGION_MMIO)
#define MCU_ROM_BASE MCU_REGION(MCU_REGION_ROM)

/* Word k of MMIO page p: control registers (write only) and the dot unit's registers (a write
 * or read waits while it runs, and so does the core's next main-memory access). */
#define MCU_PAGE_WORD(p, k) (MCU_MMIO_BASE + ((p) << 12) + 4u * (k))
#define MCU_CTRL(k) MCU_PAGE_WORD(MCU_PAGE_CTRL, k)
#define MCU_DOT(k) MCU_PAGE_WORD(MCU_PAGE_DOT, k)

/* Main memory's last MCU_RAM_BYTES are the firmware's RAM (its variables and stack: link.ld),
 * which the host cannot reach (the bridge answers BAD_ADDR). Below them, the host page: the
 * MCU_PAGE_BYTES at MCU_PAGE_ADDR (docs/fpga.md "The host page"). Word k < 64 is CSR address
 * 4k: the RW CSRs as the host wrote them, and the read-only CSRs the firmware writes for the
 * host (identification at boot, ERR_INDEX, LAYERS_DONE, NODE_COUNT during a run); then the
 * tables and the Macs counter at MCU_P_*. Plain memory, which the host writes over its memory
 * port (its CSR layer, device::McuPage, not while a run is busy): a run takes the window and the
 * batch CSRs into its variables when it starts, and reads the tables as it goes, as it reads
 * descriptors. */
#define MCU_PAGE_ADDR ((1u << NASA_CFG_ADDR_BITS) - MCU_RAM_BYTES - MCU_PAGE_BYTES)
#define MCU_PARAM(k) (MCU_MAIN_BASE + MCU_PAGE_ADDR + 4u * (k))
#define MCU_NODE(i) MCU_PARAM(MCU_P_NODE + (i))
#define MCU_LEAF(i) MCU_PARAM(MCU_P_LEAF + (i))
#define MCU_CORRECT(i) MCU_PARAM(MCU_P_CORRECT + (i))

#endif
