// Output-stationary dot products, several output channels at once: the lanes of the board's MAC
// array as docs/fpga.md "An output-stationary array" plans them. Dsps DSPs (nasa_mac8x2: both 8x8
// products of one SB_MAC16) in Dsps / Group groups; each group is one output channel's dot
// product. Each step, DSP d multiplies its own pair of weights w_i[d] with a pair of activations
// shared by the groups (x_i[j] for the j-th DSP of every group: 2 x Group input channels of one
// pixel), and each group adds its 2 x Group products to its accumulator: 2 x Dsps MACs a step.
// A dot product is the steps from one with first_i to one with last_i; its Sums = Dsps / Group
// sums then leave through the drain, one a cycle, group 0 first, while the next dot product
// accumulates.
//   Timing: a step's products reach the accumulators 4 cycles after the step (the DSP's operand
//   and product registers, then each DSP's pair sum); the sums of a last step are on drain_sum_o
//   from 5 to 5 + Sums - 1 cycles after it (drain_valid_o): the drain takes them from the
//   accumulators' registers, a cycle after the last step's products went in. ready_o is clear
//   while a last step would find the drain still busy: two last steps at least Sums cycles apart
//   (dot products of Sums steps or more run back to back).
//   Sums are exact: AccBits must hold steps x 2 x Group x 2^14 (int24: up to 256 input channels).
//   Depthwise mode (DwSums > 0, dw_i held for a whole dot product): each of the first DwSums / 2
//   DSPs' two products goes into its own accumulator (product j = w_i[8j+7:8j] times its
//   activation into sum j): DwSums separate sums, drained as DwSums; last steps then at least
//   DwSums cycles apart. The activations are the DSPs' own, dwx_i[16d+15:16d] (dwx_on_i: eight
//   channels of one pixel), or x_i as in the grouped mode (one byte broadcast: the stem). Sums
//   past the Sums of the grouped mode are DwAccBits wide (k x k <= 49 taps).
// Primitive = 1 instantiates SB_MAC16 (the board), 0 the same pipeline in fabric (nasa_mac8x2).
// ctest DotLanes.* (Group = 1) and DotLanesGrouped.* (Group = 2) hold both, the DSP simulated by
// Yosys's own model, to the exact sums; MacArray.* holds the depthwise mode (DwSums = 8).
module nasa_dot_lanes #(
  parameter bit          Primitive = 1'b0,
  parameter int unsigned Dsps      = 6,
  parameter int unsigned Group     = 1,   // DSPs summed into one output channel's accumulator
  parameter int unsigned AccBits   = 24,
  parameter int unsigned DwSums    = 0,   // depthwise sums (0: no depthwise mode; even, <= 2 Dsps)
  parameter int unsigned DwAccBits = 21   // depthwise sums past Sums: 49 taps x 2^14 (k <= 7)
) (
  input  logic                 clk_i,
  input  logic                 rst_ni,
  input  logic                 valid_i,   // a step (taken when ready_o)
  output logic                 ready_o,
  input  logic                 first_i,   // the step begins a dot product
  input  logic                 last_i,    // the step ends it
  input  logic [16*Dsps-1:0]   w_i,       // DSP d: {w1, w0} in bits [16d+15:16d], int8 each
  input  logic [16*Group-1:0]  x_i,       // the j-th DSP of each group: {x1, x0} in [16j+15:16j]
  input  logic                 dw_i,      // depthwise mode (DwSums > 0)
  input  logic                 dwx_on_i,  // its operands from dwx_i (else x_i: each product's x)
  // depthwise activations: product j's in [8j+7:8j]
  input  logic [8*(DwSums > 0 ? DwSums : 2)-1:0] dwx_i,
  output logic                 drain_valid_o,
  output logic [AccBits-1:0]   drain_sum_o  // two's complement
);
  localparam int unsigned Sums = Dsps / Group;
  localparam int unsigned Chain = (DwSums > Sums) ? DwSums : Sums;  // the drain chain's sums
  localparam int unsigned DwDsps = DwSums / 2;
  localparam int unsigned CW = $clog2(Chain + 1);

  logic take;
  logic [CW-1:0] since_q;  // cycles since the last last step, 1 the cycle after (saturating)
  logic [CW-1:0] nsums;    // the mode's sums
  assign nsums = (DwSums > 0 && dw_i) ? CW'(DwSums) : CW'(Sums);
  assign ready_o = !last_i || (since_q >= nsums);
  assign take = valid_i && ready_o;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) since_q <= CW'(Chain);
    else if (take && last_i) since_q <= CW'(1);
    else if (since_q != CW'(Chain)) since_q <= since_q + 1'b1;
  end

  // the DSPs run every cycle; a step's flags follow its operands down the pipeline. Each DSP's
  // pair sum (int17) goes into its own register; in depthwise mode product g goes into the first
  // register of group g (its others 0) for g < Sums, so those sums add the same registers in both
  // modes, and into a register of its own (e) for the others
  logic [32*Dsps-1:0] p;  // DSP d's products {w1*x1, w0*x0} in bits [32d+31:32d], int16 each
  logic [17*Dsps-1:0] pair_v;
  for (genvar d = 0; d < Dsps; d++) begin : g_mac
    logic [15:0] b;
    logic signed [16:0] pair_q;
    if (d + 1 <= DwDsps) begin : g_dwx
      assign b = dwx_on_i ? dwx_i[16*d+:16] : x_i[16*(d%Group)+:16];
    end else begin : g_x
      assign b = x_i[16*(d%Group)+:16];
    end
    if (d % Group == 0 && d / Group + 1 <= DwSums) begin : g_dw
      // depthwise: product d / Group (DSP d / Group / 2, its half d / Group % 2)
      always_ff @(posedge clk_i) begin
        if (dw_i) pair_q <= 17'($signed(p[16*(d/Group)+:16]));
        else pair_q <= 17'($signed(p[32*d+:16])) + 17'($signed(p[32*d+16+:16]));
      end
    end else if (DwSums > 0) begin : g_pw0
      always_ff @(posedge clk_i) begin
        if (dw_i) pair_q <= '0;
        else pair_q <= 17'($signed(p[32*d+:16])) + 17'($signed(p[32*d+16+:16]));
      end
    end else begin : g_pw
      always_ff @(posedge clk_i) begin
        pair_q <= 17'($signed(p[32*d+:16])) + 17'($signed(p[32*d+16+:16]));
      end
    end
    assign pair_v[17*d+:17] = pair_q;
    nasa_mac8x2 #(.Primitive(Primitive)) u_mac (
      .clk_i,
      .en_i(1'b1),
      .a_hold_i(1'b0),
      .a_i(w_i[16*d+:16]),
      .b_i(b),
      .p_o(p[32*d+:32])
    );
  end
  // depthwise products Sums.. DwSums - 1 go into their accumulators straight from the DSPs'
  // product registers, a cycle before the pair sums go into theirs
  localparam int unsigned EN = (DwSums > Sums) ? DwSums - Sums : 1;
  logic [16*EN-1:0] e_v;
  for (genvar g = 0; g < EN; g++) begin : g_e
    if (Sums + g + 1 <= DwSums) begin : g_on
      assign e_v[16*g+:16] = p[16*(Sums+g)+:16];
    end else begin : g_off
      assign e_v[16*g+:16] = '0;
    end
  end
  if (DwDsps == 0) begin : g_no_dw
    logic unused;
    assign unused = ^{dw_i, dwx_on_i, dwx_i};
  end
  logic [2:0] v_q, f_q, l_q;  // stages: operands, products, pair sums
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      v_q <= '0;
      f_q <= '0;
      l_q <= '0;
    end else begin
      v_q <= {v_q[1:0], take};
      f_q <= {f_q[1:0], take && first_i};
      l_q <= {l_q[1:0], take && last_i};
    end
  end

  // each group's accumulator (depthwise: each product's, those past Sums DwAccBits wide); a last
  // step's sums go into the drain chain from the accumulators' registers, the cycle after they
  // went in (cap_q), while the next dot product's first sums may go in: so each accumulator's
  // adder drives only its register, and the two pack into the same logic cells (on the iCE40 a
  // LUT that also fed the chain would need a cell of its own for the register). The depthwise
  // sums past Sums are a cycle ahead: the chain's part of them (echain) takes them at the last
  // step's pair-sum cycle and holds them through the chain's cap_q.
  logic signed [AccBits-1:0]   acc_q[Sums], acc_d[Sums], chain_q[Sums];
  logic signed [DwAccBits-1:0] eacc_q[EN], eacc_d[EN], echain_q[EN];
  logic [CW-1:0]               left_q;  // sums still in the chain
  logic                        cap_q;   // the chain takes the accumulators
  always_comb begin
    for (int g = 0; g < Sums; g++) begin
      acc_d[g] = f_q[2] ? AccBits'(0) : acc_q[g];
      for (int j = 0; j < Group; j++) begin
        acc_d[g] = acc_d[g] + AccBits'($signed(pair_v[17*((g*Group+j)%Dsps)+:17]));
      end
    end
    for (int g = 0; g < EN; g++) begin
      eacc_d[g] = (f_q[1] ? DwAccBits'(0) : eacc_q[g]) + DwAccBits'($signed(e_v[16*g+:16]));
    end
  end
  always_ff @(posedge clk_i) begin
    for (int g = 0; g < Sums; g++) begin
      if (v_q[2]) acc_q[g] <= acc_d[g];
      if (cap_q) chain_q[g] <= acc_q[g];
      else if (g + 1 < Sums) chain_q[g] <= chain_q[g+1];
      else if (Chain > Sums) chain_q[g] <= AccBits'(echain_q[0]);
    end
    for (int g = 0; g < EN; g++) begin
      if (v_q[1]) eacc_q[g] <= eacc_d[g];
      if (v_q[2] && l_q[2]) echain_q[g] <= eacc_q[g];
      else if (g + 1 < EN && !cap_q) echain_q[g] <= echain_q[g+1];
    end
  end
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      cap_q  <= 1'b0;
      left_q <= '0;
    end else begin
      cap_q <= v_q[2] && l_q[2];
      if (cap_q) left_q <= nsums;
      else if (left_q != '0) left_q <= left_q - 1'b1;
    end
  end
  assign drain_valid_o = left_q != '0;
  assign drain_sum_o   = chain_q[0];
endmodule
