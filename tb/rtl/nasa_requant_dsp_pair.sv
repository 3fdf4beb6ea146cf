// Test-only (tb/rtlunit_requant_dsp_pair.cpp; with Dual = 1 tb/rtlunit_requant_dsp_dual_pair.cpp,
// tb/CMakeLists.txt NASA_RTLUNIT_VARIANTS): rtl/nasa_requant_dsp.sv twice on the same inputs, as the
// board builds it (Primitive = 1: SB_MAC16, simulated by Yosys's own model of the primitive) and
// in fabric (Primitive = 0).
module nasa_requant_dsp_pair #(
  parameter bit Dual = 1'b0
) (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        valid_i,
  output logic        dsp_ready_o,
  output logic        fabric_ready_o,
  input  logic [31:0] v_i,
  input  logic [15:0] m_i,
  input  logic [5:0]  s_i,
  input  logic [7:0]  lo_i,
  input  logic [7:0]  hi_i,
  output logic        dsp_valid_o,
  output logic        fabric_valid_o,
  output logic [7:0]  dsp_y_o,
  output logic [7:0]  fabric_y_o
);
  nasa_requant_dsp #(.Primitive(1'b1), .Dual(Dual)) u_dsp (
    .clk_i, .rst_ni, .valid_i, .ready_o(dsp_ready_o), .v_i, .m_i, .s_i, .lo_i, .hi_i,
    .valid_o(dsp_valid_o), .y_o(dsp_y_o), .wide_valid_o(), .wide_o()
  );
  nasa_requant_dsp #(.Primitive(1'b0), .Dual(Dual)) u_fabric (
    .clk_i, .rst_ni, .valid_i, .ready_o(fabric_ready_o), .v_i, .m_i, .s_i, .lo_i, .hi_i,
    .valid_o(fabric_valid_o), .y_o(fabric_y_o), .wide_valid_o(), .wide_o()
  );
endmodule
