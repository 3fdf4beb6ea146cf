/* Reset entry of the controller's firmware, and where it returns after every run: a stack,
 * boot() (the identification CSRs), then the load from address 0 (the GO register,
 * fpga/fw/mmio.h), which waits until the host starts a run and returns its kind, then run(kind),
 * which writes FINISH. Nothing else needs initialising: the firmware has no .data, and sets every
 * variable before it reads it. */
  .section .text.start
  .globl _start
_start:
  lui sp, %hi(__ram_top)  /* the RAM's end (link.ld) */
  addi sp, sp, %lo(__ram_top)
  call boot
  lw a0, 0(zero)
  call run
  j _start
