// The ports of the board's controller cores (nasa_mcu_cpu, nasa_mcu_cpu_serial): the ROM port
// (instructions and ROM data loads), the data bus, the trap. Included in both port lists.
  input  logic             clk_i,
  input  logic             rst_ni,
  input  logic             restart_i,   // start again from the reset PC (after a trap)
  // instruction / ROM data port: address in, word out the next cycle
  output logic [RomAW-1:0] rom_addr_o,
  input  logic [31:0]      rom_data_i,
  // data bus: the request is held until bus_done_i (stores: accepted; loads: data valid)
  output logic             bus_req_o,
  output logic             bus_we_o,
  output logic [31:0]      bus_addr_o,   // word aligned
  output logic [31:0]      bus_wdata_o,
  output logic [3:0]       bus_wstrb_o,
  output logic             bus_rom_o,    // the access is a ROM data read (through rom_addr_o)
  input  logic             bus_done_i,
  input  logic [31:0]      bus_rdata_i,
  output logic             trap_o,
  output logic [31:0]      trap_pc_o,
  output logic             retire_o      // pulse: an instruction completed (for traces, tests)
