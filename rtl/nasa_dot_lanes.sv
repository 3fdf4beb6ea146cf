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
// Primitive = 1 instantiates SB_MAC16 (the board), 0 the same pipeline in fabric (nasa_mac8x2).
// ctest DotLanes.* (Group = 1) and DotLanesGrouped.* (Group = 2) hold both, the DSP simulated by
// Yosys's own model, to the exact sums.
module nasa_dot_lanes #(
  parameter bit          Primitive = 1'b0,
  parameter int unsigned Dsps      = 6,
  parameter int unsigned Group     = 1,   // DSPs summed into one output channel's accumulator
  parameter int unsigned AccBits   = 24
) (
  input  logic                 clk_i,
  input  logic                 rst_ni,
  input  logic                 valid_i,   // a step (taken when ready_o)
  output logic                 ready_o,
  input  logic                 first_i,   // the step begins a dot product
  input  logic                 last_i,    // the step ends it
  input  logic [16*Dsps-1:0]   w_i,       // DSP d: {w1, w0} in bits [16d+15:16d], int8 each
  input  logic [16*Group-1:0]  x_i,       // the j-th DSP of each group: {x1, x0} in [16j+15:16j]
  output logic                 drain_valid_o,
  output logic [AccBits-1:0]   drain_sum_o  // two's complement
);
  localparam int unsigned Sums = Dsps / Group;
  localparam int unsigned CW = $clog2(Sums + 1);

  logic take;
  logic [CW-1:0] since_q;  // cycles since the last last step, 1 the cycle after (saturating)
  assign ready_o = !last_i || (since_q == CW'(Sums));
  assign take = valid_i && ready_o;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) since_q <= CW'(Sums);
    else if (take && last_i) since_q <= CW'(1);
    else if (since_q != CW'(Sums)) since_q <= since_q + 1'b1;
  end

  // the DSPs run every cycle; a step's flags follow its operands down the pipeline
  logic [32*Dsps-1:0] p;  // DSP d's products {w1*x1, w0*x0} in bits [32d+31:32d], int16 each
  for (genvar d = 0; d < Dsps; d++) begin : g_mac
    nasa_mac8x2 #(.Primitive(Primitive)) u_mac (
      .clk_i,
      .en_i(1'b1),
      .a_hold_i(1'b0),
      .a_i(w_i[16*d+:16]),
      .b_i(x_i[16*(d%Group)+:16]),
      .p_o(p[32*d+:32])
    );
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

  // each DSP's pair sum (int17), then each group's accumulator; a last step's sums go into the
  // drain chain
  logic signed [16:0]        pair_q[Dsps];
  logic signed [AccBits-1:0] acc_q[Sums], acc_d[Sums], chain_q[Sums];
  logic [CW-1:0]             left_q;  // sums still in the chain
  always_ff @(posedge clk_i) begin
    for (int d = 0; d < Dsps; d++) begin
      pair_q[d] <= 17'($signed(p[32*d+:16])) + 17'($signed(p[32*d+16+:16]));
    end
  end
  always_comb begin
    for (int g = 0; g < Sums; g++) begin
      acc_d[g] = f_q[2] ? AccBits'(0) : acc_q[g];
      for (int j = 0; j < Group; j++) acc_d[g] = acc_d[g] + AccBits'(pair_q[g*Group+j]);
    end
  end
  always_ff @(posedge clk_i) begin
    for (int g = 0; g < Sums; g++) begin
      if (v_q[2]) acc_q[g] <= acc_d[g];
      if (v_q[2] && l_q[2]) chain_q[g] <= acc_d[g];
      else if (g + 1 < Sums) chain_q[g] <= chain_q[g+1];
    end
  end
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) left_q <= '0;
    else if (v_q[2] && l_q[2]) left_q <= CW'(Sums);
    else if (left_q != '0) left_q <= left_q - 1'b1;
  end
  assign drain_valid_o = left_q != '0;
  assign drain_sum_o   = chain_q[0];
endmodule
