// Engine unit: the compute issue stage. It walks layer A (lay_i) tile by tile: per channel tile
// (c_tile_q.j) and position tile (c_tile_q.pt, Rows output positions on the PE array, one pixel on the
// vector unit) the reduction steps (ci, kx, ky; a K-split tile's steps take 2^ks input channels
// at once, one per column group), one per cycle when the step's weights and input
// are in and the drain can take the tile's results (fire). Each lane's window corner and input
// offsets advance by single-position steps when a tile's last step issues (packed images: from an
// image's last position to the next image's first). It drives the input
// buffer's read ports, the weight ring's read address, compute stage 1 (step_o, mask_o) and,
// when a tile's last step issues (tile_o), the drain's view of the tile (sh_o, sh_addr_o).
// Contract: step_valid_o only with want_o, w_ok_o, in_ok_o and sh_ok_o; tile_o only when the
// drain's shadow is free.
module nasa_engine_issue #(
  parameter nasa_pkg::cfg_t Cfg = nasa_pkg::CfgSim,  // the configuration (nasa_pkg::cfg_t)
  localparam int unsigned Rows = Cfg.rows, Cols = Cfg.cols, MemBytes = Cfg.mem_bytes,
                          InBufBytes = Cfg.in_buf_bytes, KredMax = Cfg.kred_max,
                          BurstMax = Cfg.burst_max, AddrBits = Cfg.addr_bits, WTiles = Cfg.wtiles,
  localparam int unsigned NumIn     = (Rows > Cols) ? Rows : Cols,
  localparam int unsigned IAW       = $clog2(InBufBytes),
  localparam int unsigned WAW       = $clog2(KredMax),
  localparam int unsigned PtrW      = $clog2(WTiles) + 2,
  localparam int unsigned HJW       = $clog2(2 + Cols * ((KredMax + BurstMax * MemBytes / 2 - 1) /
                                                         (BurstMax * MemBytes / 2)) + 49)
) (
  input  logic                     clk_i,
  input  logic                     rst_ni,
  input  nasa_engine_pkg::layer_t  lay_i,         // layer A
  input  logic                     a_v_i,         // A holds a layer
  input  logic                     cs_start_i,    // B moves to A
  input  logic [15:0]              nx_cout_i,     // B's Cout
  input  logic                     run_start_i,
  // weights: the tile loader's ring
  input  logic [PtrW-1:0]          rec0_i,        // B's first tile
  input  logic [PtrW-1:0]          rec_fill_i,
  input  logic [HJW-1:0]           rsp_cols_i,
  output logic [PtrW-1:0]          c_rec_o,       // the compute's tile
  output logic [PtrW-1:0]          c_rec_d_o,     // and its next value (record read ahead)
  output logic [WAW-1:0]           c_widx_o,      // the step's weight row in the tile
  // input: bytes arrived of layer A
  input  logic [nasa_engine_pkg::LyOw-1:0] a_loaded_i,
  output logic [NumIn*IAW-1:0]     in_raddr_o,
  // per-channel records of the tile, and the layers complete (a bad record stops the run)
  input  logic [Cols*64-1:0]       prm_i,
  input  logic [31:0]              layers_done_i,
  output logic                     quant_err_o,
  // drain: its shadow is full / the tile in stage 1 is the last of one
  input  logic                     shadow_full_i,
  input  logic                     s1_valid_i,
  input  logic                     s1_last_i,
  // readiness of the next step
  output logic                     want_o,
  output logic                     w_ok_o,
  output logic                     in_ok_o,
  output logic                     sh_ok_o,
  output logic                     c_done_o,      // A's last step issued
  // the issued step
  output logic                     step_valid_o,
  output nasa_engine_pkg::step_t   step_o,
  output logic [NumIn-1:0]         mask_o,
  output logic                     tile_o,        // a tile's last step issued
  output nasa_engine_pkg::shadow_t sh_o,
  output logic [Rows*AddrBits-1:0] sh_addr_o      // output address of each drained row
);
  localparam int unsigned RowW   = (Rows > 1) ? $clog2(Rows) : 1;
  localparam int unsigned NW     = $clog2(Cols + 1);
  localparam int unsigned AW     = AddrBits;
  localparam int unsigned KW     = $clog2(KredMax + 1);
  localparam int unsigned PW     = $clog2(InBufBytes + Rows + 1) + 1;
  localparam int unsigned JW     = 17;
  localparam int unsigned CoW    = 17;
  localparam int unsigned CW     = 18;
  localparam int unsigned OW     = $clog2((2 * Rows + 16) * InBufBytes) + 1;
  localparam int unsigned WChunk = BurstMax * MemBytes / 2;
  localparam int unsigned LRW    = nasa_engine_pkg::LyRw;
  localparam int unsigned LNW    = nasa_engine_pkg::LyNw;
  localparam int unsigned LIAW   = nasa_engine_pkg::LyIaw;

  // layer A's constants, in this configuration's widths
  logic r_pe, r_wrow, r_dw, r_bchk, r_add, r_res, r_need_all;
  logic [1:0] r_vmode, r_rq, r_act;
  logic [7:0] r_q6, r_s, r_sb;
  logic [15:0] r_m, r_mb, r_kh, r_kw, r_wo, r_hi, r_wi, r_stride, r_cout, r_cin;
  logic [KW-1:0] r_cin_n;
  logic [1:0] r_ksc;
  logic [PW-1:0] r_p, r_npt;
  logic [JW-1:0] r_nct;
  logic [OW-1:0] r_cstep, r_rowk, r_stepx, r_stepwrap, r_srowb, r_offb, r_offr, r_in_total;
  logic [OW-1:0] r_p0_pbase, r_p0_rowbase, a_loaded;
  logic [AW-1:0] r_out;
  logic [IAW-1:0] r_ib;
  logic [31:0] r_idx;
  logic [CW-1:0] r_p0_iy, r_p0_ix, r_last_iy;
  logic r_pack;
  logic [OW-1:0] r_img_pb, r_img_rb;
  logic [AW-1:0] r_img_out;
  assign r_pe         = lay_i.pe;
  assign r_wrow       = lay_i.wrow;
  assign r_dw         = lay_i.dw;
  assign r_bchk       = lay_i.bchk;
  assign r_add        = lay_i.add;
  assign r_res        = lay_i.res;
  assign r_need_all   = lay_i.need_all;
  assign r_vmode      = lay_i.vmode;
  assign r_rq         = lay_i.rq;
  assign r_act        = lay_i.act;
  assign r_q6         = lay_i.q6;
  assign r_s          = lay_i.s;
  assign r_sb         = lay_i.sb;
  assign r_m          = lay_i.m;
  assign r_mb         = lay_i.mb;
  assign r_kh         = lay_i.kh;
  assign r_kw         = lay_i.kw;
  assign r_wo         = lay_i.wo;
  assign r_hi         = lay_i.hi;
  assign r_wi         = lay_i.wi;
  assign r_stride     = lay_i.stride;
  assign r_cout       = lay_i.cout;
  assign r_cin        = lay_i.cin;
  assign r_cin_n      = KW'(lay_i.cin_n);
  assign r_ksc        = lay_i.ksc;
  assign r_p          = PW'(lay_i.p);
  assign r_npt        = PW'(lay_i.npt);
  assign r_nct        = JW'(lay_i.nct);
  assign r_cstep      = OW'(lay_i.cstep);
  assign r_rowk       = OW'(lay_i.rowk);
  assign r_stepx      = OW'(lay_i.stepx);
  assign r_stepwrap   = OW'(lay_i.stepwrap);
  assign r_srowb      = OW'(lay_i.srowb);
  assign r_offb       = OW'(lay_i.offb);
  assign r_offr       = OW'(lay_i.offr);
  assign r_in_total   = OW'(lay_i.in_total);
  assign r_p0_pbase   = OW'(lay_i.p0_pbase);
  assign r_p0_rowbase = OW'(lay_i.p0_rowbase);
  assign r_out        = AW'(lay_i.out);
  assign r_ib         = IAW'(lay_i.ib);
  assign r_idx        = lay_i.idx;
  assign r_p0_iy      = CW'(lay_i.p0_iy);
  assign r_p0_ix      = CW'(lay_i.p0_ix);
  assign a_loaded     = OW'(a_loaded_i);
  assign r_pack       = lay_i.pack;
  assign r_last_iy    = CW'(lay_i.last_iy);
  assign r_img_pb     = OW'(lay_i.img_pb);
  assign r_img_rb     = OW'(lay_i.img_rb);
  assign r_img_out    = AW'(lay_i.img_out);

  logic [PtrW-1:0] c_rec_q, c_rec_d;
  logic in_ok, w_ok, sh_ok, want, fire, quant_err;

  // one output position per PE row (lane 0 is the pixel of the vector unit): column ox, top-left
  // window corner (iy0, ix0, signed), input byte offset of that corner (pbase) and of its row
  // (rowbase), output byte offset (out) and position index (p)
  // (l_*_q: the lane registers; n_*: their values after the tile, see below)
  logic [15:0] l_ox_q [Rows], n_ox [Rows];
  logic [CW-1:0] l_iy0_q [Rows], n_iy0 [Rows];
  logic [CW-1:0] l_ix0_q [Rows], n_ix0 [Rows];
  logic [OW-1:0] l_pbase_q [Rows], n_pbase [Rows];
  logic [OW-1:0] l_rowbase_q [Rows], n_rowbase [Rows];
  logic [AW-1:0] l_out_q [Rows], n_out [Rows];
  logic [PW-1:0] l_p_q [Rows], n_p [Rows];
  // the walk: the tile (channel tile j, its first channel co0 and channel count cg, position
  // tile pt; done after the layer's last) and the reduction step within it (weight index widx,
  // input channel ci, kernel tap kx/ky and their input offsets); both zero at a layer's start
  typedef struct packed {
    logic [JW-1:0]  j;
    logic [CoW-1:0] co0;
    logic [NW-1:0]  cg;
    logic [PW-1:0]  pt;
    logic           done;
  } tile_t;
  typedef struct packed {
    logic [WAW-1:0] widx;
    logic [KW-1:0]  ci;
    logic [15:0]    kx, ky;
    logic [OW-1:0]  kxoff, kyoff;
  } step_t;
  tile_t c_tile_q;
  step_t c_step_q;
  logic c_reset_pos;

  // K-split: the tile's reduction runs in 2^c_ks column groups, each step takes 2^c_ks channels
  logic [1:0] c_ks;
  logic [KW-1:0] c_kf;
  assign c_ks = r_pe ? nasa_engine_pkg::ks_of(32'(c_tile_q.cg), r_ksc, Cols) : 2'd0;
  assign c_kf = KW'(1) << c_ks;

  logic last_ci, last_kx, last_ky, tile_last, last_pt, last_ct;
  assign last_ci   = (c_step_q.ci == r_cin_n - c_kf);
  assign last_kx   = (c_step_q.kx == r_kw - 16'd1);
  assign last_ky   = (c_step_q.ky == r_kh - 16'd1);
  assign tile_last = last_ci && last_kx && last_ky;
  assign last_pt   = (c_tile_q.pt == r_npt - PW'(1));
  assign last_ct   = (c_tile_q.j == r_nct - JW'(1));
  // lanes of the first tile are built from position 0 in the cycle after decode
  logic init_lanes_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) init_lanes_q <= 1'b0;
    else init_lanes_q <= cs_start_i;
  end
  assign c_reset_pos = last_pt || init_lanes_q;

  // next lanes: chain of single-position steps from the last lane (PE) or lane 0 (vector unit),
  // or from position 0 when a new channel tile starts
  always_comb begin : p_chain
    logic [15:0] t_ox;
    logic [CW-1:0] t_iy0, t_ix0;
    logic [OW-1:0] t_pbase, t_rowbase;
    logic [AW-1:0] t_out;
    logic [PW-1:0] t_p;
    t_ox      = r_pe ? l_ox_q[Rows-1] : l_ox_q[0];
    t_iy0     = r_pe ? l_iy0_q[Rows-1] : l_iy0_q[0];
    t_ix0     = r_pe ? l_ix0_q[Rows-1] : l_ix0_q[0];
    t_pbase   = r_pe ? l_pbase_q[Rows-1] : l_pbase_q[0];
    t_rowbase = r_pe ? l_rowbase_q[Rows-1] : l_rowbase_q[0];
    t_out     = r_pe ? l_out_q[Rows-1] : l_out_q[0];
    t_p       = r_pe ? l_p_q[Rows-1] : l_p_q[0];
    for (int r = 0; r < Rows; r++) begin
      if (r == 0 && c_reset_pos) begin
        t_ox      = '0;
        t_iy0     = r_p0_iy;
        t_ix0     = r_p0_ix;
        t_pbase   = r_p0_pbase;
        t_rowbase = r_p0_rowbase;
        t_out     = '0;
        t_p       = '0;
      end else if (t_ox == r_wo - 16'd1 && r_pack && t_iy0 == r_last_iy) begin
        // packed images: the next image's first position
        t_ox      = '0;
        t_iy0     = r_p0_iy;
        t_ix0     = r_p0_ix;
        t_pbase   = t_pbase + r_img_pb;
        t_rowbase = t_rowbase + r_img_rb;
        t_out     = t_out + r_img_out;
        t_p       = t_p + PW'(1);
      end else if (t_ox == r_wo - 16'd1) begin
        t_ox      = '0;
        t_iy0     = t_iy0 + CW'(r_stride);
        t_ix0     = r_p0_ix;
        t_pbase   = t_pbase + r_stepwrap;
        t_rowbase = t_rowbase + r_srowb;
        t_out     = t_out + AW'(r_cout);
        t_p       = t_p + PW'(1);
      end else begin
        t_ox    = t_ox + 16'd1;
        t_ix0   = t_ix0 + CW'(r_stride);
        t_pbase = t_pbase + r_stepx;
        t_out   = t_out + AW'(r_cout);
        t_p     = t_p + PW'(1);
      end
      n_ox[r]      = t_ox;
      n_iy0[r]     = t_iy0;
      n_ix0[r]     = t_ix0;
      n_pbase[r]   = t_pbase;
      n_rowbase[r] = t_rowbase;
      n_out[r]     = t_out;
      n_p[r]       = t_p;
    end
  end

  // readiness of the next step
  logic [OW-1:0] koff, need;
  logic [OW-1:0] rowbase_last;
  assign rowbase_last = r_pe ? l_rowbase_q[Rows-1] : l_rowbase_q[0];
  // (the lanes' input-buffer offsets are the input's; its place, r_ib and after a folded
  // residual r_offr, is added here once)
  assign koff = c_step_q.kyoff + c_step_q.kxoff + OW'(c_step_q.ci) + OW'(r_ib) + r_offr;

  always_comb begin : p_need
    logic [OW-1:0] n;
    // rows up to the one the current kernel row ky reads (its offset is c_step_q.kyoff = ky*row_b)
    // (none while the row is above the image: padding)
    n = rowbase_last + c_step_q.kyoff + r_rowk;
    if ($signed(n) < 0) n = '0;
    n = n + r_offr;  // (a folded residual arrives first, whole)
    if ($signed(n) > $signed(r_in_total)) n = r_in_total;
    if (r_need_all) n = r_in_total;
    else if (r_add) n = r_offb + l_pbase_q[0] + OW'(r_cin);
    need = n;
  end

  assign in_ok = (a_loaded >= need);
  // Conv/Fc: the weight column of the next step is in (K-split: the column of its last
  // reduction byte, (widx + 1) * 2^ks - 1); depthwise: the whole tile
  logic [31:0] w_col;
  logic [PtrW-1:0] c_fd;
  logic c_complete;
  assign w_col      = ((32'(c_step_q.widx) << c_ks) + 32'(c_kf) - 32'd1) >> $clog2(WChunk);
  assign c_fd       = rec_fill_i - c_rec_q;
  assign c_complete = (c_fd != '0) && !c_fd[PtrW-1];  // tile c_rec_q is older than rec_fill_i
  assign w_ok       = !r_pe || c_complete ||
                      (r_wrow && c_rec_q == rec_fill_i && 32'(rsp_cols_i) > w_col);
  assign sh_ok = !tile_last || (!shadow_full_i && !(s1_valid_i && s1_last_i));
  assign want  = a_v_i && !c_tile_q.done && !init_lanes_q;

  // a channel tile's per-channel records are checked before its first step
  logic first_step, tap0;
  // the first reduction step of a tile (c_step_q.widx cannot tell: it wraps at KredMax, and a global
  // average pool has H*W taps, up to InBufBytes)
  assign tap0       = (c_step_q.ci == '0) && (c_step_q.kx == '0) && (c_step_q.ky == '0);
  logic [Cols-1:0] s_bad;
  assign first_step = (c_tile_q.pt == '0) && tap0;
  always_comb begin : p_sbad
    for (int l = 0; l < Cols; l++) begin : g_l
      logic [7:0] sv;
      sv = prm_i[l*64 + 48 +: 8];
      s_bad[l] = (NW'(l) < c_tile_q.cg) && (sv == 8'd0 || sv > 8'(nasa_pkg::MaxShift));
    end
  end
  // a bad record stops the run once every layer before this one is complete
  logic bad_rec;
  assign bad_rec   = (r_rq == nasa_engine_pkg::RqChan) && first_step && (s_bad != '0);
  assign quant_err = want && w_ok && bad_rec && (layers_done_i == r_idx);
  assign fire      = want && w_ok && in_ok && sh_ok && !bad_rec;

  // per-lane input addresses and masks (offsets of valid taps lie inside the buffer, so only the
  // low IAW bits of an offset are used)
  logic [NumIn-1:0] mask;
  logic [$clog2(Rows+1)-1:0] n_act;
  logic [NumIn*(OW-IAW)-1:0] unused_a;
  always_comb begin : p_lanes
    logic [CW-1:0] iy, ix;
    logic [OW-1:0] a;
    logic inb;
    n_act = '0;
    unused_a = '0;
    for (int q = 0; q < NumIn; q++) begin
      mask[q] = 1'b0;
      in_raddr_o[q*IAW +: IAW] = '0;
      a = '0;
      if (r_pe) begin
        if (q < Rows) begin
          iy  = l_iy0_q[q] + CW'(c_step_q.ky);
          ix  = l_ix0_q[q] + CW'(c_step_q.kx);
          inb = !r_bchk || ($signed(iy) >= 0 && $signed(iy) < $signed(CW'(r_hi)) &&
                            $signed(ix) >= 0 && $signed(ix) < $signed(CW'(r_wi)));
          mask[q] = (l_p_q[q] < r_p) && inb;
          // DwConv: the Cols channels of the tile at this tap (a Cols-byte read)
          a = l_pbase_q[q] + koff + (r_dw ? OW'(c_tile_q.co0) : OW'(0));
          in_raddr_o[q*IAW +: IAW] = a[IAW-1:0];
          n_act = n_act + (l_p_q[q] < r_p ? 1 : 0);
        end
      end else if (q < Cols) begin
        iy  = l_iy0_q[0] + CW'(c_step_q.ky);
        ix  = l_ix0_q[0] + CW'(c_step_q.kx);
        inb = !r_bchk || ($signed(iy) >= 0 && $signed(iy) < $signed(CW'(r_hi)) &&
                          $signed(ix) >= 0 && $signed(ix) < $signed(CW'(r_wi)));
        mask[q] = (q < c_tile_q.cg) && inb;
        a = l_pbase_q[0] + koff + OW'(c_tile_q.co0) + OW'(q);
        in_raddr_o[q*IAW +: IAW] = a[IAW-1:0];
      end
      unused_a[q*(OW-IAW) +: OW-IAW] = a[OW-1:IAW];
    end
  end

  // the compute's tile: the layer's first at its start, the next one after each channel tile
  always_comb begin
    c_rec_d = c_rec_q;
    if (cs_start_i) c_rec_d = rec0_i;
    else if (fire && tile_last && last_pt && r_pe) c_rec_d = c_rec_q + PtrW'(1);
  end
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) c_rec_q <= '0;
    else if (run_start_i) c_rec_q <= '0;
    else c_rec_q <= c_rec_d;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      c_tile_q      <= '0;
      c_tile_q.done <= 1'b1;
      c_step_q      <= '0;
    end else if (cs_start_i) begin
      c_tile_q    <= '0;
      c_tile_q.cg <= (nx_cout_i > 16'(Cols)) ? NW'(Cols) : NW'(nx_cout_i);
      c_step_q    <= '0;
    end else if (fire) begin
      if (!tile_last) begin
        c_step_q.widx <= c_step_q.widx + 1'b1;
        if (!last_ci) begin
          c_step_q.ci <= c_step_q.ci + c_kf;
        end else begin
          c_step_q.ci <= '0;
          if (!last_kx) begin
            c_step_q.kx    <= c_step_q.kx + 16'd1;
            c_step_q.kxoff <= c_step_q.kxoff + r_cstep;
          end else begin
            c_step_q.kx    <= '0;
            c_step_q.kxoff <= '0;
            c_step_q.ky    <= c_step_q.ky + 16'd1;
            c_step_q.kyoff <= c_step_q.kyoff + r_rowk;
          end
        end
      end else begin
        c_step_q <= '0;
        if (last_pt) begin
          c_tile_q.pt <= '0;
          if (last_ct) begin
            c_tile_q.done <= 1'b1;
          end else begin
            c_tile_q.j   <= c_tile_q.j + JW'(1);
            c_tile_q.co0 <= c_tile_q.co0 + CoW'(Cols);
            c_tile_q.cg  <= (32'(r_cout) - 32'(c_tile_q.co0) - 32'(Cols) > 32'(Cols)) ?
                            NW'(Cols) : NW'(32'(r_cout) - 32'(c_tile_q.co0) - 32'(Cols));
          end
        end else begin
          c_tile_q.pt <= c_tile_q.pt + PW'(1);
        end
      end
    end
  end


  // lanes advance when a tile's last step issues
  always_ff @(posedge clk_i) begin
    for (int r = 0; r < Rows; r++) begin
      if (init_lanes_q || (fire && tile_last)) begin
        l_ox_q[r]      <= n_ox[r];
        l_iy0_q[r]     <= n_iy0[r];
        l_ix0_q[r]     <= n_ix0[r];
        l_pbase_q[r]   <= n_pbase[r];
        l_rowbase_q[r] <= n_rowbase[r];
        l_out_q[r]     <= n_out[r];
        l_p_q[r]       <= n_p[r];
      end
    end
  end
  logic [RowW:0] sh_rows;
  assign sh_rows = r_pe ? (RowW + 1)'(n_act) : (RowW + 1)'(1);

  // the drain's view of the finished tile (and of the layer, so the next layer may start before
  // this tile drains): taken when its last step issues
  always_comb begin
    sh_o      = '0;
    sh_o.n    = LNW'(c_tile_q.cg);
    sh_o.rows = LRW'(sh_rows);
    sh_o.lend = last_pt && last_ct;
    sh_o.pe   = r_pe;
    sh_o.ks   = c_ks;
    sh_o.rq   = r_rq;
    sh_o.act  = r_act;
    sh_o.q6   = r_q6;
    sh_o.m    = r_m;
    sh_o.s    = r_s;
    sh_o.res  = r_res;
    sh_o.mb   = r_mb;
    sh_o.sb   = r_sb;
    // the residual of the row at output address a is at input-buffer address a + rdelta
    sh_o.rdelta = LIAW'(IAW'(r_ib - IAW'(r_out)));
    for (int r = 0; r < Rows; r++) sh_addr_o[r*AW +: AW] = r_out + l_out_q[r] + AW'(c_tile_q.co0);
  end

  // the step for stage 1 (registered there every cycle)
  always_comb begin
    step_o       = '0;
    step_o.first = tap0;
    step_o.last  = tile_last;
    step_o.pe    = r_pe;
    step_o.dw    = r_dw;
    step_o.ks    = c_ks;
    step_o.vmode = r_vmode;
    step_o.m     = r_m;
    step_o.s     = r_s;
    step_o.mb    = r_mb;
    step_o.sb    = r_sb;
    step_o.macs  = r_pe ? (16'(n_act) * 16'(c_tile_q.cg)) << c_ks : 16'd0;
  end

  assign step_valid_o = fire;
  assign mask_o       = mask;
  assign tile_o       = fire && tile_last;
  assign want_o       = want;
  assign w_ok_o       = w_ok;
  assign in_ok_o      = in_ok;
  assign sh_ok_o      = sh_ok;
  assign quant_err_o  = quant_err;
  assign c_done_o     = c_tile_q.done;
  assign c_rec_o      = c_rec_q;
  assign c_rec_d_o    = c_rec_d;
  assign c_widx_o     = c_step_q.widx;

  // layer A's fields this unit does not read (the high bits of the rest: nasa_engine_pkg)
  logic unused_lay;
  assign unused_lay = ^{lay_i, a_loaded_i, unused_a};

`ifndef SYNTHESIS
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   step_valid_o |-> (want_o && w_ok_o && in_ok_o && sh_ok_o))
    else $error("step issued while not ready");
  // the tile handshake: the drain's shadow is free when a tile's last step issues
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   tile_o |-> (!shadow_full_i && !(s1_valid_i && s1_last_i)))
    else $error("tile issued into a full shadow");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   !$isunknown({want_o, step_valid_o, tile_o, quant_err_o, c_done_o}))
    else $error("X on issue stage control");
  assert property (@(posedge clk_i) disable iff (!rst_ni) !(step_valid_o && quant_err_o))
    else $error("step issued with a bad record");
`endif
endmodule
