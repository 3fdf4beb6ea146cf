// The ports of the accelerator's core, the same for both cores a configuration can have: the
// layer engine with its batch units (nasa_top) and the board's controller (nasa_mcu). One CSR
// bus, one memory port, status. Included in both port lists (docs/engine.md "Ports").
  input  logic               clk_i,
  input  logic               rst_ni,
  // CSR bus
  input  nasa_pkg::csr_req_t csr_req_i,
  output nasa_pkg::csr_rsp_t csr_rsp_o,
  // memory port
  output nasa_pkg::mem_req_t mem_req_o,
  input  nasa_pkg::mem_rsp_t mem_rsp_i,
  // status
  output logic               busy_o,
  output logic               done_o,
  output logic               error_o,
  output logic               layer_end_o  // pulse: a layer of a program or batch run completed
