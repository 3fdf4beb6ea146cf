// Requantization through DSPs: y = clamp(sat8((v * M + 2^(S-1)) >>> S)) as nasa_requant (and
// the reference model's requant_wide), with the 32 x 16-bit product taken by iCE40 SB_MAC16s in
// their 16x16 mode instead of a fabric multiplier: the requantization of the board's MAC array
// (docs/fpga.md "Toward eight DSPs multiplying"), where a fabric requant lane does not fit.
//
// v (int32, the bias already added) is split into halves, both taken as unsigned 16-bit numbers,
// so the DSP runs one fixed unsigned mode: v * M = (v_hi * M << 16) + v_lo * M - (M << 32 if v is
// negative). With Dual = 0 one DSP takes the two products on consecutive cycles: the unit takes an
// input every other cycle (ready_o) and gives its result 5 cycles after taking it. With Dual = 1
// two DSPs take them in the same cycle: an input every cycle (ready_o always set), the result 4
// cycles after taking it (the shift by S has its own stage, the rounding and clamps the next:
// together they were the board's longest path, 52 ns). valid_o marks a result for one cycle.
// Primitive = 1 instantiates SB_MAC16 (the board); Primitive = 0 is the same pipeline with the
// products in plain SystemVerilog (simulation, other targets). ctest RequantDsp.* (Dual = 0) and
// RequantDspDual.* hold both, the DSP simulated by Yosys's own model (cells_sim.v), to the
// reference model's requantization. HeldBounds = 1: lo_i and hi_i are held from an input until
// its result (a layer's constants, as in nasa_mac_array), so the last stage takes them from the
// ports instead of a copy carried down the pipeline (32 flip-flops fewer, each a logic cell).
module nasa_requant_dsp #(
  parameter bit Primitive  = 1'b0,
  parameter bit Dual       = 1'b0,
  parameter bit HeldBounds = 1'b0
) (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        valid_i,   // taken when ready_o
  output logic        ready_o,
  input  logic [31:0] v_i,       // int32
  input  logic [15:0] m_i,       // unsigned
  input  logic [5:0]  s_i,       // 1..47 (validated upstream, as nasa_requant's S)
  input  logic [7:0]  lo_i,      // clamp interval, int8: [-128, 127] none, [0, 127] ReLU,
  input  logic [7:0]  hi_i,      //   [0, q6] ReLU6
  output logic        valid_o,
  output logic [7:0]  y_o,
  // the shifted product before its rounding, (v * M) >> (S - 1) (floor), its low 24 bits, a cycle
  // ahead of y_o (wide_valid_o): the rounded value without the clamp is (wide_o >>> 1) +
  // wide_o[0], exact for |v * M| < 2^23 (nasa_mac_array's residual terms, an int8 v)
  output logic        wide_valid_o,
  output logic [23:0] wide_o
);
  // stage 0: the input, held while its products are formed
  logic        ph;  // stage 0 holds an input (Dual = 0: the low half is in the DSP this cycle, the
                    // high half the next, when ph is clear)
  logic [31:0] v0;
  logic [15:0] m0;
  logic [5:0]  s0;
  logic [7:0]  lo0, hi0;
  assign ready_o = Dual || !ph;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) ph <= 1'b0;
    else ph <= valid_i && ready_o;
  end
  always_ff @(posedge clk_i) begin
    if (valid_i && ready_o) begin
      v0 <= v_i;
      m0 <= m_i;
      s0 <= s_i;
      lo0 <= lo_i;
      hi0 <= hi_i;
    end
  end

  // the DSPs: an unsigned 16 x 16 product a cycle each, registered (a cycle behind its operands)
  logic [15:0] a[2];  // Dual: the low half into DSP 0, the high half into DSP 1
  logic [31:0] p[2];
  assign a[0] = (Dual || ph) ? v0[15:0] : v0[31:16];
  assign a[1] = v0[31:16];
  for (genvar d = 0; d < (Dual ? 2 : 1); d++) begin : g_mul
    if (Primitive) begin : g_dsp
      // unsigned 16x16, no operand registers, the 32-bit product registered, both halves out
      nasa_sb_mac16 #(
        .ARegs(1'b0), .BRegs(1'b0), .Mult8Regs(1'b0), .Mult16Reg2(1'b1), .OutSel(2'd3),
        .Mode8x8(1'b0), .Signed(1'b0)
      ) u_mul (
        .clk_i(clk_i), .ce_i(1'b1), .a_hold_i(1'b0), .a_i(a[d]), .b_i(m0), .o_o(p[d])
      );
    end else begin : g_fabric
      always_ff @(posedge clk_i) p[d] <= 32'(a[d]) * 32'(m0);
    end
  end
  if (!Dual) begin : g_single
    assign p[1] = '0;
    logic unused_a;
    assign unused_a = ^a[1];
  end

  // stage 1: the operands' parameters (and, Dual = 0, the low product); the exact 49-bit product
  // in t2 the cycle after both products are at hand (pv); then shifted (sh), then rounded and
  // clamped
  logic               v1, v2, v3, v4;
  logic               pv;
  logic [31:0]        plo1;
  logic [15:0]        m1;
  logic               neg1;
  logic [5:0]         s1, s2;  // s2: S - 1
  logic [7:0]         lo1, hi1, lo2, hi2, lo3, hi3;
  logic signed [48:0] t2, sh;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      v1 <= 1'b0;
      v2 <= 1'b0;
      v3 <= 1'b0;
      v4 <= 1'b0;
      valid_o <= 1'b0;
    end else begin
      v1 <= ph;  // the products of stage 1's input are in p (Dual = 0: the low one)
      v2 <= v1;  // Dual = 0: the high product is in p
      v3 <= pv;  // the exact product is in t2
      v4 <= v3;  // it is shifted, in sh
      valid_o <= v4;
    end
  end
  assign pv = Dual ? v1 : v2;
  always_ff @(posedge clk_i) begin
    if (ph) begin
      m1 <= m0;
      neg1 <= v0[31];
      s1 <= s0;
      lo1 <= lo0;
      hi1 <= hi0;
    end
    if (v1) plo1 <= p[0];
  end
  // Both products at hand: the exact product. Its low 16 bits are the low product's; a negative
  // v's high half is v_hi - 2^16 as a signed number, so M << 16 less.
  logic [31:0] plo, phi;
  logic [32:0] top;
  assign plo = Dual ? p[0] : plo1;
  assign phi = Dual ? p[1] : p[0];
  assign top = {1'b0, phi} + {17'd0, plo[31:16]} - (neg1 ? {1'b0, m1, 16'd0} : 33'd0);
  always_ff @(posedge clk_i) begin
    if (pv) begin
      t2 <= {top, plo[15:0]};
      s2 <= s1 - 6'd1;
      lo2 <= lo1;
      hi2 <= hi1;
    end
  end
  // Rounding without a wide adder: (x + 2^(S-1)) >> S = ((x >> (S-1)) + 1) >> 1 (floor shifts).
  // Only ten bits of x >> (S-1) matter when it lies in [-512, 511]; beyond, the result saturates
  // by its sign.
  logic        fits;
  logic [10:0] r;  // ((x >> (S-1)) + 1) >> 1, of the low ten bits, one bit wider
  always_ff @(posedge clk_i) begin
    if (v3) begin
      sh <= t2 >>> s2;
      lo3 <= lo2;
      hi3 <= hi2;
    end
  end
  logic [7:0] lo_l, hi_l;  // the bounds of the result being made
  assign lo_l = HeldBounds ? lo_i : lo3;
  assign hi_l = HeldBounds ? hi_i : hi3;
  assign fits = (sh[48:9] == {40{sh[48]}});
  assign wide_valid_o = v4;
  assign wide_o = sh[23:0];
  assign r    = 11'(($signed({sh[9], sh[9:0]}) + 11'sd1) >>> 1);
  always_ff @(posedge clk_i) begin
    if (v4) begin
      if (!fits) y_o <= sh[48] ? lo_l : hi_l;
      else if ($signed(r) < 11'($signed(lo_l))) y_o <= lo_l;
      else if ($signed(r) > 11'($signed(hi_l))) y_o <= hi_l;
      else y_o <= r[7:0];
    end
  end
endmodule
