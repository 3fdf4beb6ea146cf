// One iCE40 SB_MAC16 with everything the board's DSP users leave unused tied off: no C/D
// operands, no accumulator, adder, carry or output hold, no resets, positive clock edge. What they
// choose: the operand registers (A, B), the product pipeline (the 8x8 products' registers, or the
// 16x16 product's second-stage register), the output select of both halves (2: the 8x8 products,
// 3: the 16x16 product), 8x8 or 16x16 mode and signed or unsigned operands (both alike). Only a
// target with the primitive instantiates it (nasa_mac8x2, nasa_requant_dsp with Primitive = 1);
// their fabric versions stand for it elsewhere.
module nasa_sb_mac16 #(
  parameter bit         ARegs      = 1'b1,
  parameter bit         BRegs      = 1'b1,
  parameter bit         Mult8Regs  = 1'b1,  // the 8x8 products' registers
  parameter bit         Mult16Reg2 = 1'b0,  // the 16x16 product's register
  parameter logic [1:0] OutSel     = 2'd2,
  parameter bit         Mode8x8    = 1'b1,
  parameter bit         Signed     = 1'b1
) (
  input  logic        clk_i,
  input  logic        ce_i,
  input  logic        a_hold_i,  // the A register keeps its operand (with ARegs)
  input  logic [15:0] a_i,
  input  logic [15:0] b_i,
  output logic [31:0] o_o        // {top half, bottom half}
);
  SB_MAC16 #(
    .NEG_TRIGGER(1'b0),
    .C_REG(1'b0),
    .A_REG(ARegs),
    .B_REG(BRegs),
    .D_REG(1'b0),
    .TOP_8x8_MULT_REG(Mult8Regs),
    .BOT_8x8_MULT_REG(Mult8Regs),
    .PIPELINE_16x16_MULT_REG1(1'b0),
    .PIPELINE_16x16_MULT_REG2(Mult16Reg2),
    .TOPOUTPUT_SELECT(OutSel),
    .TOPADDSUB_LOWERINPUT(2'd0),
    .TOPADDSUB_UPPERINPUT(1'b0),
    .TOPADDSUB_CARRYSELECT(2'd0),
    .BOTOUTPUT_SELECT(OutSel),
    .BOTADDSUB_LOWERINPUT(2'd0),
    .BOTADDSUB_UPPERINPUT(1'b0),
    .BOTADDSUB_CARRYSELECT(2'd0),
    .MODE_8x8(Mode8x8),
    .A_SIGNED(Signed),
    .B_SIGNED(Signed)
  ) u_mac (
    .CLK(clk_i), .CE(ce_i),
    .C(16'd0), .A(a_i), .B(b_i), .D(16'd0),
    .AHOLD(a_hold_i), .BHOLD(1'b0), .CHOLD(1'b0), .DHOLD(1'b0),
    .IRSTTOP(1'b0), .IRSTBOT(1'b0), .ORSTTOP(1'b0), .ORSTBOT(1'b0),
    .OLOADTOP(1'b0), .OLOADBOT(1'b0), .ADDSUBTOP(1'b0), .ADDSUBBOT(1'b0),
    .OHOLDTOP(1'b0), .OHOLDBOT(1'b0), .CI(1'b0), .ACCUMCI(1'b0), .SIGNEXTIN(1'b0),
    .O(o_o), .CO(), .ACCUMCO(), .SIGNEXTOUT()
  );
endmodule
