// Eight int8 products a cycle, summed: four nasa_mac8x2 (four SB_MAC16 in their 8x8 mode on the
// board) with one operand row held in their A registers and a stream of rows into B. The lane
// group of the board's MAC array for a 1x1 Conv (docs/fpga.md "Toward eight DSPs multiplying"):
// A holds one pixel's 8 input channels, each enabled cycle brings the 8 weights of one output
// channel over those input channels, and the group gives their dot product, one a cycle.
//   load_i with en_i: a_i becomes the held row (and meets this cycle's b_i); without, the held row
//   stays. sum_o = sum over k of int8(a[k]) * int8(b[k]) (int19, exact: at most 8 x 2^14), valid_o
//   3 cycles after the clock edge that takes its operands. Primitive as nasa_mac8x2. ctest
//   DotEight.* holds it, on the DSP's own model and in fabric, to the exact dot products.
module nasa_dot8 #(
  parameter bit Primitive = 1'b0
) (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        en_i,     // a row b_i this cycle
  input  logic        load_i,   // with en_i: take a_i as the held row
  input  logic [63:0] a_i,      // 8 x int8, element k in bits [8k+7:8k]
  input  logic [63:0] b_i,
  output logic        valid_o,
  output logic [18:0] sum_o
);
  // the DSPs run every cycle (their operand and product registers are the pipeline's first two
  // stages); only A's register waits for a load
  logic [127:0] p;  // 8 products, int16 each: product k in bits [16k+15:16k]
  for (genvar d = 0; d < 4; d++) begin : g_mac
    nasa_mac8x2 #(.Primitive(Primitive)) u_mac (
      .clk_i,
      .en_i(1'b1),
      .a_hold_i(!(en_i && load_i)),
      .a_i(a_i[16*d+:16]),
      .b_i(b_i[16*d+:16]),
      .p_o(p[32*d+:32])
    );
  end

  // adder tree: four pair sums (int17) registered, then their sum
  logic signed [16:0] pair_q[4];
  always_ff @(posedge clk_i) begin
    for (int k = 0; k < 4; k++) begin
      pair_q[k] <= 17'($signed(p[32*k+:16])) + 17'($signed(p[32*k+16+:16]));
    end
    sum_o <= 19'(pair_q[0]) + 19'(pair_q[1]) + 19'(pair_q[2]) + 19'(pair_q[3]);
  end

  logic [3:0] v_q;  // en_i of the last four cycles: the operand, product, pair and sum stages
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) v_q <= '0;
    else v_q <= {v_q[2:0], en_i};
  end
  assign valid_o = v_q[3];
endmodule
