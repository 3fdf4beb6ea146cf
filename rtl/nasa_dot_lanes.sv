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
//   from 4 to 4 + Sums - 1 cycles after it (drain_valid_o). ready_o is clear while a last step
//   would find the drain still busy: two last steps at least Sums cycles apart (dot products of
//   Sums steps or more run back to back).
//   Sums are exact: AccBits must hold steps x 2 x Group x 2^14 (int24: up to 256 input channels).
//   Depthwise mode (DwSums > 0, dw_i held for a whole dot product): the first DwSums / 2 DSPs
//   take their own activations, dwx_i[16d+15:16d], and each of their two products goes into
//   its own accumulator (product j = w_i[8j+7:8j] * dwx_i[8j+7:8j] into sum j): DwSums separate
//   channels of one pixel, drained as DwSums sums; last steps then at least DwSums cycles apart.
// Primitive = 1 instantiates SB_MAC16 (the board), 0 the same pipeline in fabric (nasa_mac8x2).
// ctest DotLanes.* (Group = 1) and DotLanesGrouped.* (Group = 2) hold both, the DSP simulated by
// Yosys's own model, to the exact sums; MacArray.* holds the depthwise mode (DwSums = 8).
module nasa_dot_lanes #(
  parameter bit          Primitive = 1'b0,
  parameter int unsigned Dsps      = 6,
  parameter int unsigned Group     = 1,   // DSPs summed into one output channel's accumulator
  parameter int unsigned AccBits   = 24,
  parameter int unsigned DwSums    = 0    // depthwise sums (0: no depthwise mode; even, <= 2 Dsps)
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
  // depthwise activations: product j's in [8j+7:8j]
  input  logic [8*(DwSums > 0 ? DwSums : 2)-1:0] dwx_i,
  output logic                 drain_valid_o,
  output logic [AccBits-1:0]   drain_sum_o  // two's complement
);
  localparam int unsigned Sums = Dsps / Group;
  localparam int unsigned Chain = (DwSums > Sums) ? DwSums : Sums;  // the drain chain's sums
  localparam int unsigned DwDsps = DwSums / 2;
  localparam int unsigned HiN = (DwDsps > 0) ? DwDsps : 1;
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
  // pair sum (int17), in depthwise mode its low product, with the high one beside it.
  logic [32*Dsps-1:0] p;  // DSP d's products {w1*x1, w0*x0} in bits [32d+31:32d], int16 each
  logic [17*Dsps-1:0] pair_v;
  logic [16*HiN-1:0]  hi_v;
  for (genvar d = 0; d < Dsps; d++) begin : g_mac
    logic [15:0] b;
    logic signed [16:0] pair_q;
    if (d + 1 <= DwDsps) begin : g_dw
      logic [15:0] hi_q;
      assign b = dw_i ? dwx_i[16*d+:16] : x_i[16*(d%Group)+:16];
      always_ff @(posedge clk_i) begin
        if (dw_i) pair_q <= 17'($signed(p[32*d+:16]));
        else pair_q <= 17'($signed(p[32*d+:16])) + 17'($signed(p[32*d+16+:16]));
        hi_q <= p[32*d+16+:16];
      end
      assign hi_v[16*d+:16] = hi_q;
    end else begin : g_pw
      assign b = x_i[16*(d%Group)+:16];
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
  if (DwDsps == 0) begin : g_no_dw
    assign hi_v = '0;
    logic unused;
    assign unused = ^{dw_i, dwx_i};
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

  // each group's accumulator (depthwise: each product's); a last step's sums go into the drain
  // chain
  logic signed [AccBits-1:0] acc_q[Chain], acc_d[Chain], chain_q[Chain];
  logic [CW-1:0]             left_q;  // sums still in the chain
  always_comb begin
    for (int g = 0; g < Chain; g++) begin
      acc_d[g] = f_q[2] ? AccBits'(0) : acc_q[g];
      if (DwSums > 0 && dw_i) begin
        if (g + 1 <= DwSums) begin
          acc_d[g] = acc_d[g] + ((g % 2 == 1) ? AccBits'($signed(hi_v[16*((g/2)%HiN)+:16]))
                                              : AccBits'($signed(pair_v[17*(g/2)+:17])));
        end
      end else if (g < Sums) begin
        for (int j = 0; j < Group; j++) begin
          acc_d[g] = acc_d[g] + AccBits'($signed(pair_v[17*((g*Group+j)%Dsps)+:17]));
        end
      end
    end
  end
  always_ff @(posedge clk_i) begin
    for (int g = 0; g < Chain; g++) begin
      if (v_q[2]) acc_q[g] <= acc_d[g];
      if (v_q[2] && l_q[2]) chain_q[g] <= acc_d[g];
      else if (g + 1 < Chain) chain_q[g] <= chain_q[g+1];
    end
  end
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) left_q <= '0;
    else if (v_q[2] && l_q[2]) left_q <= nsums;
    else if (left_q != '0) left_q <= left_q - 1'b1;
  end
  assign drain_valid_o = left_q != '0;
  assign drain_sum_o   = chain_q[0];
endmodule
