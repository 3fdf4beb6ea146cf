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
    SB_MAC16 #(
      .NEG_TRIGGER(1'b0),
      .C_REG(1'b0),
      .A_REG(1'b1),
      .B_REG(1'b1),
      .D_REG(1'b0),
      .TOP_8x8_MULT_REG(1'b1),
      .BOT_8x8_MULT_REG(1'b1),
      .PIPELINE_16x16_MULT_REG1(1'b0),
      .PIPELINE_16x16_MULT_REG2(1'b0),
      .TOPOUTPUT_SELECT(2'd2),       // the top 8x8 product (its register)
      .TOPADDSUB_LOWERINPUT(2'd0),
      .TOPADDSUB_UPPERINPUT(1'b0),
      .TOPADDSUB_CARRYSELECT(2'd0),
      .BOTOUTPUT_SELECT(2'd2),       // the bottom 8x8 product (its register)
      .BOTADDSUB_LOWERINPUT(2'd0),
      .BOTADDSUB_UPPERINPUT(1'b0),
      .BOTADDSUB_CARRYSELECT(2'd0),
      .MODE_8x8(1'b1),
      .A_SIGNED(1'b1),
      .B_SIGNED(1'b1)
    ) u_mac (
      .CLK(clk_i), .CE(en_i),
      .C(16'd0), .A(a_i), .B(b_i), .D(16'd0),
      .AHOLD(a_hold_i), .BHOLD(1'b0), .CHOLD(1'b0), .DHOLD(1'b0),
      .IRSTTOP(1'b0), .IRSTBOT(1'b0), .ORSTTOP(1'b0), .ORSTBOT(1'b0),
      .OLOADTOP(1'b0), .OLOADBOT(1'b0), .ADDSUBTOP(1'b0), .ADDSUBBOT(1'b0),
      .OHOLDTOP(1'b0), .OHOLDBOT(1'b0), .CI(1'b0), .ACCUMCI(1'b0), .SIGNEXTIN(1'b0),
      .O(p_o), .CO(), .ACCUMCO(), .SIGNEXTOUT()
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
