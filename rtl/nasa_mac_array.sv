// The board's MAC array (nasa_mcu's unit with Array = 1, docs/fpga.md "An output-stationary
// array"): a whole 1x1 convolution (Conv k = 1, stride 1), a whole depthwise convolution (dw_i), a
// whole stem (Conv of one input channel, st_i) or a residual add (ad_i), HWC int8 with the
// reference model's numerics, from main memory to main memory, on nasa_dot_lanes (six DSPs in
// pairs, 12 MACs a step; depthwise and the stem four of them, 8 MACs a step) and
// nasa_requant_dsp (two DSPs, an output a cycle).
//   1x1 convolution: for each block of up to three output channels co0..co0+2:
//   1. their weights (three rows of C bytes, contiguous in memory) go into three weight RAMs,
//      one per channel, 4 bytes a step (two EBRs each on the iCE40): two cycles a memory row;
//   2. their per-channel records (bias, M, S: one 8-byte row each) into EBRs;
//   3. every pixel: C / 4 steps, each the pixel's next four activations (half a memory row: a
//      row read every other step) against the three channels' four weights; the three sums,
//      with their biases, requantized and clamped; the pixel's output bytes written together
//      (one byte-strobed write, two where they straddle memory rows).
//   Constraints the caller checks: C a multiple of 8 (8..256), in_i, wgt_i and prm_i 8-aligned,
//   P >= 1, 1 <= K <= 256 (a last block of fewer channels writes only those).
//   Depthwise convolution (dw_i), k x k (k odd, 1..7), stride 1 or 2, C channels, taps outside
//   the input skipped (they add zero), eight channels c0..c0+7 at a time:
//   1. their weights, a memory row a tap (wgt + t * C + c0), into weight RAMs 0 and 1, a row a
//      cycle; their eight records into the records' EBRs;
//   2. every output pixel: a step per tap inside the input, the tap's input row (the pixel's
//      eight channels) against the tap's eight weights, a product per channel into its own sum;
//      the eight sums requantized and written as above. The next pixel's taps are found while a
//      pixel steps (stages: the pixel, its tap bounds and addresses, the stepping).
//   The stem (st_i): a k x k Conv of one input channel, stride 1 or 2, on the depthwise datapath,
//   eight output channels co0..co0+7 at a time: their weights tap-major (wgt_i: for each block of
//   eight channels, k x k rows of their eight weights, zeros past K; not the reference's OHWI);
//   a step per tap inside the input, the tap's one input byte against the eight weights.
//   Geometry (both): input H x W (ih_i, iw_i), output P = Ho x Wo pixels (pix_i, ow_i), k (k_i),
//   stride (s2_i), rows of zeros above the input (padt_i: (k - 1) / 2, or a row band's own),
//   (k - 1) / 2 columns of zeros left of it; rowb_i = W * C; in_i the input's address.
//   Constraints the caller checks: depthwise C a multiple of 8 (8..256), cout_i = C, in_i
//   8-aligned; the stem C = 1, 1 <= K <= 256; wgt_i and prm_i 8-aligned, every output pixel with a
//   tap inside the input (as the reference's validation), P >= 1.
//   The residual add (ad_i): out[i] = clamp(requant(a[i], M, S) + requant(b[i], Mb, Sb)) over P
//   bytes (pix_i), a at in_i (it may be out_i: a Conv's folded residual), b at wgt_i, (M, S) and
//   (Mb, Sb) the two records at prm_i, the clamp lo_i..hi_i: the reference's Add. A read a cycle,
//   a's row and b's row of each byte in turn, each byte requantized without the clamp
//   (nasa_requant_dsp's wide output), the two terms added and clamped, a row written when its
//   last byte is out: about 2.1 cycles a byte. Constraints the caller checks: P >= 1, cout_i = 1,
//   in_i, wgt_i and out_i 8-aligned, lo_i -128 or 0, hi_i in 0..127 (as activations give them).
// Memory port: one request a cycle, a read's data the cycle after it is taken. Reads may wait
// (req_ready_i); writes must be taken when presented (the array owns the port while it runs:
// the caller gives it priority), else err_o latches. A record whose S (byte 6) is outside
// [1, MaxShift] latches bad_o: the layer stops when its block's records are in, the blocks before
// it written (the reference's BadQuant; the engine's too stops at the tile that finds it).
// Primitive as nasa_mac8x2 (the DSPs). ctest MacArray.* holds it to the reference model's Conv
// and DwConv and, with a memory that takes every request, to its schedule's cycles.
module nasa_mac_array #(
  parameter bit          Primitive = 1'b0,
  parameter int unsigned AddrBits  = 17
) (
  input  logic                clk_i,
  input  logic                rst_ni,
  input  logic                start_i,   // pulse: run the layer below (held while busy_o)
  input  logic [AddrBits-1:0] in_i,
  input  logic [AddrBits-1:0] wgt_i,     // wgt_i, out_i, prm_i: loaded into the layer's counters
  input  logic [AddrBits-1:0] out_i,     // by ldw_i, ldo_i, ldp_i (before start_i, not while
  input  logic [AddrBits-1:0] prm_i,     // busy_o; they advance during a run)
  input  logic                ldw_i, ldo_i, ldp_i,
  input  logic [15:0]         pix_i,     // P: pixels
  input  logic [8:0]          cin_i,     // C
  input  logic [8:0]          cout_i,    // K
  input  logic                dw_i,      // depthwise (held while busy_o)
  input  logic                st_i,      // the stem (held while busy_o; not with dw_i)
  input  logic                ad_i,      // a residual add (held while busy_o; not with dw_i,
                                         // st_i): a at in_i, b at wgt_i
  input  logic [7:0]          ih_i,      // the window paths' geometry (above)
  input  logic [7:0]          iw_i,
  input  logic [7:0]          ow_i,
  input  logic [2:0]          k_i,
  input  logic                s2_i,
  input  logic [1:0]          padt_i,
  input  logic [15:0]         rowb_i,
  input  logic [7:0]          lo_i,      // clamp interval, int8 (the activation)
  input  logic [7:0]          hi_i,
  output logic                busy_o,
  output logic                err_o,     // a write was not taken (latched until start_i)
  output logic                bad_o,     // a record's shift outside [1, MaxShift]: the layer
                                         // stopped after its block's records (until start_i)
  output logic                req_valid_o,
  input  logic                req_ready_i,
  output logic                req_we_o,
  output logic [AddrBits-1:0] req_addr_o,  // row aligned (bits 2:0 zero)
  output logic [63:0]         req_wdata_o,
  output logic [7:0]          req_wstrb_o,
  input  logic                rsp_valid_i,
  input  logic [63:0]         rsp_rdata_i
);
  localparam int unsigned AW = AddrBits;
  localparam int unsigned Sums = 3;    // output channels a block
  localparam int unsigned DwSums = 8;  // depthwise and the stem: channels a block
  typedef enum logic [2:0] {SIdle, SWgt, SPrm, SRun, SFlush} state_e;
  state_e st_q;

  // ---- the layer and the block
  logic [8:0]  left_q;      // K - co0: channels left from the block's first one
  logic        win;         // the window stepper's modes: depthwise, the stem (registered at
                            // the start: the mode's inputs are held while busy_o)
  always_ff @(posedge clk_i) if (st_q == SIdle && start_i) win <= dw_i || st_i;
  logic [3:0]  kb_q;        // its channels: min(3, K - co0) (stem min(8, ..), depthwise 8), set
                            // as the block starts
  function automatic logic [3:0] block_k(logic dw, logic st, logic ad, logic [8:0] left);
    if (ad) block_k = 4'd2;
    else if (dw) block_k = 4'd8;
    else if (st) block_k = (left >= 9'd8) ? 4'd8 : {1'b0, left[2:0]};
    else block_k = (left >= 9'd3) ? 4'd3 : {2'b00, left[1:0]};
  endfunction
  logic [2:0]  nsum_m1;     // the sums a pixel drains, less one
  assign nsum_m1 = win ? 3'(DwSums - 1) : ad_i ? 3'd0 : 3'(Sums - 1);
  logic [5:0]  nsteps_m1;   // C / 4 - 1
  assign nsteps_m1 = 6'(cin_i[8:2] - 7'd1);

  // ---- read tags: what the read taken last cycle was for (its data arrive this cycle)
  typedef enum logic [1:0] {TNone, TWgt, TPrm, TAct} tag_e;
  tag_e tag_q;
  logic [2:0] ptag_q;  // a parameter read's channel

  // ---- weights: three RAMs (channel g of the block), word s = the channel's weights of input
  // channels 4s..4s+3; depthwise and stem, word t of RAMs 0 and 1 = tap t's weights of channels
  // c0..c0+3 and c0+4..c0+7
  // (no read ever meets a write to its word: the RAMs are written before a block runs)
  (* no_rw_check *) logic [31:0] wmem0_q [64];
  (* no_rw_check *) logic [31:0] wmem1_q [64];
  (* no_rw_check *) logic [31:0] wmem2_q [64];
  // (written as the data arrive: a pointwise weight row is read twice, its low half written as
  // the first read's data arrive and its high half as the second's; depthwise and stem the whole
  // row at once)
  logic [5:0]  wwa;          // write address
  logic [31:0] wwd, wwd1;     // RAMs 0 and 2, RAM 1
  logic [2:0]  wwe;          // per RAM
  logic [5:0]  wra;          // read address (the step's)
  logic [31:0] wrd0, wrd1, wrd2;  // (the EBRs' read registers)
  always_ff @(posedge clk_i) begin
    if (wwe[0]) wmem0_q[wwa] <= wwd;
    wrd0 <= wmem0_q[wra];
  end
  always_ff @(posedge clk_i) begin
    if (wwe[1]) wmem1_q[wwa] <= wwd1;
    wrd1 <= wmem1_q[wra];
  end
  always_ff @(posedge clk_i) begin
    if (wwe[2]) wmem2_q[wwa] <= wwd;
    wrd2 <= wmem2_q[wra];
  end

  // weight load: rows of the block's channels in order, a read a cycle; a pointwise row is read
  // twice, for its low half and its high half (the port is free, and a register holding the
  // high half for a second write cycle would be 32 logic cells of their own)
  logic [AW-1:0] wp_q;       // the next weight row (runs through the whole layer)
  logic [AW-1:0] wgrp_q;     // depthwise: the block's first tap row, wgt + c0
  logic [1:0]    lg_q;       // the loading channel
  logic [5:0]    lr_q;       // its row (window paths: the tap)
  logic          half_q;     // pointwise: the next read is the row's second, for its high half
  logic          wdone_q;    // every row of the block asked for
  logic [1:0]    hg_q;       // the arriving row's channel, row and half
  logic [5:0]    hr_q;
  logic          hh_q;
  logic [5:0]    ksq_m1;     // window paths: k * k - 1
  always_comb begin
    unique case (k_i)
      3'd3: ksq_m1 = 6'd8;
      3'd5: ksq_m1 = 6'd24;
      3'd7: ksq_m1 = 6'd48;
      default: ksq_m1 = 6'd0;
    endcase
  end
  logic [5:0]    wrows_m1;   // the rows a channel loads, less one
  assign wrows_m1 = win ? ksq_m1 : 6'(cin_i[8:3] - 6'd1);
  // the RAMs' write port
  always_comb begin
    wwe = '0;
    wwa = {hr_q[4:0], hh_q};
    wwd = hh_q ? rsp_rdata_i[63:32] : rsp_rdata_i[31:0];
    wwd1 = wwd;
    if (tag_q == TWgt && win) begin
      wwa = hr_q;
      wwd = rsp_rdata_i[31:0];
      wwd1 = rsp_rdata_i[63:32];
      wwe = 3'b011;
    end else if (tag_q == TWgt) begin
      wwe = 3'b001 << hg_q;
    end
  end

  // ---- per-channel records of the block, in drain order, in EBRs: the biases (read a cycle
  // ahead of the drain, for the sum it drains next), M and S (read straight into the
  // requantization's input register). no_rw_check: a record is written only before a block's
  // sums are drained (assertions below hold it)
  (* no_rw_check *) logic [31:0] bias_q [DwSums];
  logic [31:0] bias_rd;
  (* no_rw_check *) logic [21:0] ms_q [DwSums];  // {S, M}
  logic [21:0] ms_rd;
  logic [AW-1:0] pp_q;       // the next record (runs through the layer)
  logic [3:0]    pg_q;       // records asked for
  logic [3:0]    pgot_q;     // records arrived
  logic          bad_shift;  // the arriving record's S (byte 6) is outside [1, MaxShift]
  assign bad_shift = rsp_rdata_i[55:48] == 8'd0 || rsp_rdata_i[55:48] > 8'(nasa_pkg::MaxShift);

  // ---- the stepper: S0 chooses the step (and asks for its activation row), S1 gives it to the
  // lanes with the weights read in S0
  logic [15:0]   p_q;        // pixel
  logic [5:0]    s_q0;       // step
  logic [AW-1:0] ap_q;       // the next activation row (the input is contiguous)
  logic [AW-1:0] ob_q;       // out + co0 (the block's first pixel)
  logic [2:0]    gap_q;      // cycles since the last last step (to 7): a last step leaves S0 at
                             // 2 (the lanes' drain: 3 cycles), depthwise at 7 (8 cycles)
  logic          gap_ok;
  assign gap_ok = gap_q >= (win ? 3'd7 : 3'd2);
  logic          v1_q, f1_q, l1_q, odd1_q;
  logic [31:0]   xhi_q;      // the upper half of the row of the last even step
  logic          s0_go;      // a step leaves S0 this cycle
  logic          s0_read;    // it needs its row
  logic          run_done_q; // every step issued
  logic          wr_now;     // the row buffer's write takes the port this cycle

  // ---- the window stepper (nasa_mac_window): the depthwise and stem steps, each a tap inside
  // the input of the output pixel it holds
  logic          w_valid;    // it holds a pixel
  logic          w_first, w_last;  // its next step is the pixel's first, last
  logic [AW-1:0] w_addr;     // that step's input address
  logic [5:0]    w_wa;       // its weight word
  logic [2:0]    xsel_q;     // the stem: the step's byte in its row

  // ---- the residual add (ad_i): byte i of a (from in_i) and of b (from wgt_i), their rows read
  // in turn, each byte requantized with its record (a's M and S, then b's) into a term without
  // the clamp; the two terms added and clamped
  logic [2:0]    bj_q;       // the byte in them
  logic          aph_q;      // the next read is b's
  logic          adb_q;      // the data arriving are b's
  logic [AW-1:0] ad_addr;
  assign ad_addr = aph_q ? wp_q : ap_q;  // (b's row in the weight pointer, a's: both 8-aligned)

  // ---- the port: an output write first, then the loaders' and the stepper's reads
  logic          rd_want;
  logic [AW-1:0] rd_addr;
  tag_e          rd_tag;
  always_comb begin
    rd_want = 1'b0;
    rd_addr = '0;
    rd_tag  = TNone;
    unique case (st_q)
      SWgt: begin
        rd_want = !wdone_q;
        rd_addr = wp_q;
        rd_tag  = TWgt;
      end
      SPrm: begin
        rd_want = pg_q != kb_q;
        rd_addr = pp_q;
        rd_tag  = TPrm;
      end
      SRun: begin
        rd_want = ad_i ? !run_done_q : s0_read;
        rd_addr = ad_i ? ad_addr : win ? {w_addr[AW-1:3], 3'b000} : ap_q;
        rd_tag  = TAct;
      end
      default: ;
    endcase
  end

  // ---- lanes and output
  logic          ln_ready, dr_valid;
  logic [23:0]   dr_sum;
  nasa_dot_lanes #(
    .Primitive(Primitive), .Dsps(6), .Group(2), .AccBits(24), .DwSums(DwSums)
  ) u_lanes (
    .clk_i,
    .rst_ni,
    .valid_i(v1_q),
    .ready_o(ln_ready),
    .first_i(f1_q),
    .last_i(l1_q),
    .w_i({wrd2, wrd1, wrd0}),
    // (the stem: the step's byte to every product, through x_i)
    .x_i(odd1_q ? xhi_q : st_i ? {4{rsp_rdata_i[8*xsel_q+:8]}} : rsp_rdata_i[31:0]),
    .dw_i(win),
    .dwx_on_i(dw_i),
    .dwx_i(rsp_rdata_i),
    .drain_valid_o(dr_valid),
    .drain_sum_o(dr_sum)
  );

  // the drain's k-th sum of a pixel with its channel's bias, then requantized
  logic [2:0]  dk_q;      // drain position
  logic [2:0]  dk_d;      // the next cycle's
  logic [2:0]  rq_k_q;
  assign dk_d = !dr_valid ? dk_q : (dk_q == nsum_m1) ? 3'd0 : dk_q + 3'd1;
  logic        rqv_q;
  logic [31:0] rqval_q;
  logic        ad_in;     // an add operand's byte arrives
  logic [7:0]  ad_byte;
  assign ad_in = ad_i && tag_q == TAct;
  assign ad_byte = rsp_rdata_i[8*xsel_q+:8];
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      dk_q <= '0;
      rqv_q <= 1'b0;
    end else begin
      rqv_q <= dr_valid || ad_in;
      dk_q <= dk_d;
    end
  end
  always_ff @(posedge clk_i) begin
    if (dr_valid) begin
      rqval_q <= {{8{dr_sum[23]}}, dr_sum} + bias_rd;
      rq_k_q <= dk_q;
    end else if (ad_in) begin
      rqval_q <= {{24{ad_byte[7]}}, ad_byte};
      rq_k_q <= {2'b00, adb_q};
    end
  end
  logic       rq_valid, y_valid;
  logic [7:0] rq_y, y;
  logic       unused_rq_ready;
  logic       rq_wv;       // the residual add's term (below)
  logic [23:0] rq_wide;
  assign ms_rd = ms_q[rq_k_q];
  always_ff @(posedge clk_i) begin
    if (tag_q == TPrm) bias_q[ptag_q] <= rsp_rdata_i[31:0];
    bias_rd <= bias_q[dk_d];
  end
  nasa_requant_dsp #(.Primitive(Primitive), .Dual(1'b1), .HeldBounds(1'b1)) u_rq (
    .clk_i,
    .rst_ni,
    .valid_i(rqv_q),
    .ready_o(unused_rq_ready),
    .v_i(rqval_q),
    .m_i(ms_rd[15:0]),
    .s_i(ms_rd[21:16]),
    .lo_i,
    .hi_i,
    .valid_o(rq_valid),
    .y_o(rq_y),
    .wide_valid_o(rq_wv),
    .wide_o(rq_wide)
  );
  // the add's terms: a's held (in xhi_q, idle in this mode: its flip-flops then take their input
  // through a LUT instead of a logic cell each of their own), b's added to it, (x >> (S - 1) +
  // 1) >> 1 each, exact for an int8 operand; the sum clamped as the requantization clamps
  logic [23:0] tsum;
  logic        tph_q;     // the next term is b's
  logic        tfits;
  logic [7:0]  tclamp;
  assign tsum = (tph_q ? xhi_q[23:0] : 24'd0) + {rq_wide[23], rq_wide[23:1]} + 24'(rq_wide[0]);
  assign tfits = tsum[23:7] == {17{tsum[23]}};
  // (lo_i is -128 or 0, hi_i in 0..127: the activations' bounds)
  logic        tlow, thigh;
  assign tlow  = tfits ? (tsum[7] && !lo_i[7]) : tsum[23];
  assign thigh = tfits ? (!tsum[7] && tsum[6:0] > hi_i[6:0]) : !tsum[23];
  assign tclamp = tlow ? lo_i : thigh ? hi_i : tsum[7:0];
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) tph_q <= 1'b0;
    else if (st_q == SIdle) tph_q <= 1'b0;
    else if (ad_i && rq_wv) tph_q <= !tph_q;
  end
  // a register stage after it: a pixel's writes then come on the pointwise path's odd steps,
  // which read no row (with the lanes' drain at 5 cycles, without it they met the even steps'
  // reads: 0.1-0.4 MACs a cycle less)
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) y_valid <= 1'b0;
    else y_valid <= ad_i ? (rq_wv && tph_q) : rq_valid;
  end
  always_ff @(posedge clk_i) y <= ad_i ? tclamp : rq_y;

  // output bytes: they come in pixel order, three a pixel (depthwise and the stem eight; channel
  // co0 + yk); ya_q is the next byte's address, out + p * K + co0 + yk, kept in a register (an
  // adder in front of the row compare and the port's request set the clock): a byte steps it by
  // one, a pixel's last drained sum by K - (sums - 1). They gather in a row buffer, written when a
  // byte of another row comes and the cycle after a pixel's last byte: one write a pixel, two
  // when its bytes straddle rows.
  logic [2:0]      yk_q;
  logic [9:0]      ystep;     // K - (sums - 1): ya_q's step at a pixel's last drained sum
  assign ystep = {1'b0, cout_i} - {7'd0, nsum_m1};
  logic [AW-1:0]   ya_q;
  logic            y_in;       // a byte of the block's channels
  logic            y_last;     // the pixel's last one
  assign y_in   = y_valid && ({1'b0, yk_q} < kb_q);
  // (the add: a row's last byte; the last row is written once every byte is out, ad_tail)
  assign y_last = y_valid && (ad_i ? (ya_q[2:0] == 3'd7) : ({1'b0, yk_q} == kb_q - 4'd1));
  logic [63:0]     wb_data_q;
  logic [7:0]      wb_strb_q;  // none: empty
  logic [AW-4:0]   wb_row_q;
  logic            wb_done_q;  // the buffer holds a pixel's last byte
  logic            ad_tail;
  assign wr_now = (wb_strb_q != '0) &&
                  (wb_done_q || ad_tail || (y_in && ya_q[AW-1:3] != wb_row_q));

  assign req_valid_o = wr_now || rd_want;
  assign req_we_o    = wr_now;
  assign req_addr_o  = wr_now ? {wb_row_q, 3'b000} : rd_addr;
  assign req_wdata_o = wb_data_q;
  assign req_wstrb_o = wr_now ? wb_strb_q : 8'h00;
  logic rd_taken;
  assign rd_taken = rd_want && !wr_now && req_ready_i;

  // S0: a step leaves when its row (if any) is taken and the lanes can take a last step
  // (window paths: every step reads its row, and there is a step only while B holds a pixel)
  logic last0, even0;
  assign last0 = win ? w_last : (s_q0 == nsteps_m1);
  assign even0 = win || !s_q0[0];
  assign s0_read = (st_q == SRun) && !ad_i && !run_done_q && even0 && (!win || w_valid) &&
                   (!last0 || gap_ok);
  assign s0_go = (st_q == SRun) && !ad_i && !run_done_q && (!win || w_valid) &&
                 (!last0 || gap_ok) && (even0 ? rd_taken : 1'b1);
  assign wra = win ? w_wa : s_q0;

  logic block_end;  // the block's bytes are all out (SFlush)
  logic [8:0] blk;  // channels a block
  assign blk = win ? 9'(DwSums) : 9'(Sums);
  logic [15:0] pout_q;  // pixels whose bytes are out
  assign ad_tail = ad_i && (st_q == SFlush) && (pout_q == pix_i);
  assign block_end = (st_q == SFlush) && (pout_q == pix_i) && !(ad_i && wb_strb_q != '0);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      st_q <= SIdle;
      tag_q <= TNone;
      err_o <= 1'b0;
      bad_o <= 1'b0;
      v1_q <= 1'b0;
      yk_q <= '0;
      gap_q <= 3'd7;
      wb_strb_q <= '0;
      wb_done_q <= 1'b0;
    end else begin
      tag_q <= TNone;
      if (rd_taken) tag_q <= rd_tag;
      if (wr_now && !req_ready_i) err_o <= 1'b1;
      if (tag_q == TPrm && bad_shift) bad_o <= 1'b1;
      v1_q <= s0_go;
      if (s0_go && last0) gap_q <= 3'd0;
      else if (gap_q != 3'd7) gap_q <= gap_q + 3'd1;
      if (y_valid) yk_q <= (yk_q == nsum_m1) ? 3'd0 : yk_q + 3'd1;
      if (wr_now) wb_strb_q <= y_in ? (8'b1 << ya_q[2:0]) : 8'h00;
      else if (y_in) wb_strb_q <= wb_strb_q | (8'b1 << ya_q[2:0]);
      wb_done_q <= y_last;
      unique case (st_q)
        SIdle: if (start_i) begin
          st_q <= ad_i ? SPrm : SWgt;
          err_o <= 1'b0;
          bad_o <= 1'b0;
        end
        SWgt: if (wdone_q && tag_q != TWgt) st_q <= SPrm;
        SPrm: if (pgot_q == kb_q && tag_q != TPrm) st_q <= bad_o ? SIdle : SRun;
        SRun: if (run_done_q) st_q <= SFlush;
        SFlush: if (block_end) st_q <= (ad_i || left_q <= blk) ? SIdle : SWgt;
        default: st_q <= SIdle;
      endcase
    end
  end
  assign busy_o = (st_q != SIdle);

  logic [AW-1:0] cb;         // C bytes
  assign cb = AW'(cin_i);
  nasa_mac_window #(.AddrBits(AW)) u_win (
    .clk_i,
    .layer_i(st_q == SIdle && start_i),
    .block_i(st_q == SFlush && block_end),
    .run_i(st_q == SRun && win),
    .go_i(s0_go && win),
    .dw_i,
    .in_i,
    .pix_i,
    .cin_i,
    .ih_i,
    .iw_i,
    .ow_i,
    .k_i,
    .s2_i,
    .padt_i,
    .rowb_i,
    .valid_o(w_valid),
    .first_o(w_first),
    .last_o(w_last),
    .addr_o(w_addr),
    .wa_o(w_wa)
  );

  always_ff @(posedge clk_i) begin
    ptag_q <= pg_q[2:0];
    // --- layer start
    if (st_q == SIdle && start_i) begin
      left_q <= cout_i;
      wp_q <= wgrp_q;
    end
    if (ldw_i) wgrp_q <= wgt_i;
    if (ldp_i) pp_q <= prm_i;
    if (ldo_i) ob_q <= out_i;
    // --- block start (and each later block)
    if ((st_q == SIdle && start_i) || (st_q == SFlush && block_end)) begin
      lg_q <= '0;
      lr_q <= '0;
      wdone_q <= 1'b0;
      half_q <= 1'b0;
      pg_q <= '0;
      pgot_q <= '0;
      p_q <= '0;
      s_q0 <= '0;
      ap_q <= in_i;
      bj_q <= '0;
      aph_q <= 1'b0;
      run_done_q <= 1'b0;
    end
    if (st_q == SIdle && start_i) begin
      kb_q <= block_k(dw_i, st_i, ad_i, cout_i);
    end
    if (st_q == SFlush && block_end) begin
      kb_q <= block_k(dw_i, st_i, ad_i, left_q - blk);
      left_q <= left_q - blk;
      ob_q <= ob_q + AW'(blk);
      if (dw_i) wp_q <= wgrp_q + AW'(8);  // depthwise: the next eight channels' tap rows
      wgrp_q <= wgrp_q + AW'(8);
    end
    if ((st_q == SIdle && start_i) || (st_q == SFlush && block_end)) pout_q <= '0;
    // the row buffer: emptied by a write, a byte of its row added, a byte of another row starts it
    // again
    if (y_in) begin
      for (int b = 0; b < 8; b++) begin
        if (ya_q[2:0] == 3'(b)) wb_data_q[8*b+:8] <= y;
      end
      wb_row_q <= ya_q[AW-1:3];
    end
    // (ya_q from ob_q while the weights load: ob_q's adder drives only ob_q, both pack)
    if (st_q == SWgt || (ad_i && st_q == SPrm)) ya_q <= ob_q;
    else if (y_valid) ya_q <= ya_q + ((yk_q == nsum_m1) ? {{(AW-10){ystep[9]}}, ystep} : AW'(1));
    if (y_valid && yk_q == nsum_m1) pout_q <= pout_q + 16'd1;
    // --- weight rows: asked in order, a pointwise row twice (its low half, then its high half)
    // (depthwise: a tap's row a cycle, into RAMs 0 and 1 at once)
    if (st_q == SWgt && rd_taken) begin
      hg_q <= lg_q;
      hr_q <= lr_q;
      hh_q <= half_q;
      half_q <= !win && !half_q;
    end
    if (st_q == SWgt && rd_taken && (win || half_q)) begin
      wp_q <= wp_q + (dw_i ? cb : AW'(8));
      if (lr_q == wrows_m1) begin
        lr_q <= '0;
        if (win || {2'b00, lg_q} + 4'd1 == kb_q) wdone_q <= 1'b1;
        lg_q <= lg_q + 2'd1;
      end else begin
        lr_q <= lr_q + 6'd1;
      end
    end
    // --- records
    if (st_q == SPrm && rd_taken) begin
      pp_q <= pp_q + AW'(8);
      pg_q <= pg_q + 4'd1;
    end
    if (tag_q == TPrm) begin
      ms_q[ptag_q] <= rsp_rdata_i[53:32];
      pgot_q <= pgot_q + 4'd1;
    end
    // --- steps
    if (s0_go) begin
      f1_q <= win ? w_first : (s_q0 == 6'd0);
      l1_q <= last0;
      odd1_q <= !win && s_q0[0];
      xsel_q <= w_addr[2:0];
      if (even0) ap_q <= ap_q + AW'(8);
      if (last0) begin
        s_q0 <= '0;
        if (p_q + 16'd1 == pix_i) run_done_q <= 1'b1;
        p_q <= p_q + 16'd1;
      end else begin
        s_q0 <= s_q0 + 6'd1;
      end
    end
    if (v1_q && !odd1_q) xhi_q <= rsp_rdata_i[63:32];
    else if (ad_i && rq_wv && !tph_q) xhi_q[23:0] <= tsum;
    // --- the add's reads: a's row, then b's, a byte each
    if (st_q == SRun && ad_i && rd_taken) begin
      xsel_q <= bj_q;
      adb_q <= aph_q;
      aph_q <= !aph_q;
      if (aph_q) begin
        bj_q <= bj_q + 3'd1;
        if (bj_q == 3'd7) begin
          ap_q <= ap_q + AW'(8);
          wp_q <= wp_q + (dw_i ? cb : AW'(8));  // (the weight loader's adder: dw_i is clear)
        end
        p_q <= p_q + 16'd1;
        if (p_q + 16'd1 == pix_i) run_done_q <= 1'b1;
      end
    end
  end
  logic unused;
  assign unused = ^{rsp_valid_i, unused_rq_ready, ln_ready, cin_i[1:0]};
`ifndef SYNTHESIS
  // Simulation only (Verilator --assert): no record is written while a drained sum reads one, so
  // the EBRs need not give a read that meets a write the old word (no_rw_check above)
  assert property (@(posedge clk_i) disable iff (!rst_ni) (tag_q == TPrm) |-> !rqv_q)
    else $error("nasa_mac_array: a record is written while a drained sum reads its M and S");
  assert property (@(posedge clk_i) disable iff (!rst_ni) (tag_q == TPrm) |-> !dr_valid)
    else $error("nasa_mac_array: a record is written while a drained sum reads its bias");
  assert property (@(posedge clk_i) disable iff (!rst_ni) (tag_q == TPrm) |=> !dr_valid)
    else $error("nasa_mac_array: a record is written as the next drained sum's bias is read");
`endif
endmodule
