// Two signed 8x8 products a cycle: one iCE40 SB_MAC16 in its 8x8 mode (both halves), the
// multiplier of the board's MAC array (docs/fpga.md "Toward eight DSPs multiplying"). Yosys does not
// infer this mode: on the board (Primitive = 1) the DSP is instantiated with its operand registers
// (A, B) and its 8x8 product registers, each half's product on its output; Primitive = 0 is the
// same pipeline in plain SystemVerilog (simulation, other targets). ctest MacEightByTwo.* holds the
// two to each other, cycle for cycle, against the primitive's own simulation model (Yosys's
// cells_sim.v), over every pair of int8 operands.
//   p_o[31:16] = a_i[15:8] * b_i[15:8], p_o[15:0] = a_i[7:0] * b_i[7:0] (signed, exact in 16 bits),
//   two enabled cycles after the operands (en_i is the DSP's clock enable: low holds both stages).
//   With a_hold_i the A register keeps its operand (the DSP's AHOLD) while B takes a new one: an
//   operand held in the DSP against a stream of others (nasa_dot8).
module nasa_mac8x2 #(
  parameter bit Primitive = 1'b0
) (
  input  logic        clk_i,
  input  logic        en_i,
  input  logic        a_hold_i,
  input  logic [15:0] a_i,   // {a_hi, a_lo}, int8 each
  input  logic [15:0] b_i,   // {b_hi, b_lo}
  output logic [31:0] p_o    // {a_hi * b_hi, a_lo * b_lo}, int16 each
);
  if (Primitive) begin : g_dsp
    // operands and 8x8 products registered, each half's product on its output
    nasa_sb_mac16 #(
      .ARegs(1'b1), .BRegs(1'b1), .Mult8Regs(1'b1), .Mult16Reg2(1'b0), .OutSel(2'd2),
      .Mode8x8(1'b1), .Signed(1'b1)
    ) u_mac (
      .clk_i(clk_i), .ce_i(en_i), .a_hold_i(a_hold_i), .a_i(a_i), .b_i(b_i), .o_o(p_o)
    );
  end else begin : g_fabric
    logic [15:0] a_q, b_q;
    logic [31:0] p_q;
    always_ff @(posedge clk_i) begin
      if (en_i) begin
        if (!a_hold_i) a_q <= a_i;
        b_q <= b_i;
        p_q <= {16'($signed(a_q[15:8]) * $signed(b_q[15:8])),
                16'($signed(a_q[7:0]) * $signed(b_q[7:0]))};
      end
    end
    assign p_o = p_q;
  end
endmodule
