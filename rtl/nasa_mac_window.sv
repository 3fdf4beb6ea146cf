// The window stepper of nasa_mac_array's depthwise and stem paths: the steps of a block, one per
// tap inside the input of each output pixel in turn, with the tap's input address and weight
// word (docs/fpga.md "The depthwise path and the stem"). Three stages: A walks the output pixels
// (their tap (0, 0)'s row and column, and the address of their first row and column inside the
// input), D finds A's pixel's taps inside the input [lo, hi) and its first tap's addresses in a
// cycle, B holds the pixel being stepped, row by row, each row's taps left to right. D takes A's
// pixel when it is empty or B takes D's; B takes D's at its own last step, so pixels follow each
// other with no gap.
//   Geometry: input H x W (ih_i, iw_i) of C channels (cin_i; the stem 1), rowb_i = W * C bytes,
//   in_i its address; output Wo columns (ow_i), P pixels (pix_i); k x k taps (k_i odd, 1..7),
//   stride 2 (s2_i) or 1, padt_i rows of zeros above (at most 3), (k - 1) / 2 columns left. A
//   block's pixels start over at each block_i; depthwise (dw_i) the next block's input is 8
//   bytes on (its channels), the stem's the same.
//   Timing: run_i's first cycle A's first pixel goes to D, the next to B; valid_o from the cycle
//   after. A step the caller takes (go_i) moves B to the next tap, or at last_o takes D's pixel.
// Part of nasa_mac_array, held by its ctest MacArray.* (byte and cycle exact).
module nasa_mac_window #(
  parameter int unsigned AddrBits = 17
) (
  input  logic                clk_i,
  input  logic                layer_i,   // a layer starts: its first block from in_i
  input  logic                block_i,   // a block ends: the next one starts
  input  logic                run_i,     // the block steps (A, D and B move only then)
  input  logic                go_i,      // the step on the outputs is taken
  input  logic                dw_i,
  input  logic [AddrBits-1:0] in_i,
  input  logic [15:0]         pix_i,
  input  logic [8:0]          cin_i,
  input  logic [7:0]          ih_i,
  input  logic [7:0]          iw_i,
  input  logic [7:0]          ow_i,
  input  logic [2:0]          k_i,
  input  logic                s2_i,
  input  logic [1:0]          padt_i,
  input  logic [15:0]         rowb_i,
  output logic                valid_o,   // B holds a pixel: a step is on the outputs
  output logic                first_o,   // the step is its pixel's first
  output logic                last_o,    // and its last
  output logic [AddrBits-1:0] addr_o,    // its input address (its row: bits 2:0 cleared)
  output logic [5:0]          wa_o       // its weight word, the tap's index ky * k + kx
);
  localparam int unsigned AW = AddrBits;

  logic [AW-1:0] igrp_q;     // in + c0: the input's first pixel, the block's channels
  logic [15:0]   an_q;       // A: pixels that left A
  logic [7:0]    ax_q;       // A: its output column
  logic signed [9:0] aiy_q, aix_q;  // A: its tap (0, 0)'s input row and column
  logic [AW-1:0] ay_q;       // A: the address of input row max(0, its tap (0, 0)'s row), column 0
  logic [AW-1:0] axo_q;      // A: max(0, its tap (0, 0)'s column) x C
  logic          dv_q;       // D holds a pixel
  logic [AW-1:0] daddr_q;    // D: its first tap's input row
  logic [5:0]    dwa_q;      // D: that tap's weight word
  logic [2:0]    dnx_q, dny_q;  // D: its taps across and down, less one
  logic          bv_q;       // B holds a pixel
  logic          bf_q;       // B: its next step is its first
  logic [AW-1:0] baddr_q, brow_q;  // B: the next tap's input row, its tap row's first one's
  logic [5:0]    bwa_q, bwrow_q;   // B: their weight words
  logic [2:0]    bnx_q;      // B: taps across, less one
  logic [2:0]    bx_q, by_q; // B: taps left in the tap row after the next, tap rows left after it
  logic          a_go;       // D takes A's pixel
  logic          b_load;     // B takes D's pixel

  assign valid_o = bv_q;
  assign first_o = bf_q;
  assign last_o  = bx_q == '0 && by_q == '0;
  assign addr_o  = baddr_q;
  assign wa_o    = bwa_q;

  // ---- D: the taps of A's pixel inside the input, its first tap's addresses
  logic [AW-1:0] cb, wc;      // C and W * C bytes
  assign cb = AW'(cin_i);
  assign wc = AW'(rowb_i);
  logic [2:0]  padl;          // (k - 1) / 2
  assign padl = {1'b0, k_i[2:1]};
  logic [2:0]  ky_lo, kx_lo, ky_hi, kx_hi;  // the taps [lo, hi) inside the input
  logic signed [10:0] rows_in, cols_in;    // input rows (columns) from tap 0's on
  always_comb begin
    ky_lo = aiy_q < 0 ? 3'(-aiy_q) : 3'd0;
    kx_lo = aix_q < 0 ? 3'(-aix_q) : 3'd0;
    rows_in = $signed({3'b000, ih_i}) - $signed({aiy_q[9], aiy_q});
    cols_in = $signed({3'b000, iw_i}) - $signed({aix_q[9], aix_q});
    ky_hi = (rows_in < $signed({8'd0, k_i})) ? rows_in[2:0] : k_i;
    kx_hi = (cols_in < $signed({8'd0, k_i})) ? cols_in[2:0] : k_i;
  end
  // its first tap inside the input: input row max(0, iy0), column max(0, ix0); weight word
  // ky_lo * k + kx_lo (ky_lo at most the padding, 3)
  logic [AW-1:0] d_addr;
  logic [5:0]    d_wa, k6;
  assign k6 = 6'(k_i);
  assign d_addr = ay_q + axo_q;
  assign d_wa = (ky_lo[0] ? k6 : 6'd0) + (ky_lo[1] ? {k6[4:0], 1'b0} : 6'd0) + 6'(kx_lo);
  logic [AW-1:0] sc, swc;     // the steps from one output pixel to the next, across and down
  assign sc = s2_i ? {cb[AW-2:0], 1'b0} : cb;
  assign swc = s2_i ? {wc[AW-2:0], 1'b0} : wc;
  // the next pixel's tap (0, 0) row and column (A's, stepped by the stride)
  logic signed [9:0] aiy_n, aix_n;
  assign aiy_n = aiy_q + (s2_i ? 10'sd2 : 10'sd1);
  assign aix_n = aix_q + (s2_i ? 10'sd2 : 10'sd1);
  // the next pixel's row (column) is inside the input: this one's is, or it is -1 and the
  // stride 2 (aiy_n > 0 without the adder's carry chain)
  logic y_in_n, x_in_n;
  assign y_in_n = !aiy_q[9] || (s2_i && &aiy_q);
  assign x_in_n = !aix_q[9] || (s2_i && &aix_q);
  assign b_load = dv_q && (!bv_q || (go_i && last_o));
  assign a_go = (an_q != pix_i) && (!dv_q || b_load);


  always_ff @(posedge clk_i) begin
    // a layer's or block's first pixel
    if (layer_i || block_i) begin
      an_q <= '0;
      dv_q <= 1'b0;
      bv_q <= 1'b0;
      ax_q <= '0;
      aiy_q <= 10'd0 - 10'(padt_i);
      aix_q <= 10'd0 - 10'(padl);
      axo_q <= '0;
    end
    if (layer_i) begin
      igrp_q <= in_i;
      ay_q <= in_i;
    end
    if (block_i && dw_i) begin  // depthwise: the next eight channels; the stem: the same input
      igrp_q <= igrp_q + AW'(8);
      ay_q <= igrp_q + AW'(8);
    end else if (block_i) begin
      ay_q <= igrp_q;
    end
    // A, D and B
    if (run_i && a_go) begin
      an_q <= an_q + 16'd1;
      // (the row or column crosses into the input at 1 when the stride is 2, else at 0)
      if (ax_q == ow_i - 8'd1) begin
        ax_q <= '0;
        aiy_q <= aiy_n;
        aix_q <= 10'd0 - 10'(padl);
        axo_q <= '0;
        if (y_in_n) ay_q <= ay_q + (aiy_q[9] ? wc : swc);
      end else begin
        ax_q <= ax_q + 8'd1;
        aix_q <= aix_n;
        if (x_in_n) axo_q <= axo_q + (aix_q[9] ? cb : sc);
      end
      daddr_q <= d_addr;
      dwa_q <= d_wa;
      dnx_q <= kx_hi - kx_lo - 3'd1;
      dny_q <= ky_hi - ky_lo - 3'd1;
    end
    if (run_i) begin
      if (a_go) dv_q <= 1'b1;
      else if (b_load) dv_q <= 1'b0;
    end
    if (run_i && b_load) begin
      bv_q <= 1'b1;
      bf_q <= 1'b1;
      baddr_q <= daddr_q;
      brow_q <= daddr_q;
      bwa_q <= dwa_q;
      bwrow_q <= dwa_q;
      bnx_q <= dnx_q;
      bx_q <= dnx_q;
      by_q <= dny_q;
    end else if (go_i) begin
      bf_q <= 1'b0;
      if (last_o) begin
        bv_q <= 1'b0;
      end else if (bx_q == '0) begin
        bx_q <= bnx_q;
        by_q <= by_q - 3'd1;
        brow_q <= brow_q + wc;
        baddr_q <= brow_q + wc;
        bwrow_q <= bwrow_q + 6'(k_i);
        bwa_q <= bwrow_q + 6'(k_i);
      end else begin
        bx_q <= bx_q - 3'd1;
        baddr_q <= baddr_q + cb;
        bwa_q <= bwa_q + 6'd1;
      end
    end
  end
endmodule
