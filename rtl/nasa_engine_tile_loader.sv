// Engine unit: the tile loader and the weight ring (docs/engine.md "Weight ring"). Channel tiles
// go into the ring one after another, each with a record slot for its per-channel records: tile
// bytes are k*k*Cin (Conv/Fc) or k*k (DwConv) per lane, rounded up to the port width. Conv/Fc
// weights of a tile load column by column (WChunk bytes of every row, then the next WChunk), so
// the PE array starts on a tile as soon as the columns its next steps read are in (a K-split
// tile's columns are dealt over its 2^ks bank groups as they arrive). Records are
// freed oldest first, and only when the loader needs room and the compute has moved past them
// (q.rec_rd != c_rec_i), so the last tiles stay in the ring. Weights kept on chip: a layer with
// the previous layer's weights and records (same addresses, Cout and reduction) computes from
// that layer's tiles while all of them are still in the ring, and loads none.
// Contract: a job request holds until granted (unless the run stops or a layer starts); idle_o
// once every job of the newest started layer is issued; rec0_o: the first tile of the layer
// started last; rec_fill_o / rsp_cols_o: complete tiles / weight columns of tile rec_fill_o.
`include "nasa_regs.svh"

module nasa_engine_tile_loader #(
  parameter nasa_pkg::cfg_t Cfg = nasa_pkg::CfgSim,  // the configuration (nasa_pkg::cfg_t)
  localparam int unsigned Cols = Cfg.cols, MemBytes = Cfg.mem_bytes, KredMax = Cfg.kred_max,
                          BurstMax = Cfg.burst_max, AddrBits = Cfg.addr_bits, WTiles = Cfg.wtiles,
  localparam int unsigned PtrW    = $clog2(WTiles) + 2,  // ring pointers (see below)
  localparam int unsigned WRW     = $clog2(2 * KredMax),
  localparam int unsigned HJW     = $clog2(2 + Cols * ((KredMax + BurstMax * MemBytes / 2 - 1) /
                                                       (BurstMax * MemBytes / 2)) + 49)
) (
  input  logic                     clk_i,
  input  logic                     rst_ni,
  input  logic                     run_start_i,  // a run starts with an empty ring
  input  logic                     ld_start_i,   // a layer starts loading (cfg_i valid)
  input  nasa_engine_pkg::tl_cfg_t cfg_i,
  input  logic                     stop_i,
  output logic                     req_valid_o,
  output nasa_engine_pkg::job_t    req_o,
  input  logic                     grant_i,
  output logic                     idle_o,
  // weight responses (any layer's: they arrive while the loader works on the next)
  input  logic                     rsp_last_i,   // a weight job's last beat
  input  logic                     rsp_flag_i,   // of its tile's last job
  input  logic                     rsp_col_i,    // of a weight column's last row
  // the compute's tile
  input  logic [PtrW-1:0]          c_rec_i,
  output logic [WRW-1:0]           c_base_o,     // its ring address
  output logic [PtrW-1:0]          rec0_o,
  output logic [PtrW-1:0]          rec_wr_o,
  output logic [PtrW-1:0]          rec_fill_o,
  output logic [HJW-1:0]           rsp_cols_o
);
  // The ring: 2*KredMax bytes per lane, holding up to WTiles channel tiles; each tile's records
  // sit in one of WTiles record slots. Ring pointers are PtrW bits: two more than a slot index,
  // so their differences (within +-WTiles) keep their sign.
  localparam int unsigned WDepth = 2 * KredMax;
  localparam int unsigned TRW    = $clog2(WTiles);
  localparam int unsigned ColW   = (Cols > 1) ? $clog2(Cols) : 1;
  localparam int unsigned NW     = $clog2(Cols + 1);
  localparam int unsigned AW     = AddrBits;
  localparam int unsigned KW     = $clog2(KredMax + 1);
  localparam int unsigned JW     = 17;
  localparam int unsigned CoW    = 17;
  localparam int unsigned WChunk = BurstMax * MemBytes / 2;  // bytes of each row per job
  localparam int unsigned LAW    = nasa_engine_pkg::LyAw;
  localparam int unsigned LBW    = nasa_engine_pkg::LyBw;

  // the registers (reset: all zero)
  typedef struct packed {
    logic [JW-1:0]   tl_j;
    logic [CoW-1:0]  tl_co0;
    logic [7:0]      tl_row;                     // weight column row (< Cols) or depthwise tap
    logic [KW-1:0]   tl_off;                     // offset of the weight column in a row (< KredMax)
    logic [AW-1:0]   tl_row_src;
    logic [AW-1:0]   tl_rsrc;
    logic [AW-1:0]   tl_tap_src;
    logic [AW-1:0]   tl_tapbase;
    logic [NW-1:0]   tl_cg;
    logic [1:0]      tl_ks;                      // the tile's K-split (nasa_engine_pkg::ks_of)
    logic [WRW-1:0]  tl_base;                    // ring address of the tile being issued
    logic            tl_pe;
    logic [WRW-1:0]  rg_head;
    logic [WRW:0]    rg_used;
    logic [PtrW-1:0] rec_rd;
    logic [PtrW-1:0] rec_wr;
  } regs_t;
  regs_t q, d;
  nasa_engine_pkg::tl_phase_e tl_phase_q, tl_phase_d;  // (a typed enum: outside the struct for Yosys 0.23)
  // tiles [q.rec_rd, q.rec_wr) are live, [q.rec_rd, rec_fill_q) complete; rsp_cols_q counts the
  // complete weight columns of tile rec_fill_q
  logic [WRW-1:0] rec_base_q [WTiles];
  logic [WRW-1:0] rec_size_q [WTiles];
  logic [PtrW-1:0] rec_fill_q, rec_n, rec0_q;
  logic [HJW-1:0] rsp_cols_q;
  // the loading layer's constants (taken at ld_start_i)
  logic tl_wrow_q;
  logic [JW-1:0] tl_nct_q;
  logic [AW-1:0] tl_prm_q;
  logic [15:0] tl_cout_q, tl_cin_q, tl_kk_q;
  logic [KW-1:0] tl_kred_q;
  // (a K-split limit, not a state machine: see nasa_engine_compute)
  (* fsm_encoding = "none" *) logic [1:0] tl_ksc_q;
  logic [WRW-1:0] tl_tsz_q;  // ring bytes of one tile
  // weights kept on chip: the previous layer used weights, and its first tile is still in the
  // ring (cleared when that tile is evicted; tiles leave in order, so the rest are then in too)
  logic pw_v_q, pw_wrow_q;
  logic [AW-1:0] pw_wgt_q, pw_prm_q;
  logic [15:0] pw_cout_q;
  logic [KW-1:0] pw_kred_q;
  logic [1:0] pw_ksc_q;
  logic [PtrW-1:0] pw_rec0_q;

  logic reuse, pw_evict, alloc, ahead_ok, space_ok, evict_ok, tl_colend;
  logic [KW-1:0] tl_rest;
  logic [WRW-1:0] tl_waddr;  // ring address of the next weight job (wraps at WDepth)
  logic [CoW-1:0] cg_full;

  always_ff @(posedge clk_i) begin
    if (ld_start_i) begin
      tl_wrow_q <= cfg_i.wrow;
      tl_nct_q  <= JW'(cfg_i.nct);
      tl_prm_q  <= AW'(cfg_i.prm);
      tl_cout_q <= cfg_i.cout;
      tl_cin_q  <= cfg_i.cin;
      tl_kk_q   <= cfg_i.kk;
      tl_kred_q <= KW'(cfg_i.kred);
      tl_tsz_q  <= WRW'(cfg_i.tsz);
      tl_ksc_q  <= cfg_i.ksc;
    end
  end

  assign reuse     = pw_v_q && cfg_i.pe && cfg_i.wrow == pw_wrow_q && AW'(cfg_i.wgt) == pw_wgt_q &&
                     AW'(cfg_i.prm) == pw_prm_q && cfg_i.cout == pw_cout_q &&
                     KW'(cfg_i.kred) == pw_kred_q && cfg_i.ksc == pw_ksc_q;
  assign tl_rest   = tl_kred_q - q.tl_off;
  assign tl_colend = (9'(q.tl_row) + 9'd1 == 9'(q.tl_cg));
  assign rec_n     = q.rec_wr - q.rec_rd;
  // the loader stays at most one tile ahead of the compute (loading further ahead takes the
  // memory port from the output writes); it evicts only when the ring has no room for the next
  assign ahead_ok  = (q.rec_wr - c_rec_i < PtrW'(2));
  assign space_ok  = (rec_n != PtrW'(WTiles)) &&
                     ((WRW + 1)'(q.rg_used) + (WRW + 1)'(tl_tsz_q) <= (WRW + 1)'(WDepth));
  assign evict_ok  = (rec_n != '0) && (q.rec_rd != c_rec_i);
  assign alloc     = (tl_phase_q == nasa_engine_pkg::TlAlloc) && !stop_i && q.tl_pe &&
                     q.tl_j < tl_nct_q && ahead_ok;
  assign pw_evict  = alloc && !space_ok && evict_ok && q.rec_rd == pw_rec0_q;
  assign cg_full   = CoW'(tl_cout_q) - q.tl_co0;
  assign tl_waddr  = q.tl_base + (tl_wrow_q ? WRW'(q.tl_off >> q.tl_ks) : WRW'(q.tl_row));

  logic [AW-1:0] prm_src;
  assign prm_src     = tl_prm_q + (AW'(q.tl_co0) << 3);
  assign req_valid_o = !stop_i && q.tl_pe && (tl_phase_q != nasa_engine_pkg::TlAlloc);
  always_comb begin
    req_o = '0;
    if (tl_phase_q == nasa_engine_pkg::TlPrm) begin
      req_o.src  = LAW'(prm_src);
      req_o.len  = 32'(q.tl_cg) << 3;
      req_o.base = LBW'(TRW'(q.rec_wr - PtrW'(1)));
      req_o.dst  = nasa_engine_pkg::DstPrm;
    end else if (tl_wrow_q) begin
      req_o.src  = LAW'(q.tl_rsrc);
      req_o.len  = (32'(tl_rest) > 32'(WChunk)) ? 32'(WChunk) : 32'(tl_rest);
      req_o.base = LBW'(tl_waddr);
      req_o.bank = {tl_colend, q.tl_row[6:0]};
      req_o.flag = tl_colend && 32'(tl_rest) <= 32'(WChunk);
      req_o.dst  = (q.tl_ks == 2'd0) ? nasa_engine_pkg::DstWRow :
                   ((q.tl_ks == 2'd1) ? nasa_engine_pkg::DstWK2 : nasa_engine_pkg::DstWK4);
    end else begin
      req_o.src  = LAW'(q.tl_tap_src);
      req_o.len  = 32'(q.tl_cg);
      req_o.base = LBW'(tl_waddr);
      req_o.flag = 16'(q.tl_row) + 16'd1 == tl_kk_q;
      req_o.dst  = nasa_engine_pkg::DstWScat;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rec_fill_q <= '0;
      rsp_cols_q <= '0;
    end else if (run_start_i) begin
      rec_fill_q <= '0;
      rsp_cols_q <= '0;
    end else if (rsp_last_i) begin
      if (rsp_flag_i) begin
        rec_fill_q <= rec_fill_q + PtrW'(1);
        rsp_cols_q <= '0;
      end else if (rsp_col_i) begin
        rsp_cols_q <= rsp_cols_q + HJW'(1);
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (alloc && space_ok) begin
      rec_base_q[TRW'(q.rec_wr)] <= q.rg_head;
      rec_size_q[TRW'(q.rec_wr)] <= tl_tsz_q;
    end
  end

  always_comb begin
    d = q;
    tl_phase_d = tl_phase_q;
    if (run_start_i) begin
      d.rg_head = '0;
      d.rg_used = '0;
      d.rec_rd  = '0;
      d.rec_wr  = '0;
    end else if (ld_start_i) begin
      d.tl_pe      = cfg_i.pe && !reuse;
      tl_phase_d   = nasa_engine_pkg::TlAlloc;
      d.tl_j       = '0;
      d.tl_co0     = '0;
      d.tl_row_src = AW'(cfg_i.wgt);
      d.tl_tapbase = AW'(cfg_i.wgt);
    end else if (stop_i) begin
      d.tl_pe    = 1'b0;  // the loader idles
      tl_phase_d = nasa_engine_pkg::TlAlloc;
    end else begin
      unique case (tl_phase_q)
        nasa_engine_pkg::TlAlloc: begin
          if (alloc) begin
            if (space_ok) begin
              tl_phase_d   = nasa_engine_pkg::TlPrm;
              d.tl_base    = q.rg_head;
              d.rg_head    = q.rg_head + tl_tsz_q;
              d.rg_used    = q.rg_used + (WRW + 1)'(tl_tsz_q);
              d.rec_wr     = q.rec_wr + PtrW'(1);
              d.tl_rsrc    = q.tl_row_src;
              d.tl_cg      = (cg_full > CoW'(Cols)) ? NW'(Cols) : NW'(cg_full);
              d.tl_ks      = nasa_engine_pkg::ks_of((cg_full > CoW'(Cols)) ? Cols :
                                                    32'(cg_full), tl_ksc_q, Cols);
              d.tl_row     = '0;
              d.tl_off     = '0;
              d.tl_tap_src = q.tl_tapbase;
            end else if (evict_ok) begin
              d.rg_used = q.rg_used - (WRW + 1)'(rec_size_q[TRW'(q.rec_rd)]);
              d.rec_rd  = q.rec_rd + PtrW'(1);
            end
          end
        end
        nasa_engine_pkg::TlPrm: begin
          if (grant_i) tl_phase_d = nasa_engine_pkg::TlWgt;
        end
        nasa_engine_pkg::TlWgt: begin
          if (grant_i) begin
            if (tl_wrow_q) begin
              if (tl_colend) begin
                d.tl_row = '0;
                if (32'(tl_rest) <= 32'(WChunk)) begin
                  tl_phase_d   = nasa_engine_pkg::TlAlloc;
                  d.tl_j       = q.tl_j + JW'(1);
                  d.tl_co0     = q.tl_co0 + CoW'(Cols);
                  d.tl_row_src = q.tl_row_src + (AW'(tl_kred_q) << ColW);
                end else begin
                  d.tl_off  = q.tl_off + KW'(WChunk);
                  d.tl_rsrc = q.tl_row_src + AW'(q.tl_off) + AW'(WChunk);
                end
              end else begin
                d.tl_row  = q.tl_row + 8'd1;
                d.tl_rsrc = q.tl_rsrc + AW'(tl_kred_q);
              end
            end else begin
              d.tl_tap_src = q.tl_tap_src + AW'(tl_cin_q);
              d.tl_row     = q.tl_row + 8'd1;
              if (16'(q.tl_row) + 16'd1 == tl_kk_q) begin
                tl_phase_d   = nasa_engine_pkg::TlAlloc;
                d.tl_j       = q.tl_j + JW'(1);
                d.tl_co0     = q.tl_co0 + CoW'(Cols);
                d.tl_tapbase = q.tl_tapbase + AW'(Cols);
              end
            end
          end
        end
        default: tl_phase_d = nasa_engine_pkg::TlAlloc;
      endcase
    end
  end

  `NASA_FF(q, d, '0)
  `NASA_FF(tl_phase_q, tl_phase_d, nasa_engine_pkg::TlAlloc)

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      pw_v_q <= 1'b0;
    end else if (run_start_i) begin
      pw_v_q <= 1'b0;
    end else if (pw_evict) begin
      pw_v_q <= 1'b0;  // (no ld_start_i now: the loader is busy)
    end else if (ld_start_i) begin
      pw_v_q    <= cfg_i.pe;
      pw_wrow_q <= cfg_i.wrow;
      pw_wgt_q  <= AW'(cfg_i.wgt);
      pw_prm_q  <= AW'(cfg_i.prm);
      pw_cout_q <= cfg_i.cout;
      pw_kred_q <= KW'(cfg_i.kred);
      pw_ksc_q  <= cfg_i.ksc;
      pw_rec0_q <= reuse ? pw_rec0_q : q.rec_wr;
    end
  end

  // the started layer's first tile: the compute's at its cs_start
  always_ff @(posedge clk_i) begin
    if (ld_start_i) rec0_q <= reuse ? pw_rec0_q : q.rec_wr;
  end

  assign idle_o     = !q.tl_pe || (q.tl_j == tl_nct_q);
  assign c_base_o   = rec_base_q[TRW'(c_rec_i)];
  assign rec0_o     = rec0_q;
  assign rec_wr_o   = q.rec_wr;
  assign rec_fill_o = rec_fill_q;
  assign rsp_cols_o = rsp_cols_q;

  // the high bits of the configuration's fields (see nasa_engine_pkg)
  logic unused_cfg;
  assign unused_cfg = ^cfg_i;

`ifndef SYNTHESIS
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   tl_phase_q == nasa_engine_pkg::TlAlloc ||
                   tl_phase_q == nasa_engine_pkg::TlPrm || tl_phase_q == nasa_engine_pkg::TlWgt)
    else $error("tile loader phase is not a legal phase");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (req_valid_o && !grant_i && !stop_i && !ld_start_i && !run_start_i) |=>
                   (stop_i || (req_valid_o && $stable(req_o))))
    else $error("weight job withdrawn or changed while stalled");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   !$isunknown({req_valid_o, idle_o, tl_phase_q}))
    else $error("X on tile loader control");
  // the ring never holds more tiles than record slots, nor more bytes than it has
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   rec_n <= PtrW'(WTiles) && q.rg_used <= (WRW + 1)'(WDepth))
    else $error("weight ring overfull");
`endif
endmodule
