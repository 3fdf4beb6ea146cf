// Test-only (tb/rtlunit_dot_lanes_pair.cpp; with Group = 2 tb/rtlunit_dot_lanes_grouped_pair.cpp,
// tb/CMakeLists.txt NASA_RTLUNIT_VARIANTS): rtl/nasa_dot_lanes.sv twice on the same inputs, as the
// board builds it (Primitive = 1: six SB_MAC16, simulated by Yosys's own model of the primitive)
// and in fabric (Primitive = 0).
module nasa_dot_lanes_pair #(
  parameter int unsigned Group = 1
) (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        valid_i,
  output logic        dsp_ready_o,
  output logic        fabric_ready_o,
  input  logic        first_i,
  input  logic        last_i,
  input  logic [95:0] w_i,
  input  logic [16*Group-1:0] x_i,
  output logic        dsp_valid_o,
  output logic        fabric_valid_o,
  output logic [23:0] dsp_sum_o,
  output logic [23:0] fabric_sum_o
);
  nasa_dot_lanes #(.Primitive(1'b1), .Group(Group)) u_dsp (
    .clk_i, .rst_ni, .valid_i, .ready_o(dsp_ready_o), .first_i, .last_i, .w_i, .x_i,
    .dw_i(1'b0), .dwx_on_i(1'b0), .dwx_i('0),
    .drain_valid_o(dsp_valid_o), .drain_sum_o(dsp_sum_o)
  );
  nasa_dot_lanes #(.Primitive(1'b0), .Group(Group)) u_fabric (
    .clk_i, .rst_ni, .valid_i, .ready_o(fabric_ready_o), .first_i, .last_i, .w_i, .x_i,
    .dw_i(1'b0), .dwx_on_i(1'b0), .dwx_i('0),
    .drain_valid_o(fabric_valid_o), .drain_sum_o(fabric_sum_o)
  );
endmodule
