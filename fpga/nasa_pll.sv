// Core clock of the iCEBreaker board: the 12 MHz oscillator on pin 35 multiplied by the UP5K's
// PLL. Pin 35 feeds the PLL through its pad, so only the PAD variant places there. The output is
// Fin * (DIVF + 1) / (2^DIVQ * (DIVR + 1)); defaults: 12 MHz * 64 / 32 = 24 MHz (VCO 768 MHz,
// inside the 533-1066 MHz range; values from `icepll -i 12 -o 24`). locked_o rises once the PLL
// has locked; the board holds its reset until then. Simulation (no PLL primitive): the input
// clock passes through and locked_o is 1, so a simulated cycle is a core clock cycle.
module nasa_pll #(
  parameter logic [3:0] Divr = 4'd0,
  parameter logic [6:0] Divf = 7'd63,
  parameter logic [2:0] Divq = 3'd5,
  parameter logic [2:0] FilterRange = 3'd1
) (
  input  logic pad_clk_i,  // package pin (the oscillator)
  output logic clk_o,      // core clock
  output logic locked_o
);
`ifdef SYNTHESIS
  SB_PLL40_PAD #(
    .FEEDBACK_PATH("SIMPLE"),
    .DIVR         (Divr),
    .DIVF         (Divf),
    .DIVQ         (Divq),
    .FILTER_RANGE (FilterRange)
  ) u_pll (
    .PACKAGEPIN   (pad_clk_i),
    .PLLOUTGLOBAL (clk_o),
    .PLLOUTCORE   (),
    .LOCK         (locked_o),
    .RESETB       (1'b1),
    .BYPASS       (1'b0),
    .EXTFEEDBACK  (1'b0),
    .DYNAMICDELAY (8'd0),
    .LATCHINPUTVALUE(1'b0),
    .SDI          (1'b0),
    .SCLK         (1'b0),
    .SDO          ()
  );
`else
  assign clk_o    = pad_clk_i;
  assign locked_o = 1'b1;
  logic unused_params;
  assign unused_params = ^{Divr, Divf, Divq, FilterRange};
`endif
endmodule
