// Engine unit: the compute datapath. The input buffer (written by input response beats, read by
// the issue stage's per-lane addresses), the weight ring's banks and the per-channel record
// slots (written by weight and record beats), compute stage 1 (the issued step, registered) and
// the PE array and vector unit it drives. Contract: step_i / mask_i are taken every cycle (the
// step counts when step_valid_i); prm_o holds the records of slot prm_slot_i of the cycle before;
// pe_row_o is row dr_row_i of the PE array's result shadow (pe_row2_o row dr_row_i + 1, for the
// dual drain), vec_res_o the vector unit's.
module nasa_engine_compute #(
  parameter nasa_pkg::cfg_t Cfg = nasa_pkg::CfgSim,  // the configuration (nasa_pkg::cfg_t)
  localparam int unsigned Rows = Cfg.rows, Cols = Cfg.cols, MemBytes = Cfg.mem_bytes,
                          InBufBytes = Cfg.in_buf_bytes, KredMax = Cfg.kred_max,
                          WTiles = Cfg.wtiles,
  localparam int unsigned NumIn     = (Rows > Cols) ? Rows : Cols,
  localparam int unsigned IAW       = $clog2(InBufBytes),
  localparam int unsigned WAW       = $clog2(KredMax),
  localparam int unsigned WRW       = $clog2(2 * KredMax),
  localparam int unsigned TRW       = $clog2(WTiles),
  localparam int unsigned RowW      = (Rows > 1) ? $clog2(Rows) : 1
) (
  input  logic                          clk_i,
  input  logic                          rst_ni,
  // DMA response beats
  input  logic                          rsp_valid_i,
  input  logic [2:0]                    rsp_dst_i,   // nasa_engine_pkg::dst_e
  input  logic [7:0]                    rsp_bank_i,
  input  logic [nasa_engine_pkg::LyBw-1:0] rsp_base_i,
  input  logic [31:0]                   rsp_idx_i,
  input  logic [31:0]                   rsp_addr_i,
  input  logic [MemBytes*8-1:0]         rsp_data_i,
  // reads
  input  logic [NumIn*IAW-1:0]          in_raddr_i,
  input  logic [IAW-1:0]                res_raddr_i, // the drain's port: a folded residual's row
  output logic [Cols*8-1:0]             res_rdata_o,
  input  logic [WRW-1:0]                c_base_i,    // ring address of the compute's tile
  input  logic [WAW-1:0]                c_widx_i,    // the step's row in it
  input  logic [TRW-1:0]                prm_slot_i,  // record slot of the compute's next tile
  output logic [Cols*64-1:0]            prm_o,
  // stage 1
  input  logic                          step_valid_i,
  input  nasa_engine_pkg::step_t        step_i,
  input  logic [NumIn-1:0]              mask_i,
  output logic                          s1_valid_o,
  output logic                          s1_last_o,
  output logic                          s1_pe_o,
  output logic [15:0]                   s1_macs_o,
  // results
  input  logic [RowW-1:0]               dr_row_i,
  output logic [Cols*32-1:0]            pe_row_o,
  output logic [Cols*32-1:0]            pe_row2_o,
  output logic [Cols*32-1:0]            vec_res_o
);
  localparam int unsigned ColW = (Cols > 1) ? $clog2(Cols) : 1;
  localparam int unsigned NPW  = (Cols * 8 + MemBytes - 1) / MemBytes;  // port words per slot

  // ======================= buffers =======================
  // (no writes in reset: the DMA's response registers hold power-up values until its first clock
  // edge, and the buffers have no reset of their own; simulated with random power-up values,
  // NASA_X_SEED, a write in reset trips their alignment checks)
  // one port per lane, and the drain's (the last) for a folded residual
  logic [(NumIn+1)*Cols*8-1:0] in_wide;  // Cols bytes from each port's address
  logic [NumIn*8-1:0] in_rdata;          // the lanes' addressed bytes
  nasa_in_buf #(
    .Bytes   (InBufBytes),
    .MemBytes(MemBytes),
    .NumPorts(NumIn + 1),
    .Width   (Cols)
  ) u_in_buf (
    .clk_i  (clk_i),
    .we_i   (rst_ni && rsp_valid_i && rsp_dst_i == nasa_engine_pkg::DstIn),
    .waddr_i(rsp_addr_i[IAW-1:0]),
    .wdata_i(rsp_data_i),
    .raddr_i({res_raddr_i, in_raddr_i}),
    .rdata_o(in_wide)
  );
  assign res_rdata_o = in_wide[NumIn*Cols*8 +: Cols*8];
  always_comb begin
    for (int q = 0; q < NumIn; q++) in_rdata[q*8 +: 8] = in_wide[q*Cols*8 +: 8];
  end

  // weight beats: a row segment into one bank (DstWRow), dealt over 2 or 4 bank groups (a K-split
  // tile's, DstWK2/DstWK4: beat i of the job goes to byte (i * MemBytes) >> ks of its ring
  // segment), or a depthwise tap scattered over the banks
  logic [Cols*8-1:0] w_rdata;
  logic w_deal;
  logic [1:0] w_ks;
  logic [WRW-1:0] w_waddr;
  assign w_deal  = rsp_dst_i == nasa_engine_pkg::DstWK2 || rsp_dst_i == nasa_engine_pkg::DstWK4;
  assign w_ks    = !w_deal ? 2'd0 : (rsp_dst_i == nasa_engine_pkg::DstWK2 ? 2'd1 : 2'd2);
  assign w_waddr = w_deal ? WRW'(rsp_base_i) + WRW'((rsp_idx_i << $clog2(MemBytes)) >> w_ks) :
                            rsp_addr_i[WRW-1:0];
  nasa_wbuf #(
    .Cols    (Cols),
    .MemBytes(MemBytes),
    .Depth   (2 * KredMax)
  ) u_wbuf (
    .clk_i    (clk_i),
    .we_i     (rst_ni && rsp_valid_i && nasa_engine_pkg::dst_wgt(rsp_dst_i)),
    .scatter_i(rsp_dst_i == nasa_engine_pkg::DstWScat),
    .ks_i     (w_ks),
    .wbank_i  (rsp_bank_i[ColW-1:0]),
    .waddr_i  (w_waddr),
    .wdata_i  (rsp_data_i),
    .raddr_i  (c_base_i + WRW'(c_widx_i)),
    .rdata_o  (w_rdata)
  );

  // per-channel parameter records, Cols x {rsv, S, M, bias} per record slot in NPW port words;
  // prm_rd_q holds the records of the tile the compute reads, read one cycle ahead
  logic [MemBytes*8-1:0] prm_mem_q [WTiles * NPW];
  logic [NPW*MemBytes*8-1:0] prm_rd_q;
  always_ff @(posedge clk_i) begin
    if (rsp_valid_i && rsp_dst_i == nasa_engine_pkg::DstPrm) begin
      prm_mem_q[32'(rsp_base_i[TRW-1:0]) * NPW + 32'(rsp_idx_i)] <= rsp_data_i;
    end
    for (int w = 0; w < NPW; w++) begin
      prm_rd_q[w*MemBytes*8 +: MemBytes*8] <= prm_mem_q[32'(prm_slot_i) * NPW + w];
    end
  end
  assign prm_o = prm_rd_q[Cols*64-1:0];

  // ======================= stage 1: MAC / vector step =======================
  logic s1_valid_q, s1_first_q, s1_last_q, s1_pe_q, s1_dw_q;
  logic [1:0] s1_vmode_q;
  // (a K-split code, not a state machine: Yosys 0.23's fsm_extract crashes on it)
  (* fsm_encoding = "none" *) logic [1:0] s1_ks_q;
  logic [15:0] s1_m_q, s1_mb_q;
  logic [7:0] s1_s_q, s1_sb_q;
  logic [NumIn-1:0] s1_mask_q;
  logic [15:0] s1_macs_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      s1_valid_q <= 1'b0;
      s1_first_q <= 1'b0;
      s1_last_q  <= 1'b0;
      s1_pe_q    <= 1'b0;
      s1_dw_q    <= 1'b0;
      s1_ks_q    <= '0;
      s1_vmode_q <= '0;
      s1_m_q     <= '0;
      s1_s_q     <= '0;
      s1_mb_q    <= '0;
      s1_sb_q    <= '0;
      s1_mask_q  <= '0;
      s1_macs_q  <= '0;
    end else begin
      s1_valid_q <= step_valid_i;
      s1_first_q <= step_i.first;
      s1_last_q  <= step_i.last;
      s1_pe_q    <= step_i.pe;
      s1_dw_q    <= step_i.dw;
      s1_ks_q    <= step_i.ks;
      s1_vmode_q <= step_i.vmode;
      s1_m_q     <= step_i.m;
      s1_s_q     <= step_i.s;
      s1_mb_q    <= step_i.mb;
      s1_sb_q    <= step_i.sb;
      s1_mask_q  <= mask_i;
      s1_macs_q  <= step_i.macs;
    end
  end

  logic [NumIn*8-1:0] x_masked;
  // PE(r,c): lane r's byte (Conv/Fc; a K-split tile's column group g = c / (Cols >> ks): the
  // lane's byte g) or its channel c (DwConv)
  logic [Rows*Cols*8-1:0] x_pe;
  always_comb begin
    for (int q = 0; q < NumIn; q++) begin
      x_masked[q*8 +: 8] = s1_mask_q[q] ? in_rdata[q*8 +: 8] : 8'd0;
    end
    for (int r = 0; r < Rows; r++) begin
      for (int c = 0; c < Cols; c++) begin
        int unsigned g;
        g = (s1_ks_q == 2'd0 || Cols < 2) ? 0 :
            ((s1_ks_q == 2'd1 || Cols < 4) ? c / (Cols / 2) : c / (Cols / 4));
        x_pe[(r*Cols+c)*8 +: 8] = !s1_mask_q[r] ? 8'd0 :
                                  (s1_dw_q ? in_wide[(r*Cols+c)*8 +: 8] :
                                             in_wide[(r*Cols+g)*8 +: 8]);
      end
    end
  end

  nasa_pe_array #(
    .Rows(Rows),
    .Cols(Cols)
  ) u_pe (
    .clk_i    (clk_i),
    .rst_ni   (rst_ni),
    .en_i     (s1_valid_q && s1_pe_q),
    .first_i  (s1_first_q),
    .last_i   (s1_last_q),
    .x_i      (x_pe),
    .w_i      (w_rdata),
    .rd_row_i (dr_row_i),
    .rd_data_o(pe_row_o),
    .rd_row2_i(dr_row_i + RowW'(1)),
    .rd_data2_o(pe_row2_o)
  );

  nasa_vec_unit #(
    .Lanes(Cols)
  ) u_vec (
    .clk_i  (clk_i),
    .rst_ni (rst_ni),
    .en_i   (s1_valid_q && !s1_pe_q),
    .mode_i (s1_vmode_q),
    .first_i(s1_first_q),
    .last_i (s1_last_q),
    .valid_i(s1_mask_q[Cols-1:0]),
    .x_i    (x_masked[Cols*8-1:0]),
    .m_i    (s1_m_q),
    .s_i    (s1_s_q),
    .mb_i   (s1_mb_q),
    .sb_i   (s1_sb_q),
    .res_o  (vec_res_o)
  );

  assign s1_valid_o = s1_valid_q;
  assign s1_last_o  = s1_last_q;
  assign s1_pe_o    = s1_pe_q;
  assign s1_macs_o  = s1_macs_q;

  // response fields the buffers do not need (the banks' and addresses' high bits)
  logic unused_rsp;
  assign unused_rsp = ^{rsp_bank_i, rsp_base_i, rsp_addr_i};

`ifndef SYNTHESIS
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   !$isunknown({s1_valid_q, s1_valid_q && s1_pe_q, s1_valid_q && !s1_pe_q}))
    else $error("X on compute stage 1 control");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   rsp_valid_i |-> !$isunknown(rsp_dst_i))
    else $error("X on a response beat's destination");
`endif
endmodule
