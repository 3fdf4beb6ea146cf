// Accelerator top: the layer engine plus the batch-mode units of docs/fusion.md (cand_gen,
// fusion_unit, scheduler, eval_unit), their CSRs and tables, and the control memory master that
// shares the memory port with the engine's DMA. Program runs (CTRL bit 0) go straight to the
// engine; batch runs (CTRL bit 2) put the engine in ext mode and this module sequences
// generate -> fuse -> schedule/evaluate. Ports are the engine's: one CSR bus, one memory port.
module nasa_top #(
  parameter int unsigned Rows       = 16,
  parameter int unsigned Cols       = 16,
  parameter int unsigned MemBytes   = 32,
  parameter int unsigned InBufBytes = 65536,
  parameter int unsigned KredMax    = 8192,
  parameter int unsigned BurstMax   = 8,
  parameter int unsigned NodeCap    = nasa_pkg::NodeCap,
  parameter int unsigned MaxLayers  = nasa_pkg::MaxLayers,
  parameter int unsigned MaxChoices = nasa_pkg::MaxChoices,
  parameter int unsigned MaxCands   = nasa_pkg::MaxCands,
  parameter int unsigned RqLanes    = Cols,  // requant lanes (a power of two dividing Cols)
  parameter int unsigned AddrBits   = 32,    // address space [0, 2^AddrBits)
  parameter int unsigned DmaInflight = 16,   // DMA read jobs in flight (a power of two)
  parameter int unsigned WTiles     = 16     // channel tiles the weight ring holds (power of two)
) (
  input  logic                  clk_i,
  input  logic                  rst_ni,
  // CSR bus
  input  logic                  csr_valid_i,
  output logic                  csr_ready_o,
  input  logic                  csr_we_i,
  input  logic [11:0]           csr_addr_i,
  input  logic [31:0]           csr_wdata_i,
  output logic                  csr_rvalid_o,
  output logic [31:0]           csr_rdata_o,
  // memory port
  output logic                  mem_req_valid_o,
  input  logic                  mem_req_ready_i,
  output logic                  mem_req_we_o,
  output logic [31:0]           mem_req_addr_o,
  output logic [7:0]            mem_req_len_o,
  output logic [MemBytes*8-1:0] mem_req_wdata_o,
  output logic [MemBytes-1:0]   mem_req_wstrb_o,
  input  logic                  mem_rsp_valid_i,
  output logic                  mem_rsp_ready_o,
  input  logic [MemBytes*8-1:0] mem_rsp_rdata_i,
  // status
  output logic                  busy_o,
  output logic                  done_o,
  output logic                  error_o,
  output logic                  layer_end_o   // pulse: a layer of a program or batch completed
);
  localparam int unsigned OpTabN = MaxLayers * MaxChoices;
  localparam int unsigned OTW    = $clog2(OpTabN);

  // ======================= engine =======================
  logic e_req_valid, e_req_ready, e_req_we, e_rsp_valid, e_rsp_ready;
  logic [31:0] e_req_addr;
  logic [7:0] e_req_len;
  logic [MemBytes*8-1:0] e_req_wdata;
  logic [MemBytes-1:0] e_req_wstrb;
  logic [31:0] e_rdata;
  logic e_rvalid;
  logic batch_start, xd_valid, xd_ready, xd_done, xd_end, ext_wait;
  logic [31:0] xd_tpl, xd_x, xd_y, xd_l, xd_err_index, win_base, win_limit;
  logic [7:0] xd_err;
  logic c_rd_beat, c_wr;

  nasa_engine #(
    .Rows      (Rows),
    .Cols      (Cols),
    .MemBytes  (MemBytes),
    .InBufBytes(InBufBytes),
    .KredMax   (KredMax),
    .BurstMax  (BurstMax),
    .RqLanes   (RqLanes),
    .AddrBits  (AddrBits),
    .DmaInflight(DmaInflight),
    .WTiles    (WTiles)
  ) u_engine (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .csr_valid_i    (csr_valid_i),
    .csr_ready_o    (csr_ready_o),
    .csr_we_i       (csr_we_i),
    .csr_addr_i     (csr_addr_i),
    .csr_wdata_i    (csr_wdata_i),
    .csr_rvalid_o   (e_rvalid),
    .csr_rdata_o    (e_rdata),
    .mem_req_valid_o(e_req_valid),
    .mem_req_ready_i(e_req_ready),
    .mem_req_we_o   (e_req_we),
    .mem_req_addr_o (e_req_addr),
    .mem_req_len_o  (e_req_len),
    .mem_req_wdata_o(e_req_wdata),
    .mem_req_wstrb_o(e_req_wstrb),
    .mem_rsp_valid_i(e_rsp_valid),
    .mem_rsp_ready_o(e_rsp_ready),
    .mem_rsp_rdata_i(mem_rsp_rdata_i),
    .busy_o         (busy_o),
    .done_o         (done_o),
    .error_o        (error_o),
    .layer_end_o    (layer_end_o),
    .batch_start_o  (batch_start),
    .xd_valid_i     (xd_valid),
    .xd_ready_o     (xd_ready),
    .xd_tpl_i       (xd_tpl),
    .xd_x_i         (xd_x),
    .xd_y_i         (xd_y),
    .xd_l_i         (xd_l),
    .xd_done_o      (xd_done),
    .xd_end_i       (xd_end),
    .xd_err_i       (xd_err),
    .xd_err_index_i (xd_err_index),
    .ext_wait_o     (ext_wait),
    .win_base_o     (win_base),
    .win_limit_o    (win_limit),
    .ext_rd_beat_i  (c_rd_beat),
    .ext_wr_i       (c_wr)
  );

  // ======================= batch CSRs and tables =======================
  logic [31:0] num_layers_q, cand_addr_q, cand_stride_q, cand_count_q, tpl_addr_q, stem_tpl_q,
               head_tpl_q, img_addr_q, img_stride_q, img_count_q, label_addr_q, mini_batch_q,
               classes_q, logits_addr_q, logits_stride_q, gen_mode_q, gen_seed_q, gen_prob_q,
               parent_addr_q, parent_count_q, tbl_addr_q;
  logic [7:0] layer_k_q [MaxLayers];
  logic [31:0] arena_addr_q [MaxLayers+1];
  logic [31:0] arena_stride_q [MaxLayers+1];
  logic [MaxLayers*8-1:0] layer_k_flat;
  logic [(MaxLayers+1)*32-1:0] arena_addr_flat, arena_stride_flat;
  for (genvar i = 0; i < MaxLayers; i++) begin : g_kflat
    assign layer_k_flat[i*8 +: 8] = layer_k_q[i];
  end
  for (genvar i = 0; i <= MaxLayers; i++) begin : g_aflat
    assign arena_addr_flat[i*32 +: 32]   = arena_addr_q[i];
    assign arena_stride_flat[i*32 +: 32] = arena_stride_q[i];
  end

  logic wr, rd, tbl_acc;
  logic [7:0] tbl_sel;
  logic [23:0] tbl_idx, tbl_idx_d;
  assign wr      = csr_valid_i && csr_we_i && !busy_o;
  assign rd      = csr_valid_i && !csr_we_i;
  assign tbl_sel = tbl_addr_q[31:24];
  assign tbl_idx = tbl_addr_q[23:0];
  assign tbl_acc = csr_valid_i && (csr_addr_i == 12'(nasa_pkg::CsrTblData)) && (rd || wr);
  // the index after this cycle: synchronous table RAMs read it one cycle ahead
  always_comb begin
    tbl_idx_d = tbl_idx;
    if (wr && csr_addr_i == 12'(nasa_pkg::CsrTblAddr)) tbl_idx_d = csr_wdata_i[23:0];
    else if (tbl_acc) tbl_idx_d = tbl_idx + 24'd1;
  end

  // op table RAM (host writes, scheduler reads while running)
  logic [31:0] optab_mem [OpTabN];
  logic [31:0] optab_rd;
  logic [15:0] s_optab_idx;
  logic [OTW-1:0] optab_raddr;
  logic optab_we;
  assign optab_we    = wr && tbl_acc && tbl_sel == 8'(nasa_pkg::TblOpTab) &&
                       tbl_idx < 24'(OpTabN);
  assign optab_raddr = busy_o ? s_optab_idx[OTW-1:0] : tbl_idx_d[OTW-1:0];
  always_ff @(posedge clk_i) begin
    if (optab_we) optab_mem[tbl_idx[OTW-1:0]] <= csr_wdata_i;
    optab_rd <= optab_mem[optab_raddr];
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      num_layers_q    <= '0;
      cand_addr_q     <= '0;
      cand_stride_q   <= '0;
      cand_count_q    <= '0;
      tpl_addr_q      <= '0;
      stem_tpl_q      <= '0;
      head_tpl_q      <= '0;
      img_addr_q      <= '0;
      img_stride_q    <= '0;
      img_count_q     <= '0;
      label_addr_q    <= '0;
      mini_batch_q    <= '0;
      classes_q       <= '0;
      logits_addr_q   <= '0;
      logits_stride_q <= '0;
      gen_mode_q      <= '0;
      gen_seed_q      <= '0;
      gen_prob_q      <= '0;
      parent_addr_q   <= '0;
      parent_count_q  <= '0;
      tbl_addr_q      <= '0;
      for (int i = 0; i < MaxLayers; i++) layer_k_q[i] <= '0;
      for (int i = 0; i <= MaxLayers; i++) begin
        arena_addr_q[i]   <= '0;
        arena_stride_q[i] <= '0;
      end
    end else begin
      if (wr) begin
        unique case (csr_addr_i)
          12'(nasa_pkg::CsrNumLayers):    num_layers_q <= csr_wdata_i;
          12'(nasa_pkg::CsrCandAddr):     cand_addr_q <= csr_wdata_i;
          12'(nasa_pkg::CsrCandStride):   cand_stride_q <= csr_wdata_i;
          12'(nasa_pkg::CsrCandCount):    cand_count_q <= csr_wdata_i;
          12'(nasa_pkg::CsrTplAddr):      tpl_addr_q <= csr_wdata_i;
          12'(nasa_pkg::CsrStemTpl):      stem_tpl_q <= csr_wdata_i;
          12'(nasa_pkg::CsrHeadTpl):      head_tpl_q <= csr_wdata_i;
          12'(nasa_pkg::CsrImgAddr):      img_addr_q <= csr_wdata_i;
          12'(nasa_pkg::CsrImgStride):    img_stride_q <= csr_wdata_i;
          12'(nasa_pkg::CsrImgCount):     img_count_q <= csr_wdata_i;
          12'(nasa_pkg::CsrLabelAddr):    label_addr_q <= csr_wdata_i;
          12'(nasa_pkg::CsrMiniBatch):    mini_batch_q <= csr_wdata_i;
          12'(nasa_pkg::CsrClasses):      classes_q <= csr_wdata_i;
          12'(nasa_pkg::CsrLogitsAddr):   logits_addr_q <= csr_wdata_i;
          12'(nasa_pkg::CsrLogitsStride): logits_stride_q <= csr_wdata_i;
          12'(nasa_pkg::CsrGenMode):      gen_mode_q <= csr_wdata_i;
          12'(nasa_pkg::CsrGenSeed):      gen_seed_q <= csr_wdata_i;
          12'(nasa_pkg::CsrGenProb):      gen_prob_q <= csr_wdata_i;
          12'(nasa_pkg::CsrParentAddr):   parent_addr_q <= csr_wdata_i;
          12'(nasa_pkg::CsrParentCount):  parent_count_q <= csr_wdata_i;
          12'(nasa_pkg::CsrTblAddr):      tbl_addr_q <= csr_wdata_i;
          12'(nasa_pkg::CsrTblData): begin
            if (tbl_sel == 8'(nasa_pkg::TblLayerK) && tbl_idx < 24'(MaxLayers)) begin
              layer_k_q[tbl_idx[$clog2(MaxLayers)-1:0]] <= csr_wdata_i[7:0];
            end
            if (tbl_sel == 8'(nasa_pkg::TblArenaAddr) && tbl_idx <= 24'(MaxLayers)) begin
              arena_addr_q[tbl_idx[$clog2(MaxLayers+1)-1:0]] <= csr_wdata_i;
            end
            if (tbl_sel == 8'(nasa_pkg::TblArenaStride) && tbl_idx <= 24'(MaxLayers)) begin
              arena_stride_q[tbl_idx[$clog2(MaxLayers+1)-1:0]] <= csr_wdata_i;
            end
          end
          default: ;
        endcase
      end
      if (tbl_acc) tbl_addr_q <= {tbl_sel, tbl_idx_d};
    end
  end

  // ======================= units =======================
  logic abort_units;
  logic cg_start, cg_busy, cg_done;
  logic fu_start, fu_busy, fu_done, fu_err;
  logic [7:0] fu_err_code;
  logic [31:0] fu_err_index;
  logic [15:0] node_count;
  logic sc_start, sc_busy, sc_done;
  logic ev_clear, ev_busy, ev_start, ev_done;
  logic [15:0] ev_leaf;
  logic [31:0] ev_logits, ev_label, ev_cnt;

  // byte requests of the three units, one phase at a time
  logic cg_mv, cg_mwe, fu_mv, fu_mwe, ev_mv, ev_mwe;
  logic [31:0] cg_ma, fu_ma, ev_ma;
  logic [7:0] cg_md, fu_md, ev_md;
  logic cp_valid, cp_ready, cp_we, cp_rsp, cp_err, cp_busy, cp_own;
  logic [31:0] cp_addr;
  logic [7:0] cp_wdata, cp_rdata;

  typedef enum logic [2:0] {TIdle, TGen, TFuse, TClear, TSched, TEnd} tstate_e;
  tstate_e st_q;

  nasa_cand_gen #(.MaxLayers(MaxLayers)) u_cand_gen (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .start_i        (cg_start),
    .abort_i        (abort_units),
    .busy_o         (cg_busy),
    .done_o         (cg_done),
    .mode_i         (gen_mode_q[1:0]),
    .seed_i         (gen_seed_q),
    .prob_i         (gen_prob_q[16:0]),
    .num_layers_i   (num_layers_q[7:0]),
    .layer_k_i      (layer_k_flat),
    .out_addr_i     (cand_addr_q),
    .stride_i       (cand_stride_q),
    .count_i        (cand_count_q),
    .parent_addr_i  (parent_addr_q),
    .parent_count_i (parent_count_q),
    .mreq_valid_o   (cg_mv),
    .mreq_ready_i   (cp_ready && st_q == TGen),
    .mreq_we_o      (cg_mwe),
    .mreq_addr_o    (cg_ma),
    .mreq_wdata_o   (cg_md),
    .mrsp_valid_i   (cp_rsp && st_q == TGen),
    .mrsp_data_i    (cp_rdata)
  );

  logic [15:0] node_idx, s_node_idx, n_parent, n_first, n_next, leaf_rd;
  logic [7:0] n_layer, n_choice;
  logic [31:0] fused_cands_q;
  assign node_idx = busy_o ? s_node_idx : tbl_idx_d[15:0];

  nasa_fusion_unit #(
    .NodeCap   (NodeCap),
    .MaxLayers (MaxLayers),
    .MaxChoices(MaxChoices),
    .MaxCands  (MaxCands)
  ) u_fusion (
    .clk_i         (clk_i),
    .rst_ni        (rst_ni),
    .start_i       (fu_start),
    .abort_i       (abort_units),
    .busy_o        (fu_busy),
    .done_o        (fu_done),
    .err_o         (fu_err),
    .err_code_o    (fu_err_code),
    .err_index_o   (fu_err_index),
    .num_layers_i  (num_layers_q[7:0]),
    .layer_k_i     (layer_k_flat),
    .cand_addr_i   (cand_addr_q),
    .cand_stride_i (cand_stride_q),
    .cand_count_i  (cand_count_q),
    .node_count_o  (node_count),
    .mreq_valid_o  (fu_mv),
    .mreq_ready_i  (cp_ready && st_q == TFuse),
    .mreq_we_o     (fu_mwe),
    .mreq_addr_o   (fu_ma),
    .mreq_wdata_o  (fu_md),
    .mrsp_valid_i  (cp_rsp && st_q == TFuse),
    .mrsp_data_i   (cp_rdata),
    .node_idx_i    (node_idx),
    .node_parent_o (n_parent),
    .node_first_o  (n_first),
    .node_next_o   (n_next),
    .node_layer_o  (n_layer),
    .node_choice_o (n_choice),
    .leaf_idx_i    (tbl_idx_d[15:0]),
    .leaf_o        (leaf_rd)
  );

  nasa_scheduler #(
    .NodeCap   (NodeCap),
    .MaxLayers (MaxLayers),
    .MaxChoices(MaxChoices)
  ) u_sched (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .start_i        (sc_start),
    .abort_i        (abort_units),
    .busy_o         (sc_busy),
    .done_o         (sc_done),
    .num_layers_i   (num_layers_q[7:0]),
    .tpl_addr_i     (tpl_addr_q),
    .stem_tpl_i     (stem_tpl_q),
    .head_tpl_i     (head_tpl_q),
    .img_addr_i     (img_addr_q),
    .img_stride_i   (img_stride_q),
    .img_count_i    (img_count_q),
    .label_addr_i   (label_addr_q),
    .mini_batch_i   (mini_batch_q),
    .classes_i      (classes_q[15:0]),
    .logits_addr_i  (logits_addr_q),
    .logits_stride_i(logits_stride_q),
    .arena_addr_i   (arena_addr_flat),
    .arena_stride_i (arena_stride_flat),
    .optab_idx_o    (s_optab_idx),
    .optab_i        (optab_rd),
    .node_idx_o     (s_node_idx),
    .node_parent_i  (n_parent),
    .node_first_i   (n_first),
    .node_next_i    (n_next),
    .node_layer_i   (n_layer),
    .node_choice_i  (n_choice),
    .xd_valid_o     (xd_valid),
    .xd_ready_i     (xd_ready),
    .xd_tpl_o       (xd_tpl),
    .xd_x_o         (xd_x),
    .xd_y_o         (xd_y),
    .xd_l_o         (xd_l),
    .xd_done_i      (xd_done),
    .ev_start_o     (ev_start),
    .ev_leaf_o      (ev_leaf),
    .ev_logits_o    (ev_logits),
    .ev_label_o     (ev_label),
    .ev_done_i      (ev_done)
  );

  nasa_eval_unit #(.NodeCap(NodeCap)) u_eval (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .clear_i      (ev_clear),
    .abort_i      (abort_units),
    .busy_o       (ev_busy),
    .start_i      (ev_start),
    .leaf_i       (ev_leaf),
    .logits_addr_i(ev_logits),
    .label_addr_i (ev_label),
    .classes_i    (classes_q[15:0]),
    .done_o       (ev_done),
    .mreq_valid_o (ev_mv),
    .mreq_ready_i (cp_ready && st_q == TSched),
    .mreq_we_o    (ev_mwe),
    .mreq_addr_o  (ev_ma),
    .mreq_wdata_o (ev_md),
    .mrsp_valid_i (cp_rsp && st_q == TSched),
    .mrsp_data_i  (cp_rdata),
    .cnt_idx_i    (tbl_idx_d[15:0]),
    .cnt_o        (ev_cnt)
  );

  always_comb begin
    cp_valid = 1'b0;
    cp_we    = 1'b0;
    cp_addr  = '0;
    cp_wdata = '0;
    unique case (st_q)
      TGen: begin
        cp_valid = cg_mv;
        cp_we    = cg_mwe;
        cp_addr  = cg_ma;
        cp_wdata = cg_md;
      end
      TFuse: begin
        cp_valid = fu_mv;
        cp_we    = fu_mwe;
        cp_addr  = fu_ma;
        cp_wdata = fu_md;
      end
      TSched: begin
        cp_valid = ev_mv;
        cp_we    = ev_mwe;
        cp_addr  = ev_ma;
        cp_wdata = ev_md;
      end
      default: ;
    endcase
  end

  logic c_req_valid, c_req_we;
  logic [31:0] c_req_addr;
  logic [MemBytes*8-1:0] c_req_wdata;
  logic [MemBytes-1:0] c_req_wstrb;
  nasa_ctrl_port #(.MemBytes(MemBytes)) u_ctrl_port (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .inval_i        (batch_start || xd_ready),
    .port_free_i    (ext_wait),
    .win_base_i     (win_base),
    .win_limit_i    (win_limit),
    .err_o          (cp_err),
    .busy_o         (cp_busy),
    .req_valid_i    (cp_valid),
    .req_ready_o    (cp_ready),
    .req_we_i       (cp_we),
    .req_addr_i     (cp_addr),
    .req_wdata_i    (cp_wdata),
    .rsp_valid_o    (cp_rsp),
    .rsp_data_o     (cp_rdata),
    .own_o          (cp_own),
    .mem_req_valid_o(c_req_valid),
    .mem_req_ready_i(mem_req_ready_i),
    .mem_req_we_o   (c_req_we),
    .mem_req_addr_o (c_req_addr),
    .mem_req_wdata_o(c_req_wdata),
    .mem_req_wstrb_o(c_req_wstrb),
    .mem_rsp_valid_i(mem_rsp_valid_i),
    .mem_rsp_rdata_i(mem_rsp_rdata_i),
    .ev_rd_beat_o   (c_rd_beat),
    .ev_wr_o        (c_wr)
  );

  // memory port: the control master only while the engine's DMA is idle (it waits in ext mode)
  assign mem_req_valid_o = cp_own ? c_req_valid : e_req_valid;
  assign mem_req_we_o    = cp_own ? c_req_we : e_req_we;
  assign mem_req_addr_o  = cp_own ? c_req_addr : e_req_addr;
  assign mem_req_len_o   = cp_own ? 8'd0 : e_req_len;
  assign mem_req_wdata_o = cp_own ? c_req_wdata : e_req_wdata;
  assign mem_req_wstrb_o = cp_own ? c_req_wstrb : e_req_wstrb;
  assign e_req_ready     = !cp_own && mem_req_ready_i;
  assign e_rsp_valid     = !cp_own && mem_rsp_valid_i;
  assign mem_rsp_ready_o = cp_own ? 1'b1 : e_rsp_ready;

  // ======================= batch sequencer =======================
  logic cfg_bad;
  always_comb begin
    cfg_bad = (num_layers_q == '0) || (num_layers_q > 32'(MaxLayers)) || (mini_batch_q == '0) ||
              (cand_count_q > 32'(MaxCands)) || (gen_mode_q > 32'd3) ||
              (classes_q == '0) || (classes_q > 32'hFFFF) || (gen_prob_q > 32'h10000) ||
              ((gen_mode_q == 32'd2 || gen_mode_q == 32'd3) && parent_count_q == '0);
    for (int i = 0; i < MaxLayers; i++) begin
      if (32'(i) < num_layers_q &&
          (layer_k_q[i] == '0 || layer_k_q[i] > 8'(MaxChoices))) begin
        cfg_bad = 1'b1;
      end
    end
  end

  logic [7:0] end_err_q;
  logic [31:0] end_index_q;
  assign xd_end       = (st_q == TEnd);
  assign xd_err       = end_err_q;
  assign xd_err_index = end_index_q;
  assign abort_units  = (st_q != TIdle) && !busy_o;  // the engine stopped the run (its error)
  assign cg_start     = (st_q == TIdle) && batch_start && !cfg_bad &&
                        cand_count_q != '0 && img_count_q != '0 && gen_mode_q != '0;
  assign ev_clear     = (st_q == TIdle) && batch_start;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      st_q          <= TIdle;
      end_err_q     <= '0;
      end_index_q   <= '0;
      fu_start      <= 1'b0;
      sc_start      <= 1'b0;
      fused_cands_q <= '0;
    end else begin
      fu_start <= 1'b0;
      sc_start <= 1'b0;
      if (abort_units) begin
        st_q <= TIdle;
      end else begin
        unique case (st_q)
          TIdle: begin
            if (batch_start) begin
              end_err_q     <= nasa_pkg::ErrNone;
              end_index_q   <= '0;
              fused_cands_q <= '0;
              if (cand_count_q == '0 || img_count_q == '0) begin
                end_err_q <= nasa_pkg::ErrEmptyBatch;
                st_q      <= TEnd;
              end else if (cfg_bad) begin
                end_err_q <= nasa_pkg::ErrBadBatchCfg;
                st_q      <= TEnd;
              end else if (gen_mode_q != '0) begin
                st_q <= TGen;
              end else begin
                fu_start <= 1'b1;
                st_q     <= TFuse;
              end
            end
          end
          TGen: begin
            if (cp_err) begin
              end_err_q <= nasa_pkg::ErrWindow;
              st_q      <= TEnd;
            end else if (cg_done) begin
              fu_start <= 1'b1;
              st_q     <= TFuse;
            end
          end
          TFuse: begin
            if (cp_err) begin
              end_err_q <= nasa_pkg::ErrWindow;
              st_q      <= TEnd;
            end else if (fu_err) begin
              end_err_q   <= fu_err_code;
              end_index_q <= fu_err_index;
              st_q        <= TEnd;
            end else if (fu_done) begin
              fused_cands_q <= cand_count_q;
              st_q          <= TClear;
            end
          end
          TClear: begin
            if (!ev_busy && !fu_busy) begin
              sc_start <= 1'b1;
              st_q     <= TSched;
            end
          end
          TSched: begin
            if (cp_err) begin
              end_err_q <= nasa_pkg::ErrWindow;
              st_q      <= TEnd;
            end else if (sc_done) begin
              st_q <= TEnd;
            end
          end
          TEnd: ;  // the engine ends the run and goes idle; abort_units returns here to TIdle
          default: st_q <= TIdle;
        endcase
      end
    end
  end

  // ======================= CSR reads =======================
  logic [31:0] tbl_rd, rdata_d, top_rdata_q;
  always_comb begin
    tbl_rd = '0;
    unique case (tbl_sel)
      8'(nasa_pkg::TblNode):
        if (tbl_idx < 24'(node_count)) tbl_rd = {n_choice, n_layer, n_parent};
      8'(nasa_pkg::TblLeaf):
        if (32'(tbl_idx) < fused_cands_q) tbl_rd = 32'(leaf_rd);
      8'(nasa_pkg::TblCorrect):
        if (tbl_idx < 24'(NodeCap)) tbl_rd = ev_cnt;
      8'(nasa_pkg::TblOpTab):
        if (tbl_idx < 24'(OpTabN)) tbl_rd = optab_rd;
      8'(nasa_pkg::TblLayerK):
        if (tbl_idx < 24'(MaxLayers)) tbl_rd = 32'(layer_k_q[tbl_idx[$clog2(MaxLayers)-1:0]]);
      8'(nasa_pkg::TblArenaAddr):
        if (tbl_idx <= 24'(MaxLayers)) tbl_rd = arena_addr_q[tbl_idx[$clog2(MaxLayers+1)-1:0]];
      8'(nasa_pkg::TblArenaStride):
        if (tbl_idx <= 24'(MaxLayers)) tbl_rd = arena_stride_q[tbl_idx[$clog2(MaxLayers+1)-1:0]];
      default: ;
    endcase
  end

  always_comb begin
    rdata_d = '0;
    unique case (csr_addr_i)
      12'(nasa_pkg::CsrNumLayers):    rdata_d = num_layers_q;
      12'(nasa_pkg::CsrCandAddr):     rdata_d = cand_addr_q;
      12'(nasa_pkg::CsrCandStride):   rdata_d = cand_stride_q;
      12'(nasa_pkg::CsrCandCount):    rdata_d = cand_count_q;
      12'(nasa_pkg::CsrTplAddr):      rdata_d = tpl_addr_q;
      12'(nasa_pkg::CsrStemTpl):      rdata_d = stem_tpl_q;
      12'(nasa_pkg::CsrHeadTpl):      rdata_d = head_tpl_q;
      12'(nasa_pkg::CsrImgAddr):      rdata_d = img_addr_q;
      12'(nasa_pkg::CsrImgStride):    rdata_d = img_stride_q;
      12'(nasa_pkg::CsrImgCount):     rdata_d = img_count_q;
      12'(nasa_pkg::CsrLabelAddr):    rdata_d = label_addr_q;
      12'(nasa_pkg::CsrMiniBatch):    rdata_d = mini_batch_q;
      12'(nasa_pkg::CsrClasses):      rdata_d = classes_q;
      12'(nasa_pkg::CsrLogitsAddr):   rdata_d = logits_addr_q;
      12'(nasa_pkg::CsrLogitsStride): rdata_d = logits_stride_q;
      12'(nasa_pkg::CsrGenMode):      rdata_d = gen_mode_q;
      12'(nasa_pkg::CsrGenSeed):      rdata_d = gen_seed_q;
      12'(nasa_pkg::CsrGenProb):      rdata_d = gen_prob_q;
      12'(nasa_pkg::CsrParentAddr):   rdata_d = parent_addr_q;
      12'(nasa_pkg::CsrParentCount):  rdata_d = parent_count_q;
      12'(nasa_pkg::CsrNodeCount):    rdata_d = 32'(node_count);
      12'(nasa_pkg::CsrTblAddr):      rdata_d = tbl_addr_q;
      12'(nasa_pkg::CsrTblData):      rdata_d = tbl_rd;
      12'(nasa_pkg::CsrHwBatch):
        rdata_d = {8'(MaxChoices), 8'(MaxLayers), 16'(NodeCap)};
      default: ;
    endcase
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) top_rdata_q <= '0;
    else top_rdata_q <= rd ? rdata_d : '0;
  end
  assign csr_rvalid_o = e_rvalid;
  assign csr_rdata_o  = e_rdata | top_rdata_q;

  logic unused;
  assign unused = ^{s_optab_idx[15:OTW], cg_busy, sc_busy, cp_busy, tbl_idx[23:16], ev_mwe, ev_md, fu_mwe, fu_md};
endmodule
