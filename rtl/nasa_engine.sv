// NASA compute engine: fetches layer descriptors, validates them and runs each layer tile by
// tile: Conv/Fc on the output-stationary PE array (Rows positions x Cols channels), depthwise,
// pools, add and global pool on the vector unit; inputs stream into the input buffer, weights
// into the weight ring, finished tiles drain through the requant lanes (docs/engine.md).
// This module wires the units (docs/engine.md "RTL units"): CSRs (nasa_csr), sequencer
// (nasa_engine_seq), descriptor register (nasa_engine_desc), decode (nasa_engine_decode), input
// loader (nasa_engine_in_loader), tile loader and weight ring (nasa_engine_tile_loader), job
// arbiter and DMA (nasa_engine_dma_front), issue stage (nasa_engine_issue), compute datapath
// (nasa_engine_compute), drain (nasa_engine_drain) and the on-chip scratch (nasa_scratch).
module nasa_engine #(
  parameter nasa_pkg::cfg_t Cfg = nasa_pkg::CfgSim,  // the configuration (nasa_pkg::cfg_t)
  localparam int unsigned Rows = Cfg.rows, Cols = Cfg.cols, MemBytes = Cfg.mem_bytes,
                          InBufBytes = Cfg.in_buf_bytes, KredMax = Cfg.kred_max,
                          BurstMax = Cfg.burst_max, AddrBits = Cfg.addr_bits, WTiles = Cfg.wtiles
) (
  input  logic                  clk_i,
  input  logic                  rst_ni,
  // CSR bus
  input  nasa_pkg::csr_req_t csr_req_i,
  output nasa_pkg::csr_rsp_t csr_rsp_o,
  input  logic [31:0]           csr_ext_rdata_i,  // read data of the CSRs outside the engine's
  // memory port
  output nasa_pkg::mem_req_t mem_req_o,
  input  nasa_pkg::mem_rsp_t mem_rsp_i,
  // status
  output logic                  busy_o,
  output logic                  done_o,
  output logic                  error_o,
  output logic                  layer_end_o,  // pulse: a layer's last result is written
  // ext mode (batch runs, docs/fusion.md): descriptors come from the scheduler as a template
  // address plus the X/Y/L addresses its PATCH bits add
  output logic                  batch_start_o,  // pulse: a batch run started (ext mode)
  input  logic                  xd_valid_i,
  output logic                  xd_ready_o,     // the template fetch was issued
  input  logic [31:0]           xd_tpl_i,
  input  logic [31:0]           xd_x_i,
  input  logic [31:0]           xd_y_i,
  input  logic [31:0]           xd_l_i,
  input  logic [31:0]           xd_s_i,         // the image's scratch offset (PATCH ..PlusS)
  input  logic [7:0]            xd_n_i,         // images left in the mini-batch, this one included
  output logic                  xd_cov_o,       // with xd_ready_o: taken without a fetch, covered
                                                // by the packed layer before (no completion)
  output logic                  xd_done_o,      // pulse: the descriptor completed
  input  logic                  xd_end_i,       // end the batch run: xd_err_i, xd_err_index_i
  input  logic [7:0]            xd_err_i,
  input  logic [31:0]           xd_err_index_i,
  output logic                  ext_wait_o,     // ext mode, waiting for a descriptor, DMA idle
  output logic [31:0]           win_base_o,
  output logic [31:0]           win_limit_o,
  output logic [31:0]           scratch_base_o,  // CSR ScratchBase (the control port's check)
  // memory traffic of the control units (counted in DramRdBytes / DramWrBytes)
  input  logic                  ext_rd_beat_i,
  input  logic                  ext_wr_i
);
  localparam int unsigned NumIn = (Rows > Cols) ? Rows : Cols;
  localparam int unsigned IAW   = $clog2(InBufBytes);
  localparam int unsigned WAW   = $clog2(KredMax);
  localparam int unsigned WRW   = $clog2(2 * KredMax);
  localparam int unsigned TRW   = $clog2(WTiles);
  localparam int unsigned PtrW  = TRW + 2;
  localparam int unsigned RowW  = (Rows > 1) ? $clog2(Rows) : 1;
  localparam int unsigned OffW  = $clog2(MemBytes);
  localparam int unsigned HJW   = $clog2(2 + Cols * ((KredMax + BurstMax * MemBytes / 2 - 1) /
                                                     (BurstMax * MemBytes / 2)) + 49);
  localparam int unsigned NC    = nasa_pkg::NumCounters;
  localparam int unsigned AW    = AddrBits;
  localparam int unsigned LOW   = nasa_engine_pkg::LyOw;
  localparam int unsigned LBW   = nasa_engine_pkg::LyBw;

  // CSRs
  logic start, start_batch, finish, busy;
  logic [31:0] desc_addr, desc_count, win_base, win_limit, err_index, layers_done, sc_base;
  logic [7:0] err;
  logic [NC*16-1:0] cnt_inc;
  // sequencer
  logic ext, desc_valid, fetch, dec_start, decoding, li_par, ld_start, cs_start, run_start, stop;
  logic a_v, ld_par, desc_stall, ld_free;
  logic [31:0] xq_x, xq_y, xq_l, xq_s;
  logic [7:0] xq_n;
  logic cov_take;
  logic [AW-1:0] desc_src;
  logic [IAW-1:0] ld_ib;
  logic [15:0] nx_cout;
  nasa_engine_pkg::layer_t lay;
  // descriptor and decode
  nasa_pkg::desc_t desc;
  logic dec_first, dec_last;
  logic [7:0] dec_err;
  logic [1:0] dec_hz;
  nasa_engine_pkg::layer_t dec_layer;
  nasa_engine_pkg::il_cfg_t il_cfg;
  nasa_engine_pkg::tl_cfg_t tl_cfg;
  // loaders
  logic il_valid, il_grant, il_done, tl_valid, tl_grant, tl_idle, tl_cur;
  nasa_engine_pkg::job_t il_job, tl_job;
  logic [LOW-1:0] a_loaded;
  logic [WRW-1:0] c_base;
  logic [PtrW-1:0] rec0, rec_wr, rec_fill;
  logic [HJW-1:0] rsp_cols;
  // job arbiter and DMA
  logic dma_idle, mem_idle, job_ready, desc_arrived;
  logic rsp_valid, rsp_last, rsp_flag;
  logic [2:0] rsp_dst;
  logic [7:0] rsp_bank;
  logic [LBW-1:0] rsp_base;
  logic [31:0] rsp_idx, rsp_addr;
  logic [MemBytes*8-1:0] rsp_data;
  logic wr_valid, wr_ready, wr_sc, dma_wr_ready, wr2_valid, wr2_sc;  // wr2: the dual drain's
  logic [AW-1:0] wr_addr, wr2_addr;
  logic [MemBytes*8-1:0] wr_data, wr2_data;
  logic [MemBytes-1:0] wr_strb, wr2_strb;
  logic ev_rd_beat, ev_wr;
  // the DMA's job and read-data sides (job arbiter <-> nasa_dma)
  localparam int unsigned TagW = nasa_engine_pkg::dma_tag_w(IAW, WRW);
  logic job_valid, o_valid, o_last;
  logic [AW-1:0] job_src;
  logic [31:0] job_len, o_idx;
  logic [TagW-1:0] job_tag, o_tag;
  logic [MemBytes*8-1:0] o_data;
  logic [OffW:0] ev_wr_bytes;
  // the on-chip scratch's read side (nasa_scratch <-> job arbiter)
  logic sc_job_valid, sc_job_ready, sc_busy, sc_valid, sc_ready, sc_last;
  logic [TagW-1:0] sc_tag;
  logic [31:0] sc_idx;
  logic [MemBytes*8-1:0] sc_data;
  // issue stage, compute, drain
  logic want, w_ok, in_ok, sh_ok, quant_err, c_done, step_valid, tile;
  logic [PtrW-1:0] c_rec, c_rec_d;
  logic [WAW-1:0] c_widx;
  logic [NumIn*IAW-1:0] in_raddr;
  nasa_engine_pkg::step_t step;
  logic [NumIn-1:0] mask;
  nasa_engine_pkg::shadow_t sh;
  logic [Rows*AW-1:0] sh_addr;
  logic [Cols*64-1:0] prm_cur;
  logic s1_valid, s1_last, s1_pe;
  logic [15:0] s1_macs;
  logic [Cols*32-1:0] pe_row, pe_row2, vec_res;
  logic [IAW-1:0] res_raddr;  // the drain's residual row
  logic [Cols*8-1:0] res_rdata;
  logic shadow_full, ly_end, dr_lend;  // dr_lend: a layer's last row left the drain
  logic [RowW-1:0] dr_row;

  // ======================= CSRs =======================
  nasa_csr #(
    .Cfg(Cfg)
  ) u_csr (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .csr_req_i    (csr_req_i),
    .csr_rsp_o    (csr_rsp_o),
    .ext_rdata_i  (csr_ext_rdata_i),
    .start_o      (start),
    .batch_o      (start_batch),
    .desc_addr_o  (desc_addr),
    .desc_count_o (desc_count),
    .win_base_o   (win_base),
    .win_limit_o  (win_limit),
    .scratch_base_o(sc_base),
    .busy_i       (busy),
    .finish_i     (finish),
    .err_code_i   (err),
    .err_index_i  (err_index),
    .layers_done_i(layers_done),
    .cnt_inc_i    (cnt_inc),
    .done_o       (done_o),
    .error_o      (error_o)
  );
  assign busy_o        = busy;
  assign batch_start_o = start && start_batch;
  assign win_base_o    = win_base;
  assign win_limit_o   = win_limit;
  assign scratch_base_o = sc_base;

  // ======================= sequencer =======================
  assign ld_free = il_done && tl_idle;  // the loaders are done with the newest started layer
  nasa_engine_seq #(
    .Cfg(Cfg)
  ) u_seq (
    .clk_i         (clk_i),
    .rst_ni        (rst_ni),
    .start_i       (start),
    .batch_i       (start_batch),
    .desc_addr_i   (desc_addr),
    .desc_count_i  (desc_count),
    .win_base_i    (win_base),
    .win_limit_i   (win_limit),
    .scratch_base_i(sc_base),
    .busy_o        (busy),
    .finish_o      (finish),
    .err_o         (err),
    .err_index_o   (err_index),
    .layers_done_o (layers_done),
    .xd_valid_i    (xd_valid_i),
    .xd_tpl_i      (xd_tpl_i),
    .xd_x_i        (xd_x_i),
    .xd_y_i        (xd_y_i),
    .xd_l_i        (xd_l_i),
    .xd_s_i        (xd_s_i),
    .xd_n_i        (xd_n_i),
    .xd_end_i      (xd_end_i),
    .xd_err_i      (xd_err_i),
    .xd_err_index_i(xd_err_index_i),
    .ext_o         (ext),
    .xq_x_o        (xq_x),
    .xq_y_o        (xq_y),
    .xq_l_o        (xq_l),
    .xq_s_o        (xq_s),
    .xq_n_o        (xq_n),
    .cov_take_o    (cov_take),
    .desc_valid_o  (desc_valid),
    .desc_src_o    (desc_src),
    .job_ready_i   (job_ready),
    .desc_arrived_i(desc_arrived),
    .dma_idle_i    (mem_idle),
    .fetch_o       (fetch),
    .dec_start_o   (dec_start),
    .decoding_o    (decoding),
    .dec_last_i    (dec_last),
    .dec_err_i     (dec_err),
    .dec_hz_i      (dec_hz),
    .dec_layer_i   (dec_layer),
    .dec_imgs_i    (il_cfg.imgs),
    .li_par_o      (li_par),
    .ld_free_i     (ld_free),
    .c_done_i      (c_done),
    .a_loaded_i    (a_loaded),
    .quant_err_i   (quant_err),
    .ly_end_i      (ly_end),
    .dr_lend_i     (dr_lend),
    .ld_start_o    (ld_start),
    .cs_start_o    (cs_start),
    .run_start_o   (run_start),
    .stop_o        (stop),
    .a_v_o         (a_v),
    .ld_par_o      (ld_par),
    .ld_ib_o       (ld_ib),
    .desc_stall_o  (desc_stall),
    .lay_o         (lay),
    .nx_cout_o     (nx_cout)
  );
  assign xd_ready_o  = (ext && desc_valid && job_ready) || cov_take;
  assign xd_cov_o    = cov_take;
  assign ext_wait_o  = ext && fetch && mem_idle;
  assign xd_done_o   = ext && ly_end;
  assign layer_end_o = ly_end;

  // ======================= descriptor register and decode =======================
  assign desc_arrived = rsp_valid && rsp_last && rsp_dst == nasa_engine_pkg::DstDesc;
  nasa_engine_desc #(
    .MemBytes(MemBytes)
  ) u_desc (
    .clk_i  (clk_i),
    .we_i   (rsp_valid && rsp_dst == nasa_engine_pkg::DstDesc),
    .idx_i  (rsp_idx),
    .data_i (rsp_data),
    .patch_i(ext && dec_first),
    .x_i    (xq_x),
    .y_i    (xq_y),
    .l_i    (xq_l),
    .s_i    (xq_s),
    .n_i    (xq_n),
    .desc_o (desc)
  );

  nasa_engine_decode #(
    .Cfg(Cfg)
  ) u_decode (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .desc_i     (desc),
    .start_i    (dec_start),
    .active_i   (decoding),
    .win_base_i (win_base),
    .win_limit_i(win_limit),
    .scratch_base_i(sc_base),
    .li_par_i   (li_par),
    .ld_start_i (ld_start),
    .first_o    (dec_first),
    .last_o     (dec_last),
    .err_o      (dec_err),
    .hz_o       (dec_hz),
    .layer_o    (dec_layer),
    .il_o       (il_cfg),
    .tl_o       (tl_cfg)
  );

  // ======================= loaders =======================
  nasa_engine_in_loader #(
    .Cfg(Cfg)
  ) u_in_loader (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .ld_start_i (ld_start),
    .cfg_i      (il_cfg),
    .ld_par_i   (ld_par),
    .ld_ib_i    (ld_ib),
    .stop_i     (stop),
    .req_valid_o(il_valid),
    .req_o      (il_job),
    .grant_i    (il_grant),
    .done_o     (il_done),
    .in_we_i    (rsp_valid && rsp_dst == nasa_engine_pkg::DstIn),
    .in_flag_i  (rsp_flag),
    .a_par_i    (lay.par),
    .a_loaded_o (a_loaded)
  );

  nasa_engine_tile_loader #(
    .Cfg(Cfg)
  ) u_tile_loader (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .run_start_i(run_start),
    .ld_start_i (ld_start),
    .cfg_i      (tl_cfg),
    .stop_i     (stop),
    .req_valid_o(tl_valid),
    .req_o      (tl_job),
    .grant_i    (tl_grant),
    .idle_o     (tl_idle),
    .rsp_last_i (rsp_valid && rsp_last && nasa_engine_pkg::dst_wgt(rsp_dst)),
    .rsp_flag_i (rsp_flag),
    .rsp_col_i  (nasa_engine_pkg::dst_wrow(rsp_dst) && rsp_bank[7]),
    .c_rec_i    (c_rec),
    .c_base_o   (c_base),
    .rec0_o     (rec0),
    .rec_wr_o   (rec_wr),
    .rec_fill_o (rec_fill),
    .rsp_cols_o (rsp_cols)
  );

  // ======================= job arbiter and DMA =======================
  assign tl_cur = (rec_wr - PtrW'(1) == c_rec);  // the tile loader is on the compute's tile
  nasa_engine_dma_front #(
    .Cfg(Cfg)
  ) u_dma_front (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .stop_i         (stop),
    .desc_valid_i   (desc_valid),
    .desc_src_i     (desc_src),
    .il_valid_i     (il_valid),
    .il_job_i       (il_job),
    .il_grant_o     (il_grant),
    .tl_valid_i     (tl_valid),
    .tl_job_i       (tl_job),
    .tl_grant_o     (tl_grant),
    .want_i         (want),
    .w_ok_i         (w_ok),
    .in_ok_i        (in_ok),
    .tl_cur_i       (tl_cur),
    .sc_base_i      (sc_base),
    .sc_job_valid_o (sc_job_valid),
    .sc_job_ready_i (sc_job_ready),
    .sc_busy_i      (sc_busy),
    .sc_valid_i     (sc_valid),
    .sc_ready_o     (sc_ready),
    .sc_tag_i       (sc_tag),
    .sc_idx_i       (sc_idx),
    .sc_last_i      (sc_last),
    .sc_data_i      (sc_data),
    .rsp_valid_o    (rsp_valid),
    .rsp_last_o     (rsp_last),
    .rsp_dst_o      (rsp_dst),
    .rsp_flag_o     (rsp_flag),
    .rsp_bank_o     (rsp_bank),
    .rsp_base_o     (rsp_base),
    .rsp_idx_o      (rsp_idx),
    .rsp_addr_o     (rsp_addr),
    .rsp_data_o     (rsp_data),
    .job_valid_o    (job_valid),
    .job_ready_i    (job_ready),
    .job_src_o      (job_src),
    .job_len_o      (job_len),
    .job_tag_o      (job_tag),
    .o_valid_i      (o_valid),
    .o_tag_i        (o_tag),
    .o_idx_i        (o_idx),
    .o_last_i       (o_last),
    .o_data_i       (o_data)
  );

  nasa_dma #(
    .MemBytes(MemBytes),
    .BurstMax(BurstMax),
    .TagW    (TagW),
    .AddrBits(AW),
    .JobDepth(nasa_pkg::JobDepth),
    .Inflight(Cfg.dma_inflight),
    .MaxJob  (nasa_engine_pkg::dma_max_job(BurstMax * MemBytes, Cols))
  ) u_dma (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .abort_i        (stop),
    .idle_o         (dma_idle),
    .job_valid_i    (job_valid),
    .job_ready_o    (job_ready),
    .job_src_i      (job_src),
    .job_len_i      (job_len),
    .job_tag_i      (job_tag),
    .out_valid_o    (o_valid),
    .out_tag_o      (o_tag),
    .out_idx_o      (o_idx),
    .out_last_o     (o_last),
    .out_data_o     (o_data),
    .wr_valid_i     (wr_valid && !wr_sc),
    .wr_ready_o     (dma_wr_ready),
    .wr_addr_i      (wr_addr),
    .wr_data_i      (wr_data),
    .wr_strb_i      (wr_strb),
    .ev_rd_beat_o   (ev_rd_beat),
    .ev_wr_o        (ev_wr),
    .ev_wr_bytes_o  (ev_wr_bytes),
    .mem_req_o      (mem_req_o),
    .mem_rsp_i      (mem_rsp_i)
  );

  // the on-chip scratch (docs/engine.md "On-chip scratch"): the input loader's jobs and the
  // output writer's words inside its window
  assign wr_sc    = wr_valid && nasa_engine_pkg::in_scratch(32'(wr_addr), sc_base,
                                                            Cfg.scratch_bytes);
  assign wr2_sc   = nasa_engine_pkg::in_scratch(32'(wr2_addr), sc_base, Cfg.scratch_bytes);
  assign wr_ready = wr_sc || dma_wr_ready;
  assign mem_idle = dma_idle && !sc_busy;
  if (Cfg.scratch_bytes != 0) begin : g_scratch
    nasa_scratch #(
      .Bytes   (Cfg.scratch_bytes),
      .MemBytes(MemBytes),
      .AddrBits(AW),
      .TagW    (TagW),
      .MaxJob  (BurstMax * MemBytes)
    ) u_scratch (
      .clk_i      (clk_i),
      .rst_ni     (rst_ni),
      .stop_i     (stop),
      .busy_o     (sc_busy),
      .job_valid_i(sc_job_valid),
      .job_ready_o(sc_job_ready),
      .job_src_i  (job_src),
      .job_len_i  (job_len),
      .job_tag_i  (job_tag),
      .out_valid_o(sc_valid),
      .out_ready_i(sc_ready),
      .out_tag_o  (sc_tag),
      .out_idx_o  (sc_idx),
      .out_last_o (sc_last),
      .out_data_o (sc_data),
      .we_i       (rst_ni && wr_sc),
      .waddr_i    (wr_addr),
      .wdata_i    (wr_data),
      .wstrb_i    (wr_strb),
      .we2_i      (rst_ni && wr2_valid), .waddr2_i(wr2_addr),
      .wdata2_i   (wr2_data),            .wstrb2_i(wr2_strb)
    );
  end else begin : g_no_scratch
    assign {sc_busy, sc_job_ready, sc_valid, sc_last} = '0;
    assign {sc_tag, sc_idx, sc_data} = '0;
    logic unused_sc;
    assign unused_sc = ^{sc_job_valid, sc_ready, wr2_valid, wr2_data, wr2_strb};
  end

  // ======================= issue stage, compute, drain =======================
  nasa_engine_issue #(
    .Cfg(Cfg)
  ) u_issue (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .lay_i        (lay),
    .a_v_i        (a_v),
    .cs_start_i   (cs_start),
    .nx_cout_i    (nx_cout),
    .run_start_i  (run_start),
    .rec0_i       (rec0),
    .rec_fill_i   (rec_fill),
    .rsp_cols_i   (rsp_cols),
    .c_rec_o      (c_rec),
    .c_rec_d_o    (c_rec_d),
    .c_widx_o     (c_widx),
    .a_loaded_i   (a_loaded),
    .in_raddr_o   (in_raddr),
    .prm_i        (prm_cur),
    .layers_done_i(layers_done),
    .quant_err_o  (quant_err),
    .shadow_full_i(shadow_full),
    .s1_valid_i   (s1_valid),
    .s1_last_i    (s1_last),
    .want_o       (want),
    .w_ok_o       (w_ok),
    .in_ok_o      (in_ok),
    .sh_ok_o      (sh_ok),
    .c_done_o     (c_done),
    .step_valid_o (step_valid),
    .step_o       (step),
    .mask_o       (mask),
    .tile_o       (tile),
    .sh_o         (sh),
    .sh_addr_o    (sh_addr)
  );

  nasa_engine_compute #(
    .Cfg(Cfg)
  ) u_compute (
    .clk_i       (clk_i),
    .rst_ni      (rst_ni),
    .rsp_valid_i (rsp_valid),
    .rsp_dst_i   (rsp_dst),
    .rsp_bank_i  (rsp_bank),
    .rsp_base_i  (rsp_base),
    .rsp_idx_i   (rsp_idx),
    .rsp_addr_i  (rsp_addr),
    .rsp_data_i  (rsp_data),
    .in_raddr_i  (in_raddr),
    .res_raddr_i (res_raddr),
    .res_rdata_o (res_rdata),
    .c_base_i    (c_base),
    .c_widx_i    (c_widx),
    .prm_slot_i  (TRW'(c_rec_d)),
    .prm_o       (prm_cur),
    .step_valid_i(step_valid),
    .step_i      (step),
    .mask_i      (mask),
    .s1_valid_o  (s1_valid),
    .s1_last_o   (s1_last),
    .s1_pe_o     (s1_pe),
    .s1_macs_o   (s1_macs),
    .dr_row_i    (dr_row),
    .pe_row_o    (pe_row),
    .pe_row2_o   (pe_row2),
    .vec_res_o   (vec_res)
  );

  nasa_engine_drain #(
    .Cfg(Cfg)
  ) u_drain (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .stop_i       (stop),
    .tile_i       (tile),
    .sh_i         (sh),
    .sh_addr_i    (sh_addr),
    .prm_i        (prm_cur),
    .s1_done_i    (s1_valid && s1_last),
    .shadow_full_o(shadow_full),
    .dr_row_o     (dr_row),
    .pe_row_i     (pe_row),       .pe_row2_i  (pe_row2),
    .vec_res_i    (vec_res),
    .res_raddr_o  (res_raddr),
    .res_rdata_i  (res_rdata),
    .ly_end_o     (ly_end),
    .dr_lend_o    (dr_lend),
    .wr_valid_o   (wr_valid),
    .wr_ready_i   (wr_ready),
    .wr_addr_o    (wr_addr),
    .wr_data_o    (wr_data),
    .wr_strb_o    (wr_strb),
    .wr_sc_i      (wr_sc),        .wr2_sc_i   (wr2_sc),
    .wr2_valid_o  (wr2_valid),    .wr2_addr_o (wr2_addr),
    .wr2_data_o   (wr2_data),     .wr2_strb_o (wr2_strb)
  );

  // ======================= performance counters =======================
  always_comb begin
    cnt_inc = '0;
    cnt_inc[nasa_pkg::CntCycles*16 +: 16]      = 16'(busy);
    cnt_inc[nasa_pkg::CntPeBusy*16 +: 16]      = 16'(s1_valid && s1_pe);
    cnt_inc[nasa_pkg::CntVecBusy*16 +: 16]     = 16'(s1_valid && !s1_pe);
    cnt_inc[nasa_pkg::CntMacs*16 +: 16]        = s1_valid ? s1_macs : 16'd0;
    cnt_inc[nasa_pkg::CntDramRdBytes*16 +: 16] =
        (ev_rd_beat || ext_rd_beat_i) ? 16'(MemBytes) : 16'd0;
    cnt_inc[nasa_pkg::CntDramWrBytes*16 +: 16] =
        ev_wr ? 16'(ev_wr_bytes) : (ext_wr_i ? 16'd1 : 16'd0);
    cnt_inc[nasa_pkg::CntStallWeight*16 +: 16] = 16'(want && !w_ok);
    cnt_inc[nasa_pkg::CntStallInput*16 +: 16]  = 16'(want && w_ok && !in_ok);
    cnt_inc[nasa_pkg::CntStallOutput*16 +: 16] = 16'(want && w_ok && in_ok && !sh_ok);
    cnt_inc[nasa_pkg::CntStallDesc*16 +: 16]   = 16'(desc_stall);
    // buffer writes (the energy model's events, docs/energy.md)
    cnt_inc[nasa_pkg::CntInBufWrites*16 +: 16] =
        16'(rsp_valid && rsp_dst == nasa_engine_pkg::DstIn);
    cnt_inc[nasa_pkg::CntWBufWrites*16 +: 16]  =
        16'(rsp_valid && nasa_engine_pkg::dst_wgt(rsp_dst));
    cnt_inc[nasa_pkg::CntPrmWrites*16 +: 16]   =
        16'(rsp_valid && rsp_dst == nasa_engine_pkg::DstPrm);
    cnt_inc[nasa_pkg::CntScratchReads*16 +: 16]  = 16'(sc_valid && sc_ready);
    cnt_inc[nasa_pkg::CntScratchWrites*16 +: 16] = 16'(wr_sc) + 16'(wr2_valid);
  end

  logic unused_rec;  // (the record slot is the tile pointer's low bits)
  assign unused_rec = ^c_rec_d;

`ifndef SYNTHESIS
  // the sequencer -> loaders handshake: a layer starts loading only when both loaders are done
  assert property (@(posedge clk_i) disable iff (!rst_ni) ld_start |-> ld_free)
    else $error("layer started while a loader is busy");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   !$isunknown({busy_o, done_o, error_o, layer_end_o, xd_ready_o, xd_done_o,
                                ext_wait_o, mem_req_o.valid, mem_req_o.rsp_ready}))
    else $error("X on engine control outputs");
`endif
endmodule
