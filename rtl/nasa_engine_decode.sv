// Engine unit: descriptor decode and validation. Over nasa_pkg::DecodeSteps cycles one shared
// saturating multiplier forms the layer's products (one per step, nasa_engine_pkg::dec_step_e);
// the window checks of the layer's memory regions and the overlap checks against the outputs of
// the two layers started before it run one region per step once its size is known. In the last
// step err_o (validation, in the order of docs/engine.md), hz_o and the decoded layer are valid
// and held until the next descriptor: the sequencer starts the layer (ld_start_i) from there.
module nasa_engine_decode #(
  parameter nasa_pkg::cfg_t Cfg = nasa_pkg::CfgSim,  // the configuration (nasa_pkg::cfg_t)
  localparam int unsigned Rows = Cfg.rows, Cols = Cfg.cols, MemBytes = Cfg.mem_bytes,
                          InBufBytes = Cfg.in_buf_bytes, KredMax = Cfg.kred_max,
                          AddrBits = Cfg.addr_bits
) (
  input  logic                       clk_i,
  input  logic                       rst_ni,
  input  nasa_pkg::desc_t            desc_i,
  input  logic                       start_i,     // the descriptor arrived: step 0 next cycle
  input  logic                       active_i,    // the front end decodes (StDecode)
  input  logic [31:0]                win_base_i,  // the memory window (clamped to 2^AddrBits)
  input  logic [31:0]                win_limit_i,
  input  logic [31:0]                scratch_base_i,  // the scratch window (aligned; 0: none)
  input  logic                       li_par_i,    // parity of the decoding layer's index
  input  logic                       ld_start_i,  // the decoded layer starts loading
  output logic                       first_o,     // step 0 (ext mode: PATCH applies now)
  output logic                       last_o,      // the last step: the outputs below are valid
  output logic [7:0]                 err_o,       // nasa_pkg::err_e
  output logic [1:0]                 hz_o,        // reads the output of layer li - 1 / li - 2
  output nasa_engine_pkg::layer_t    layer_o,     // (ib, par and idx are the sequencer's)
  output nasa_engine_pkg::il_cfg_t   il_o,
  output nasa_engine_pkg::tl_cfg_t   tl_o
);
  localparam int unsigned IAW  = $clog2(InBufBytes);
  localparam int unsigned RowW = (Rows > 1) ? $clog2(Rows) : 1;
  localparam int unsigned ColW = (Cols > 1) ? $clog2(Cols) : 1;
  localparam int unsigned WRW  = $clog2(2 * KredMax);  // weight-ring byte addresses
  localparam int unsigned AW   = AddrBits;
  localparam int unsigned KW   = $clog2(KredMax + 1);
  localparam int unsigned PW   = $clog2(InBufBytes + Rows + 1) + 1;
  localparam int unsigned JW   = 17;
  localparam int unsigned CW   = 18;
  localparam int unsigned OW   = $clog2((2 * Rows + 16) * InBufBytes) + 1;
  // Decode products saturate at 2^DW - 1: above every bound they are checked against (the input
  // buffer, KredMax, a window region's 2^(AW+1) length limit), so each check gives the exact
  // product's verdict, and products of layers that pass validation are exact.
  localparam int unsigned DW0  = (AW + 2 > IAW + 2) ? AW + 2 : IAW + 2;
  localparam int unsigned DW   = (DW0 > KW + 1) ? DW0 : KW + 1;
  localparam int unsigned MbM1 = MemBytes - 1;
  localparam logic [3:0] LastStep = 4'(nasa_pkg::DecodeSteps - 1);
  // struct field widths (nasa_engine_pkg)
  localparam int unsigned LAW  = nasa_engine_pkg::LyAw;
  localparam int unsigned LOW  = nasa_engine_pkg::LyOw;
  localparam int unsigned LKW  = nasa_engine_pkg::LyKw;
  localparam int unsigned LPW  = nasa_engine_pkg::LyPw;
  localparam int unsigned LJW  = nasa_engine_pkg::LyJw;
  localparam int unsigned LCW  = nasa_engine_pkg::LyCw;
  localparam int unsigned LWRW = nasa_engine_pkg::LyWrw;

  // ======================= fields =======================
  logic [7:0] f_op, f_act, f_k, f_s, f_sq, f_q6, f_sb;
  logic [15:0] f_h, f_w, f_cin, f_cout, f_m, f_mb, f_orows;
  logic [7:0] f_padt, f_img;
  logic f_res;
  logic [31:0] f_istr, f_ostr;
  logic [31:0] f_in, f_in2, f_out, f_wgt, f_prm;
  assign f_op   = desc_i.op;
  assign f_act  = desc_i.act;
  assign f_k    = desc_i.k;
  assign f_s    = desc_i.stride;
  assign f_h    = desc_i.h;
  assign f_w    = desc_i.w;
  assign f_cin  = desc_i.cin;
  assign f_cout = desc_i.cout;
  assign f_in   = desc_i.in_addr;
  assign f_in2  = desc_i.in2_addr;
  assign f_out  = desc_i.out_addr;
  assign f_wgt  = desc_i.wgt_addr;
  assign f_prm  = desc_i.prm_addr;
  assign f_m    = desc_i.m;
  assign f_sq   = desc_i.s;
  assign f_q6   = desc_i.q6;
  assign f_mb   = desc_i.mb;
  assign f_sb   = desc_i.sb;
  assign f_orows = desc_i.out_rows;
  assign f_padt  = desc_i.pad_top;
  assign f_res   = desc_i.res;
  assign f_img   = desc_i.images;
  assign f_istr  = desc_i.in_stride;
  assign f_ostr  = desc_i.out_stride;

  logic is_conv, is_dw, is_fc, is_max, is_avg, is_add, is_gap, is_pool, is_win;
  assign is_conv = (f_op == nasa_pkg::OpConv);
  assign is_dw   = (f_op == nasa_pkg::OpDwConv);
  assign is_fc   = (f_op == nasa_pkg::OpFc);
  assign is_max  = (f_op == nasa_pkg::OpMaxPool);
  assign is_avg  = (f_op == nasa_pkg::OpAvgPool);
  assign is_add  = (f_op == nasa_pkg::OpAdd);
  assign is_gap  = (f_op == nasa_pkg::OpGap);
  assign is_pool = is_max || is_avg;
  assign is_win  = is_conv || is_dw || is_pool;  // sliding-window ops with stride and padding

  // A row band (OutRows != 0, docs/engine.md "Row bands"): OutRows output rows, its own top
  // padding PadTop (f_padv: the vertical padding; the horizontal one stays f_pad).
  logic [15:0] f_ho, f_hof, f_wo, f_kk, f_pad, f_padv, f_kwin;
  logic band;
  assign band   = (f_orows != '0);
  assign f_kwin = is_pool ? 16'd3 : {8'd0, f_k};
  assign f_hof  = (is_win && f_s == 8'd2) ? 16'((17'(f_h) + 17'd1) >> 1) : f_h;
  assign f_ho   = (is_win && band) ? f_orows : f_hof;
  assign f_wo   = (is_win && f_s == 8'd2) ? 16'((17'(f_w) + 17'd1) >> 1) : f_w;
  assign f_kk   = f_k * f_k;
  assign f_pad  = is_win ? ((f_kwin - 16'd1) >> 1) : 16'd0;
  assign f_padv = (is_win && band) ? {8'd0, f_padt} : f_pad;
  // Packed images (Images > 1, docs/engine.md "Packed images"): f_img1 = Images - 1 more images
  logic pack;
  logic [7:0] f_img1;
  assign pack   = (f_img > 8'd1);
  assign f_img1 = pack ? f_img - 8'd1 : 8'd0;

  // ======================= the micro-sequence =======================
  logic [3:0] dec_step_q, dec_step_d;  // a nasa_engine_pkg::dec_step_e
  always_comb begin
    dec_step_d = dec_step_q;
    if (start_i) dec_step_d = '0;
    else if (active_i && dec_step_q != LastStep) dec_step_d = dec_step_q + 4'd1;
  end
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) dec_step_q <= '0;
    else dec_step_q <= dec_step_d;
  end
  assign first_o = active_i && (dec_step_q == nasa_engine_pkg::DecHwIn);
  assign last_o  = active_i && (dec_step_q == LastStep);

  // one DW x 17 saturating multiplier: every product has an operand of at most 17 bits (a
  // dimension, a channel count, a padding, or twice Cin) and one that is a dimension or an
  // earlier (saturated) product; sat(sat(a) * b) = sat(a * b)
  logic [DW-1:0] mul_a;
  logic [16:0] mul_b;
  logic [DW+16:0] mul_w;
  logic [DW-1:0] mul_p;
  logic [DW-1:0] d_hw_in_q, d_in_bytes_q, d_row_b_q, d_kred_q, d_hw_out_q, d_out_bytes_q;
  logic [DW-1:0] d_wgt_bytes_q, d_vbytes_q, d_inspan_q, d_outspan_q, d_packin_q, d_p_q;
  logic [OW-1:0] d_wrap_q, d_padrow_q, d_padcin_q;  // feed only the layer registers (valid layers)
  logic [16:0] f_scin;
  logic [DW+1:0] d_offb, d_offr, d_in_total;
  // the packed regions: input and output from their address to the last image's end (saturated)
  logic [DW-1:0] d_inreg, d_outreg;
  assign d_inreg  = ((DW + 1)'(d_inspan_q) + (DW + 1)'(d_in_bytes_q) > (DW + 1)'({DW{1'b1}})) ?
                    '1 : DW'(d_inspan_q + d_in_bytes_q);
  assign d_outreg = ((DW + 1)'(d_outspan_q) + (DW + 1)'(d_out_bytes_q) > (DW + 1)'({DW{1'b1}})) ?
                    '1 : DW'(d_outspan_q + d_out_bytes_q);
  assign f_scin = (is_win && f_s == 8'd2) ? {f_cin, 1'b0} : {1'b0, f_cin};
  // Pixel gather (docs/engine.md "Input loader"): a 1x1 stride-2 Conv/DwConv whose used pixels,
  // each in a slot of Cin rounded up to the port width (f_cpad), take no more room than the
  // whole input runs as a stride-1 layer over that compact Ho x Wo x f_cpad input
  logic [16:0] f_cpad;
  logic g_cand, g_take;
  assign f_cpad = (17'(f_cin) + 17'(MemBytes - 1)) & ~17'(MemBytes - 1);
  assign g_cand = (is_conv || is_dw) && f_k == 8'd1 && f_s == 8'd2;
  assign g_take = g_cand && !pack && (d_vbytes_q <= d_in_bytes_q);
  // a 32-bit stride as a multiplier operand, saturated to DW bits (sat(a) * b = sat(a * b))
  function automatic logic [DW-1:0] sat_dw(logic [31:0] v);
    sat_dw = (64'(v) >> DW != '0) ? '1 : DW'(v);
  endfunction

  always_comb begin
    mul_a = '0;
    mul_b = '0;
    unique case (dec_step_q)
      nasa_engine_pkg::DecHwIn:    begin mul_a = DW'(f_h); mul_b = 17'(f_w); end
      nasa_engine_pkg::DecInBytes: begin mul_a = d_hw_in_q; mul_b = 17'(f_cin); end
      nasa_engine_pkg::DecInSpan:  begin mul_a = sat_dw(f_istr); mul_b = 17'(f_img1); end
      nasa_engine_pkg::DecOutSpan: begin mul_a = sat_dw(f_ostr); mul_b = 17'(f_img1); end
      nasa_engine_pkg::DecPackIn:  begin
        mul_a = ((d_offb >> DW) != '0) ? '1 : DW'(d_offb);
        mul_b = 17'(f_img1);
      end
      nasa_engine_pkg::DecPackP:   begin
        mul_a = (is_fc || is_gap) ? DW'(1) : d_hw_out_q;
        mul_b = 17'(f_img1) + 17'd1;
      end
      nasa_engine_pkg::DecRowB:    begin mul_a = DW'(f_w); mul_b = 17'(f_cin); end
      nasa_engine_pkg::DecKred:    begin
        mul_a = is_fc ? d_hw_in_q : DW'(f_kk);
        mul_b = 17'(f_cin);
      end
      nasa_engine_pkg::DecHwOut:   begin mul_a = DW'(f_ho); mul_b = 17'(f_wo); end
      nasa_engine_pkg::DecOutB:    begin
        mul_a = (is_fc || is_gap) ? DW'(1) : d_hw_out_q;
        mul_b = 17'(f_cout);
      end
      nasa_engine_pkg::DecWgtB:    begin
        mul_a = is_dw ? DW'(f_kk) : d_kred_q;
        mul_b = is_dw ? 17'(f_cin) : 17'(f_cout);
      end
      nasa_engine_pkg::DecWrap:    begin mul_a = DW'(f_wo) - DW'(1); mul_b = f_scin; end
      nasa_engine_pkg::DecVBytes:  begin mul_a = d_hw_out_q; mul_b = f_cpad; end
      nasa_engine_pkg::DecPadRow:  begin mul_a = d_row_b_q; mul_b = 17'(f_padv); end
      nasa_engine_pkg::DecPadCin:  begin mul_a = DW'(f_pad); mul_b = 17'(f_cin); end
      nasa_engine_pkg::DecGRow:    begin mul_a = DW'(f_wo); mul_b = f_cpad; end
      default: ;
    endcase
  end
  assign mul_w = (DW + 17)'(mul_a) * (DW + 17)'(mul_b);
  assign mul_p = (mul_w[DW+16:DW] != '0) ? '1 : mul_w[DW-1:0];

  always_ff @(posedge clk_i) begin
    if (active_i) begin
      unique case (dec_step_q)
        nasa_engine_pkg::DecHwIn:    d_hw_in_q <= mul_p;
        nasa_engine_pkg::DecInBytes: d_in_bytes_q <= mul_p;
        nasa_engine_pkg::DecInSpan:  d_inspan_q <= mul_p;
        nasa_engine_pkg::DecOutSpan: d_outspan_q <= mul_p;
        nasa_engine_pkg::DecPackIn:  d_packin_q <= mul_p;
        nasa_engine_pkg::DecPackP:   d_p_q <= mul_p;
        nasa_engine_pkg::DecRowB:    d_row_b_q <= mul_p;
        nasa_engine_pkg::DecKred:    d_kred_q <= mul_p;
        nasa_engine_pkg::DecHwOut:   d_hw_out_q <= mul_p;
        nasa_engine_pkg::DecOutB:    d_out_bytes_q <= mul_p;
        nasa_engine_pkg::DecWgtB:    d_wgt_bytes_q <= mul_p;
        nasa_engine_pkg::DecWrap:    d_wrap_q <= OW'(mul_p);
        nasa_engine_pkg::DecVBytes:  d_vbytes_q <= mul_p;
        nasa_engine_pkg::DecPadRow:  d_padrow_q <= OW'(mul_p);
        nasa_engine_pkg::DecPadCin:  d_padcin_q <= OW'(mul_p);
        default: ;
      endcase
    end
  end

  // ======================= validation =======================
  // The window checks of a descriptor's regions share one checker, one region per decode step
  // once its size is known (input in step OutB, Add's second input or a folded residual in RowB,
  // output in WgtB, weights in Wrap, per-channel records in VBytes; packed images: the regions
  // from the first image's start to the last one's end); win_bad_q holds the verdict by the last
  // step.
  logic [31:0] wc_addr;
  logic [DW-1:0] wc_len;
  logic wc_en, win_bad_q;
  always_comb begin
    wc_en   = 1'b0;
    wc_addr = f_in;
    wc_len  = d_inreg;
    unique case (dec_step_q)
      nasa_engine_pkg::DecOutB: wc_en = 1'b1;
      nasa_engine_pkg::DecRowB: begin  // Add's second input, a folded residual
        wc_en   = is_add || f_res;
        wc_addr = f_in2;
        wc_len  = is_add ? d_in_bytes_q : d_out_bytes_q;
      end
      nasa_engine_pkg::DecWgtB: begin wc_en = 1'b1; wc_addr = f_out; wc_len = d_outreg; end
      nasa_engine_pkg::DecWrap: begin
        wc_en   = is_conv || is_fc || is_dw;
        wc_addr = f_wgt;
        wc_len  = d_wgt_bytes_q;
      end
      nasa_engine_pkg::DecVBytes: begin
        wc_en   = is_conv || is_fc || is_dw;
        wc_addr = f_prm;
        wc_len  = DW'(f_cout) << 3;
      end
      default: ;
    endcase
  end
  logic wc_inside;
  nasa_engine_win_check #(
    .AddrBits(AddrBits),
    .LenW    (DW)
  ) u_win (
    .addr_i  (wc_addr),
    .len_i   (wc_len),
    .base_i  (win_base_i),
    .limit_i (win_limit_i),
    .inside_o(wc_inside)
  );
  // the on-chip scratch's window: inputs and the output wholly inside or outside it, weights
  // and records outside
  logic sc_overlap, sc_inside, sc_fixed, sc_bad;
  nasa_engine_sc_check #(
    .Bytes(Cfg.scratch_bytes),
    .LenW (DW)
  ) u_sc (
    .addr_i   (wc_addr),
    .len_i    (wc_len),
    .base_i   (scratch_base_i),
    .overlap_o(sc_overlap),
    .inside_o (sc_inside)
  );
  assign sc_fixed = dec_step_q == nasa_engine_pkg::DecWrap ||
                    dec_step_q == nasa_engine_pkg::DecVBytes;
  assign sc_bad   = sc_overlap && (sc_fixed || !sc_inside);
  always_ff @(posedge clk_i) begin
    if (active_i) begin
      if (dec_step_q == nasa_engine_pkg::DecHwIn) begin
        win_bad_q <= 1'b0;
      end else if (wc_en && (!wc_inside || sc_bad)) begin
        win_bad_q <= 1'b1;
      end
    end
  end

  // Add's second input at d_offb after the first; a folded residual first, the input at d_offr
  // (packed images: image i at i*d_offb, the last at d_packin_q)
  logic bad_s, bad_sb, q_add;
  assign d_offb     = ((DW + 2)'(d_in_bytes_q) + (DW + 2)'(MbM1)) & ~((DW + 2)'(MbM1));
  assign d_offr     = f_res ? ((DW + 2)'(d_out_bytes_q) + (DW + 2)'(MbM1)) & ~((DW + 2)'(MbM1))
                            : '0;
  assign d_in_total = (is_add ? d_offb : d_offr) + (DW + 2)'(d_packin_q) + (DW + 2)'(d_in_bytes_q);
  assign q_add      = is_add || f_res;  // requant(a, M, S) + requant(b, Mb, Sb)
  assign bad_s      = (f_sq == 8'd0) || (f_sq > 8'(nasa_pkg::MaxShift));
  assign bad_sb     = (f_sb == 8'd0) || (f_sb > 8'(nasa_pkg::MaxShift));

  always_comb begin
    err_o = nasa_pkg::ErrNone;
    if (f_op == 8'd0 || f_op > 8'(nasa_pkg::OpGap)) begin
      err_o = nasa_pkg::ErrBadOpcode;
    end else if (f_act > 8'(nasa_pkg::ActRelu6)) begin
      err_o = nasa_pkg::ErrBadAct;
    end else if (is_win && f_s != 8'd1 && f_s != 8'd2) begin
      err_o = nasa_pkg::ErrBadStride;
    end else if (((is_conv || is_dw) && f_k != 8'd1 && f_k != 8'd3 && f_k != 8'd5 &&
                  f_k != 8'd7) || (is_pool && f_k != 8'd3)) begin
      err_o = nasa_pkg::ErrBadKernel;
    end else if (f_h == '0 || f_w == '0 || f_cin == '0 || f_cout == '0) begin
      err_o = nasa_pkg::ErrZeroDim;
    end else if ((is_dw || is_pool || is_add || is_gap) && f_cout != f_cin) begin
      err_o = nasa_pkg::ErrBadChannels;
    end else if (band && (!is_win || f_orows > f_hof || {8'd0, f_padt} > f_pad)) begin
      err_o = nasa_pkg::ErrBadBand;
    end else if (f_res && (!(is_conv || is_dw) || f_s != 8'd1)) begin
      err_o = nasa_pkg::ErrBadResidual;
    end else if (pack && (!(is_conv || is_dw || is_fc) || band || f_res)) begin
      err_o = nasa_pkg::ErrBadPack;
    end else if (d_in_total > (DW + 2)'(InBufBytes) ||
                 ((is_conv || is_fc) && d_kred_q > DW'(KredMax))) begin
      err_o = nasa_pkg::ErrOversize;
    end else if (((is_avg || is_gap || q_add) && bad_s) || (q_add && bad_sb) ||
                 (f_act == 8'(nasa_pkg::ActRelu6) && f_q6 > 8'd127)) begin
      err_o = nasa_pkg::ErrBadQuant;
    end else if (win_bad_q) begin
      err_o = nasa_pkg::ErrWindow;
    end
  end

  // ======================= overlap with unfinished layers =======================
  // The outputs of the two layers started before the one decoding (by layer index parity), and
  // whether its input, second input, weights or records overlap them (checked over the decode
  // steps with one comparator, once each size is known): a layer that reads what an unfinished
  // layer writes starts loading only when that layer is done.
  logic [AW:0] ot_lo_q [2];
  logic [AW:0] ot_hi_q [2];
  logic [1:0] hz_q;  // [0]: overlaps layer li - 1, [1]: layer li - 2
  logic [31:0] hc_addr;
  logic [DW-1:0] hc_len;
  logic hc_en, hc_old, hc_hit;
  logic [AW:0] hc_end;  // (a valid layer's ranges end at most at 2^AW)
  always_comb begin
    hc_en   = 1'b0;
    hc_addr = f_in;
    hc_len  = d_inreg;
    unique case (dec_step_q)
      nasa_engine_pkg::DecInBytes, nasa_engine_pkg::DecInSpan: begin
        hc_en   = is_conv || is_fc || is_dw;
        hc_addr = f_prm;
        hc_len  = DW'(f_cout) << 3;
      end
      nasa_engine_pkg::DecRowB, nasa_engine_pkg::DecKred: hc_en = 1'b1;
      nasa_engine_pkg::DecWgtB, nasa_engine_pkg::DecWrap: begin  // Add's second input, a residual
        hc_en   = is_add || f_res;
        hc_addr = f_in2;
        hc_len  = is_add ? d_in_bytes_q : d_out_bytes_q;
      end
      nasa_engine_pkg::DecVBytes, nasa_engine_pkg::DecPadRow: begin
        hc_en   = is_conv || is_fc || is_dw;
        hc_addr = f_wgt;
        hc_len  = d_wgt_bytes_q;
      end
      default: ;
    endcase
  end
  // odd steps compare with the layer two back (its parity is the decoding layer's)
  assign hc_old = dec_step_q[0];
  assign hc_end = (AW + 1)'(hc_addr[AW-1:0]) + hc_len[AW:0];
  assign hc_hit = ((AW + 1)'(hc_addr[AW-1:0]) < ot_hi_q[li_par_i ^ !hc_old]) &&
                  (ot_lo_q[li_par_i ^ !hc_old] < hc_end);
  always_ff @(posedge clk_i) begin
    if (active_i) begin
      if (dec_step_q == nasa_engine_pkg::DecHwIn) hz_q <= '0;
      else if (hc_en && hc_hit) hz_q[hc_old] <= 1'b1;
    end
  end
  assign hz_o = hz_q;

  // the layer's output range, once it starts loading
  always_ff @(posedge clk_i) begin
    if (ld_start_i) begin
      ot_lo_q[li_par_i] <= (AW + 1)'(f_out[AW-1:0]);
      ot_hi_q[li_par_i] <= (AW + 1)'(f_out[AW-1:0]) + (AW + 1)'(d_outreg[AW:0]);
    end
  end

  // ======================= decoded layer constants =======================
  // What the decoded descriptor sets in the units: the loaders take their part when the layer
  // starts loading, the issue stage and drain the rest through the sequencer's next-layer bank.
  logic dv_pe, dv_wrow;
  logic [1:0] dv_vmode, dv_rq;
  logic [15:0] dv_kh, dv_kw, dv_hi, dv_wi, dv_wo, dv_stride;
  logic [KW-1:0] dv_cin_n, dv_kred;
  logic [PW-1:0] dv_p, dv_npt;
  logic [JW-1:0] dv_nct;
  logic [OW-1:0] dv_cstep, dv_rowk, dv_stepx, dv_stepwrap, dv_srowb, dv_rowb2;
  logic [OW-1:0] dv_na, dv_in_total, dv_in_end, dv_offb, dv_p0_pbase, dv_p0_rowbase;
  logic [CW-1:0] dv_p0_iy, dv_p0_ix, dv_last_iy;
  logic [WRW-1:0] dv_tsz;
  logic [AW-1:0] dv_grow;
  assign dv_pe       = is_conv || is_fc || is_dw;
  assign dv_wrow     = is_conv || is_fc;
  assign dv_vmode    = is_max ? nasa_pkg::VecMax : (is_add ? nasa_pkg::VecAdd : nasa_pkg::VecSum);
  assign dv_rq       = (is_conv || is_fc || is_dw) ? nasa_engine_pkg::RqChan :
                       ((is_max || is_add) ? nasa_engine_pkg::RqBypass : nasa_engine_pkg::RqDesc);
  assign dv_kh       = is_win ? f_kwin : (is_gap ? f_h : (is_add ? 16'd2 : 16'd1));
  assign dv_kw       = is_win ? f_kwin : (is_gap ? f_w : 16'd1);
  assign dv_hi       = g_take ? f_ho : f_h;
  assign dv_wi       = g_take ? f_wo : f_w;
  assign dv_wo       = (is_fc || is_gap) ? 16'd1 : f_wo;
  assign dv_stride   = (is_win && !g_take) ? 16'(f_s) : 16'd1;
  assign dv_cin_n    = is_conv ? KW'(f_cin) : (is_fc ? KW'(d_kred_q) : KW'(1));
  assign dv_kred     = KW'(d_kred_q);
  // K-split: f = 2^ksc divides the reduction steps per tap (whole taps per step group), the
  // port width (a weight beat deals into f banks) and the weight column (a column's bytes of a
  // row start at a whole ring byte)
  localparam int unsigned WChunk = Cfg.burst_max * MemBytes / 2;
  logic [1:0] dv_ksc;
  always_comb begin
    dv_ksc = 2'd0;
    if (dv_wrow && dv_cin_n[0] == 1'b0 && MemBytes >= 2 && WChunk % 2 == 0 &&
        nasa_pkg::KsLogMax >= 1)
      dv_ksc = 2'd1;
    if (dv_wrow && dv_cin_n[1:0] == 2'b00 && MemBytes >= 4 && WChunk % 4 == 0 &&
        nasa_pkg::KsLogMax >= 2)
      dv_ksc = 2'd2;
  end
  if (nasa_pkg::KsLogMax > 2) begin : g_ks_err
    $error("KsLogMax %0d: the engine deals weight rows over at most 4 bank groups",
           nasa_pkg::KsLogMax);
  end
  assign dv_cstep    = g_take ? OW'(f_cpad) : OW'(f_cin);
  // (mul_p: the last step's product, the gathered row bytes, held while decode waits there)
  assign dv_rowk     = g_take ? OW'(mul_p) : (is_add ? OW'(d_offb) : OW'(d_row_b_q));
  assign dv_p        = PW'(d_p_q);  // (Fc, Gap: one position an image)
  assign dv_stepx    = g_take ? OW'(f_cpad) : OW'(f_scin);
  // input bytes between two output rows' window corners
  assign dv_rowb2    = (is_win && f_s == 8'd2) ? OW'(d_row_b_q) << 1 : OW'(d_row_b_q);
  assign dv_stepwrap = g_take ? OW'(f_cpad) : dv_rowb2 - OW'(d_wrap_q);
  assign dv_srowb    = g_take ? OW'(mul_p) : dv_rowb2;
  assign dv_nct      = JW'((32'(f_cout) + 32'(Cols - 1)) >> ColW);
  assign dv_npt      = (is_conv || is_fc || is_dw) ? PW'((PW'(d_p_q) + PW'(Rows - 1)) >> RowW) :
                                                     PW'(d_p_q);
  assign dv_na       = g_take ? OW'(d_vbytes_q) : OW'(d_in_bytes_q);
  assign dv_in_total = g_take ? OW'(d_vbytes_q) : OW'(d_in_total);
  // input-buffer bytes the loader writes (whole port words): the layer's extent in the buffer
  assign dv_in_end   = g_take ? OW'(d_vbytes_q) :
                       ((is_add ? OW'(d_offb) : OW'(d_offr)) + OW'(d_packin_q) + OW'(d_offb));
  assign dv_offb     = OW'(d_offb);
  assign dv_tsz      = WRW'((32'(is_dw ? 32'(f_kk) : 32'(d_kred_q)) + 32'(MbM1)) & ~32'(MbM1));
  assign dv_p0_iy      = CW'(0) - CW'(f_padv);
  assign dv_p0_ix      = CW'(0) - CW'(f_pad);
  assign dv_p0_pbase   = -(OW'(d_padrow_q) + OW'(d_padcin_q));
  assign dv_p0_rowbase = OW'(0) - OW'(d_padrow_q);
  assign dv_grow       = AW'(d_row_b_q) << 1;
  // packed images: an image's last window-corner row, and the lanes' jumps to the next image
  // ((Ho-1)*stride*row bytes = input bytes - the rows below the last corner row: 1, or 2 for
  // stride 2 and an even H; an Fc image is one position)
  logic [OW-1:0] dv_lastrows, dv_img_rb, dv_img_pb;
  logic [AW-1:0] dv_img_out;
  assign dv_last_iy    = dv_p0_iy + (is_fc ? CW'(0) :
                                     (CW'(f_ho) - CW'(1)) << ((f_s == 8'd2) ? 1 : 0));
  assign dv_lastrows   = is_fc ? OW'(0) : OW'(d_in_bytes_q) - ((f_s == 8'd2 && !f_h[0]) ?
                                                             OW'(d_row_b_q) << 1 :
                                                             OW'(d_row_b_q));
  assign dv_img_rb     = OW'(d_offb) - dv_lastrows;
  assign dv_img_pb     = dv_img_rb - (is_fc ? OW'(0) : d_wrap_q);
  assign dv_img_out    = AW'(f_ostr) - AW'(d_out_bytes_q) + AW'(f_cout);

  always_comb begin
    layer_o            = '0;
    layer_o.pe         = dv_pe;
    layer_o.wrow       = dv_wrow;
    layer_o.dw         = is_dw;
    layer_o.bchk       = is_win;
    layer_o.add        = is_add;
    layer_o.res        = f_res;
    layer_o.need_all   = is_fc || is_gap;
    layer_o.vmode      = dv_vmode;
    layer_o.rq         = dv_rq;
    layer_o.act        = f_act[1:0];
    layer_o.q6         = f_q6;
    layer_o.m          = f_m;
    layer_o.s          = f_sq;
    layer_o.mb         = f_mb;
    layer_o.sb         = f_sb;
    layer_o.kh         = dv_kh;
    layer_o.kw         = dv_kw;
    layer_o.hi         = dv_hi;
    layer_o.wi         = dv_wi;
    layer_o.wo         = dv_wo;
    layer_o.stride     = dv_stride;
    layer_o.cout       = f_cout;
    layer_o.cin        = f_cin;
    layer_o.cin_n      = LKW'(dv_cin_n);
    layer_o.ksc        = dv_ksc;
    layer_o.cstep      = LOW'(dv_cstep);
    layer_o.rowk       = LOW'(dv_rowk);
    layer_o.p          = LPW'(dv_p);
    layer_o.stepx      = LOW'(dv_stepx);
    layer_o.stepwrap   = LOW'(dv_stepwrap);
    layer_o.srowb      = LOW'(dv_srowb);
    layer_o.nct        = LJW'(dv_nct);
    layer_o.npt        = LPW'(dv_npt);
    layer_o.offb       = LOW'(dv_offb);
    layer_o.offr       = LOW'(OW'(d_offr));
    layer_o.in_total   = LOW'(dv_in_total);
    layer_o.in_end     = LOW'(dv_in_end);
    layer_o.out        = LAW'(AW'(f_out));
    layer_o.p0_iy      = LCW'(dv_p0_iy);
    layer_o.p0_ix      = LCW'(dv_p0_ix);
    layer_o.p0_pbase   = LOW'(dv_p0_pbase);
    layer_o.p0_rowbase = LOW'(dv_p0_rowbase);
    layer_o.pack       = pack;
    layer_o.last_iy    = LCW'(dv_last_iy);
    layer_o.img_rb     = LOW'(dv_img_rb);
    layer_o.img_pb     = LOW'(dv_img_pb);
    layer_o.img_out    = LAW'(dv_img_out);
  end

  always_comb begin
    il_o       = '0;
    il_o.g     = g_take;
    il_o.add   = is_add;
    il_o.res   = f_res;
    il_o.nres  = LOW'(OW'(d_out_bytes_q));
    il_o.cin   = f_cin;
    il_o.wo    = dv_wo;
    il_o.na    = LOW'(dv_na);
    il_o.cpad  = LOW'(OW'(f_cpad));
    il_o.offb  = f_res ? LOW'(OW'(d_offr)) : LOW'(dv_offb);
    il_o.in    = LAW'(AW'(f_in));
    il_o.in2   = LAW'(AW'(f_in2));
    il_o.gstep = LAW'(AW'(f_scin));
    il_o.grow  = LAW'(dv_grow);
    il_o.imgs  = f_img1 + 8'd1;
    il_o.istride = LAW'(AW'(f_istr));
  end

  always_comb begin
    tl_o      = '0;
    tl_o.pe   = dv_pe;
    tl_o.wrow = dv_wrow;
    tl_o.nct  = LJW'(dv_nct);
    tl_o.wgt  = LAW'(AW'(f_wgt));
    tl_o.prm  = LAW'(AW'(f_prm));
    tl_o.cout = f_cout;
    tl_o.cin  = f_cin;
    tl_o.kk   = f_kk;
    tl_o.kred = LKW'(dv_kred);
    tl_o.tsz  = LWRW'(dv_tsz);
    tl_o.ksc  = dv_ksc;
  end

  // Bits the decode never needs: the reserved words, PATCH (the descriptor register's), the
  // address bits past the window's of the overlap check, the window's beyond AddrBits.
  logic unused_dec;
  assign unused_dec = ^{desc_i.rsvd15_0, desc_i.rsvd14_0, desc_i.rsvd10_9, desc_i.patch,
                        desc_i.rsvd9_24,
                        64'(hc_addr) >> AW, hc_len[DW-1:AW+1], win_base_i, win_limit_i,
                        d_p_q};

`ifndef SYNTHESIS
  initial begin
    assert (32'(nasa_engine_pkg::DecGRow) == nasa_pkg::DecodeSteps - 1)
      else $error("dec_step_e does not have DecodeSteps steps");
    assert (AW <= LAW && OW <= LOW && KW <= LKW && PW <= LPW && JW <= LJW && CW <= LCW &&
            WRW <= LWRW && IAW <= nasa_engine_pkg::LyIaw)
      else $error("a configuration wider than nasa_engine_pkg's structs");
  end
  // the step counter only counts through the steps
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   32'(dec_step_q) < nasa_pkg::DecodeSteps)
    else $error("decode step out of range");
  assert property (@(posedge clk_i) disable iff (!rst_ni) !$isunknown({first_o, last_o}))
    else $error("X on decode control outputs");
  assert property (@(posedge clk_i) disable iff (!rst_ni) last_o |-> !$isunknown({err_o, hz_o}))
    else $error("X on the decode verdict");
  // the decoded layer holds while the sequencer waits in the last step
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (last_o && !ld_start_i && active_i) |=> (!active_i || $stable(layer_o)))
    else $error("decoded layer changed while waiting to start");
`endif
endmodule
