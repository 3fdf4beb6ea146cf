// Engine unit: the drain. A finished tile (its results in the PE array's or the vector unit's
// shadow, its metadata taken from the issue stage with tile_i) drains row by row through the
// requant lanes into the output writer, which stores each row (one output position's channels)
// through the DMA's write path. A layer with a folded residual (Res) adds each row's residual,
// read from the input buffer (res_raddr_o, one cycle ahead), after the requant:
// A K-split tile's row (2^ks column groups) adds its groups first: result j is the sum of
// columns g * (Cols >> ks) + j.
// act(requant(y, M, S) + requant(r, Mb, Sb)). The dual drain (docs/engine.md "Dual drain", on
// configurations with a scratch whose requant lanes take a whole row, nasa_engine_pkg::
// dual_drain): a PE tile without a folded residual drains rows dr_row and dr_row + 1 in one cycle,
// into one writer entry. Contract: tile_i only while shadow_full_o is low;
// ly_end_o pulses when a layer's last row is written; res_rdata_i is the input buffer's read of
// res_raddr_o of the cycle before.
module nasa_engine_drain #(
  parameter nasa_pkg::cfg_t Cfg = nasa_pkg::CfgSim,  // the configuration (nasa_pkg::cfg_t)
  localparam int unsigned Rows = Cfg.rows, Cols = Cfg.cols, MemBytes = Cfg.mem_bytes,
                          RqLanes = Cfg.rq_lanes, AddrBits = Cfg.addr_bits,
  localparam int unsigned RowW    = (Rows > 1) ? $clog2(Rows) : 1,
  localparam int unsigned IAW     = $clog2(Cfg.in_buf_bytes)
) (
  input  logic                     clk_i,
  input  logic                     rst_ni,
  input  logic                     stop_i,         // abort: drop the tile, flush the writer
  // the tile the issue stage finished
  input  logic                     tile_i,
  input  nasa_engine_pkg::shadow_t sh_i,
  input  logic [Rows*AddrBits-1:0] sh_addr_i,
  input  logic [Cols*64-1:0]       prm_i,          // its per-channel records
  input  logic                     s1_done_i,      // its last step is in stage 1: results next
  output logic                     shadow_full_o,
  // results
  output logic [RowW-1:0]          dr_row_o,       // the row draining
  input  logic [Cols*32-1:0]       pe_row_i,
  input  logic [Cols*32-1:0]       pe_row2_i,      // row dr_row_o + 1 (the dual drain)
  input  logic [Cols*32-1:0]       vec_res_i,
  // a folded residual's row
  output logic [IAW-1:0]           res_raddr_o,
  input  logic [Cols*8-1:0]        res_rdata_i,
  output logic                     ly_end_o,
  output logic                     dr_lend_o,      // a layer's last row leaves the drain
  // stores
  output logic                     wr_valid_o,
  input  logic                     wr_ready_i,
  output logic [AddrBits-1:0]      wr_addr_o,
  output logic [MemBytes*8-1:0]    wr_data_o,
  output logic [MemBytes-1:0]      wr_strb_o,
  // the dual drain's second store into the scratch (nasa_out_writer)
  input  logic                     wr_sc_i,
  input  logic                     wr2_sc_i,
  output logic                     wr2_valid_o,
  output logic [AddrBits-1:0]      wr2_addr_o,
  output logic [MemBytes*8-1:0]    wr2_data_o,
  output logic [MemBytes-1:0]      wr2_strb_o
);
  localparam int unsigned AW = AddrBits;
  localparam int unsigned NW = $clog2(Cols + 1);
  localparam bit Dual = nasa_engine_pkg::dual_drain(Cfg.scratch_bytes, RqLanes, Cols, Rows);

  // shadow (drain) metadata, taken when a tile's last step issues
  logic shadow_full_q;
  logic [RowW-1:0] dr_row_q;
  logic [AW-1:0] sh_addr_q [Rows];
  logic [Cols*64-1:0] prm_sh_q;
  logic [RowW:0] sh_rows_q;
  logic [NW-1:0] sh_n_q;
  logic sh_lend_q, sh_pe_q;  // the layer's last tile; PE array or vector unit results
  // (a K-split code, not a state machine: see nasa_engine_compute)
  (* fsm_encoding = "none" *) logic [1:0] sh_ks_q;
  logic [1:0] sh_rq_q, sh_act_q;
  logic [7:0] sh_q6_q, sh_s_q, sh_sb_q;
  logic [15:0] sh_m_q, sh_mb_q;
  logic sh_res_q;
  logic [IAW-1:0] sh_rdelta_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      sh_rows_q <= '0;
      sh_n_q    <= '0;
      sh_lend_q <= 1'b0;
      sh_pe_q   <= 1'b0;
      sh_ks_q   <= '0;
      sh_rq_q   <= '0;
      sh_act_q  <= '0;
      sh_q6_q   <= '0;
      sh_m_q    <= '0;
      sh_s_q    <= '0;
      sh_res_q  <= 1'b0;
      sh_mb_q   <= '0;
      sh_sb_q   <= '0;
      sh_rdelta_q <= '0;
    end else if (tile_i) begin
      sh_rows_q <= (RowW + 1)'(sh_i.rows);
      sh_n_q    <= NW'(sh_i.n);
      sh_lend_q <= sh_i.lend;
      sh_pe_q   <= sh_i.pe;
      sh_ks_q   <= sh_i.ks;
      sh_rq_q   <= sh_i.rq;
      sh_act_q  <= sh_i.act;
      sh_q6_q   <= sh_i.q6;
      sh_m_q    <= sh_i.m;
      sh_s_q    <= sh_i.s;
      sh_res_q  <= sh_i.res;
      sh_mb_q   <= sh_i.mb;
      sh_sb_q   <= sh_i.sb;
      sh_rdelta_q <= IAW'(sh_i.rdelta);
    end
  end
  always_ff @(posedge clk_i) begin
    if (tile_i) begin
      prm_sh_q <= prm_i;
      for (int r = 0; r < Rows; r++) sh_addr_q[r] <= sh_addr_i[r*AW +: AW];
    end
  end

  // A finished tile's rows (one output position's channels each) go through RqLanes requant
  // lanes: a row of n results takes ceil(n / RqLanes) phases; the first phases' bytes wait in
  // rq_part_q and the row goes to the writer in its last phase.
  localparam int unsigned NPh  = Cols / RqLanes;
  localparam int unsigned PhW  = (NPh > 1) ? $clog2(NPh) : 1;
  localparam int unsigned RqLW = (RqLanes > 1) ? $clog2(RqLanes) : 0;
  logic row_valid, row_ready;
  logic [Cols*8-1:0] row_data;
  logic [Cols*32-1:0] row_vals;
  logic [PhW-1:0] rq_ph_q;
  logic rq_ph_last;
  // rows this cycle takes (2: the dual drain), and whether they end the tile
  logic dual_row, tile_end;
  logic [1:0] dr_n;

  assign rq_ph_last = (NPh == 1) ||
                      (((NW + 1)'(rq_ph_q) + (NW + 1)'(1)) << RqLW >= (NW + 1)'(sh_n_q));

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      shadow_full_q <= 1'b0;
      dr_row_q      <= '0;
      rq_ph_q       <= '0;
    end else if (stop_i) begin
      shadow_full_q <= 1'b0;
      dr_row_q      <= '0;
      rq_ph_q       <= '0;
    end else begin
      if (s1_done_i) shadow_full_q <= 1'b1;
      if (shadow_full_q && !rq_ph_last) rq_ph_q <= rq_ph_q + 1'b1;
      if (row_valid && row_ready) begin
        rq_ph_q <= '0;
        if (tile_end) begin
          shadow_full_q <= 1'b0;
          dr_row_q      <= '0;
        end else begin
          dr_row_q <= dr_row_q + RowW'(dr_n);
        end
      end
    end
  end

  assign row_valid = shadow_full_q && !stop_i && rq_ph_last;
  assign dual_row = Dual && sh_pe_q && !sh_res_q && (RowW + 1)'(dr_row_q) + 1'b1 < sh_rows_q;
  assign dr_n     = dual_row ? 2'd2 : 2'd1;
  assign tile_end = (RowW + 1)'(dr_row_q) + (RowW + 1)'(dr_n) == sh_rows_q;
  // K-split: the column groups folded in halves (int32 sums wrap, so the order does not matter)
  logic [Cols*32-1:0] pe_k1 [2], pe_k2 [2], pe_in [2], row2_vals;
  assign pe_in[0] = pe_row_i;
  assign pe_in[1] = pe_row2_i;
  always_comb begin
    for (int q = 0; q < 2; q++) begin
      pe_k1[q] = pe_in[q];
      pe_k2[q] = pe_in[q];
      if (Cols >= 2) begin
        for (int j = 0; j < Cols / 2; j++) begin
          pe_k1[q][j*32 +: 32] = pe_in[q][j*32 +: 32] + pe_in[q][(j + Cols / 2)*32 +: 32];
        end
      end
      if (Cols >= 4) begin
        for (int j = 0; j < Cols / 4; j++) begin
          pe_k2[q][j*32 +: 32] = pe_k1[q][j*32 +: 32] + pe_k1[q][(j + Cols / 4)*32 +: 32];
        end
      end
    end
  end
  assign row_vals = !sh_pe_q ? vec_res_i :
                    (sh_ks_q == 2'd0 ? pe_row_i : (sh_ks_q == 2'd1 ? pe_k1[0] : pe_k2[0]));
  assign row2_vals = sh_ks_q == 2'd0 ? pe_row2_i : (sh_ks_q == 2'd1 ? pe_k1[1] : pe_k2[1]);

  // the residual read: the row that drains next cycle (the input buffer answers a cycle later)
  logic [RowW-1:0] dr_row_nx;
  always_comb begin
    dr_row_nx = dr_row_q;
    if (stop_i) dr_row_nx = '0;
    else if (row_valid && row_ready) dr_row_nx = tile_end ? '0 : dr_row_q + RowW'(dr_n);
  end
  assign res_raddr_o = IAW'(sh_addr_q[dr_row_nx]) + sh_rdelta_q;

  logic [RqLanes*8-1:0] rq_y;
  for (genvar j = 0; j < RqLanes; j++) begin : g_rq
    logic [63:0] rec;
    logic [31:0] val;
    logic [7:0] rb, y0, y1;
    if (NPh == 1) begin : g_direct
      assign rec = prm_sh_q[j*64 +: 64];
      assign val = row_vals[j*32 +: 32];
      assign rb  = res_rdata_i[j*8 +: 8];
    end else begin : g_phase
      assign rec = prm_sh_q[(32'(rq_ph_q) * RqLanes + j)*64 +: 64];
      assign val = row_vals[(32'(rq_ph_q) * RqLanes + j)*32 +: 32];
      assign rb  = res_rdata_i[(32'(rq_ph_q) * RqLanes + j)*8 +: 8];
    end
    nasa_drain_lane u_rq (
      .rq_i (sh_rq_q),
      .val_i(val),
      .rec_i(rec),
      .m_i  (sh_m_q),
      .s_i  (sh_s_q),
      .act_i(sh_res_q ? 2'(nasa_pkg::ActNone) : sh_act_q),  // (Res: after the add)
      .q6_i (sh_q6_q),
      .y_o  (y0)
    );
    // a folded residual: act(requant(y, M, S) + requant(r, Mb, Sb))
    logic [31:0] rsum;
    assign rsum = nasa_engine_pkg::rq8(y0, sh_m_q, sh_s_q) +
                  nasa_engine_pkg::rq8(rb, sh_mb_q, sh_sb_q);
    nasa_requant u_res (
      .bypass_i(1'b1),
      .val_i   (rsum),
      .bias_i  (32'd0),
      .m_i     (16'd0),
      .s_i     (8'd0),
      .act_i   (sh_act_q),
      .q6_i    (sh_q6_q),
      .y_o     (y1)
    );
    assign rq_y[j*8 +: 8] = sh_res_q ? y1 : y0;
  end
  // the dual drain's second row: requant lanes of its own (no folded residual)
  logic [Cols*8-1:0] row2_data;
  if (Dual) begin : g_rq2
    for (genvar j = 0; j < Cols; j++) begin : g_lane
      nasa_drain_lane u_rq (
        .rq_i (sh_rq_q),
        .val_i(row2_vals[j*32 +: 32]),
        .rec_i(prm_sh_q[j*64 +: 64]),
        .m_i  (sh_m_q),
        .s_i  (sh_s_q),
        .act_i(sh_act_q),
        .q6_i (sh_q6_q),
        .y_o  (row2_data[j*8 +: 8])
      );
    end
  end else begin : g_no_rq2
    logic unused_row2;
    assign unused_row2 = ^row2_vals;
    assign row2_data = '0;
  end
  if (NPh == 1) begin : g_row_direct
    assign row_data = rq_y;
  end else begin : g_row_phased
    logic [Cols*8-1:0] rq_part_q;
    always_ff @(posedge clk_i) begin
      if (shadow_full_q && !rq_ph_last) rq_part_q[32'(rq_ph_q)*RqLanes*8 +: RqLanes*8] <= rq_y;
    end
    always_comb begin
      row_data = rq_part_q;
      row_data[32'(rq_ph_q)*RqLanes*8 +: RqLanes*8] = rq_y;
    end
  end

  // the last row of a layer's last tile: the writer reports when it is written (ly_end_o)
  logic row_lend;
  assign row_lend = sh_lend_q && tile_end;
  nasa_out_writer #(
    .Cols    (Cols),
    .MemBytes(MemBytes),
    .Depth   (nasa_pkg::WriterDepth),
    .AddrBits(AW),
    .Dual    (Dual)
  ) u_out (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .flush_i    (stop_i),
    .row_valid_i(row_valid),
    .row_ready_o(row_ready),
    .row_addr_i (sh_addr_q[dr_row_q]),
    .row_n_i    (sh_n_q),
    .row_data_i (row_data),
    .row_two_i  (dual_row),
    .row_addr2_i(sh_addr_q[dr_row_q + RowW'(1)]),
    .row_data2_i(row2_data),
    .row_last_i (row_lend),
    .last_o     (ly_end_o),
    .wr_valid_o (wr_valid_o),
    .wr_ready_i (wr_ready_i),
    .wr_addr_o  (wr_addr_o),
    .wr_data_o  (wr_data_o),
    .wr_strb_o  (wr_strb_o),
    .wr_sc_i    (wr_sc_i),
    .wr2_sc_i   (wr2_sc_i),
    .wr2_valid_o(wr2_valid_o),
    .wr2_addr_o (wr2_addr_o),
    .wr2_data_o (wr2_data_o),
    .wr2_strb_o (wr2_strb_o)
  );

  assign shadow_full_o = shadow_full_q;
  assign dr_lend_o     = row_valid && row_ready && row_lend;
  assign dr_row_o      = dr_row_q;

  // the high bits of the metadata's fields (see nasa_engine_pkg)
  logic unused_sh;
  assign unused_sh = ^sh_i;

`ifndef SYNTHESIS
  // the tile handshake: a finished tile only into a free shadow
  assert property (@(posedge clk_i) disable iff (!rst_ni) tile_i |-> !shadow_full_q)
    else $error("tile handed to a full shadow");
  // the writer's row handshake: a row offered holds until taken
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (row_valid && !row_ready && !stop_i) |=>
                   (stop_i || (row_valid && $stable(row_data) && $stable(dr_row_q))))
    else $error("drained row changed while stalled");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   !$isunknown({shadow_full_q, row_valid, ly_end_o, wr_valid_o}))
    else $error("X on drain control");
`endif
endmodule
