// Test-only (tb/rtlunit_mac8x2_pair.cpp): rtl/nasa_mac8x2.sv twice on the same operands, as the
// board builds it (Primitive = 1: SB_MAC16, simulated by Yosys's own model of the primitive) and in
// fabric (Primitive = 0).
module nasa_mac8x2_pair (
  input  logic        clk_i,
  input  logic        en_i,
  input  logic        a_hold_i,
  input  logic [15:0] a_i,
  input  logic [15:0] b_i,
  output logic [31:0] dsp_o,
  output logic [31:0] fabric_o
);
  nasa_mac8x2 #(.Primitive(1'b1)) u_dsp (
    .clk_i, .en_i, .a_hold_i, .a_i, .b_i, .p_o(dsp_o)
  );
  nasa_mac8x2 #(.Primitive(1'b0)) u_fabric (
    .clk_i, .en_i, .a_hold_i, .a_i, .b_i, .p_o(fabric_o)
  );
endmodule
