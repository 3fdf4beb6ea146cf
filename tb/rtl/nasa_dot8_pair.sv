// Test-only (tb/rtlunit_dot8_pair.cpp): rtl/nasa_dot8.sv twice on the same inputs, as the board
// builds it (Primitive = 1: four SB_MAC16, simulated by Yosys's own model of the primitive) and in
// fabric (Primitive = 0).
module nasa_dot8_pair (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        en_i,
  input  logic        load_i,
  input  logic [63:0] a_i,
  input  logic [63:0] b_i,
  output logic        dsp_valid_o,
  output logic        fabric_valid_o,
  output logic [18:0] dsp_sum_o,
  output logic [18:0] fabric_sum_o
);
  nasa_dot8 #(.Primitive(1'b1)) u_dsp (
    .clk_i, .rst_ni, .en_i, .load_i, .a_i, .b_i, .valid_o(dsp_valid_o), .sum_o(dsp_sum_o)
  );
  nasa_dot8 #(.Primitive(1'b0)) u_fabric (
    .clk_i, .rst_ni, .en_i, .load_i, .a_i, .b_i, .valid_o(fabric_valid_o), .sum_o(fabric_sum_o)
  );
endmodule
