// Accelerator top: the layer engine plus the batch-mode units of docs/fusion.md (cand_gen,
// fusion_unit, scheduler, eval_unit), their CSRs and tables, and the control memory master that
// shares the memory port with the engine's DMA. Program runs (CTRL bit 0) go straight to the
// engine; batch runs (CTRL bit 2) put the engine in ext mode and this module sequences
// generate -> fuse -> schedule/evaluate. Ports are the engine's: one CSR bus, one memory port.
module nasa_top #(
  parameter int unsigned Rows       = 16,
  parameter int unsigned Cols       = 16,
  parameter int unsigned MemBytes   = 32,
  parameter int unsigned InBufBytes = 131072,
  parameter int unsigned KredMax    = 8192,
  parameter int unsigned BurstMax   = 8,
  parameter int unsigned NodeCap    = nasa_pkg::NodeCap,
  parameter int unsigned MaxLayers  = nasa_pkg::MaxLayers,
  parameter int unsigned MaxChoices = nasa_pkg::MaxChoices,
  parameter int unsigned MaxCands   = nasa_pkg::MaxCands,
  parameter int unsigned RqLanes    = 16,    // requant lanes (a power of two dividing Cols)
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
  localparam int unsigned OTW = $clog2(MaxLayers * MaxChoices);

  // ======================= engine =======================
  logic e_req_valid, e_req_ready, e_req_we, e_rsp_valid, e_rsp_ready;
  logic [31:0] e_req_addr;
  logic [7:0] e_req_len;
  logic [MemBytes*8-1:0] e_req_wdata;
  logic [MemBytes-1:0] e_req_wstrb;
  logic [31:0] b_rdata;  // read data of the batch CSRs (the engine's CSR block registers it)
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
    .csr_rvalid_o   (csr_rvalid_o),
    .csr_rdata_o    (csr_rdata_o),
    .csr_ext_rdata_i(b_rdata),
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
  nasa_top_pkg::batch_cfg_t cfg;
  logic [MaxLayers*8-1:0] layer_k_flat;
  logic [(MaxLayers+1)*32-1:0] arena_addr_flat, arena_stride_flat;
  logic [15:0] tbl_idx_d;
  logic [31:0] optab_rd, fused_cands_q;
  logic [15:0] s_optab_idx, node_count, s_node_idx, n_parent, n_first, n_next, leaf_rd;
  logic [7:0] n_layer, n_choice;
  logic [31:0] ev_cnt;

  nasa_top_batch_csr #(
    .NodeCap   (NodeCap),
    .MaxLayers (MaxLayers),
    .MaxChoices(MaxChoices)
  ) u_batch_csr (
    .clk_i         (clk_i),
    .rst_ni        (rst_ni),
    .csr_valid_i   (csr_valid_i),
    .csr_we_i      (csr_we_i),
    .csr_addr_i    (csr_addr_i),
    .csr_wdata_i   (csr_wdata_i),
    .rdata_o       (b_rdata),
    .busy_i        (busy_o),
    .cfg_o         (cfg),
    .layer_k_o     (layer_k_flat),
    .arena_addr_o  (arena_addr_flat),
    .arena_stride_o(arena_stride_flat),
    .tbl_idx_o     (tbl_idx_d),
    .optab_idx_i   (s_optab_idx[OTW-1:0]),
    .optab_o       (optab_rd),
    .node_count_i  (node_count),
    .node_i        ({n_choice, n_layer, n_parent}),
    .leaf_i        (leaf_rd),
    .fused_cands_i (fused_cands_q),
    .correct_i     (ev_cnt)
  );

  // ======================= units =======================
  logic abort_units;
  logic cg_start, cg_busy, cg_done;
  logic fu_start_q, fu_busy, fu_done, fu_err;
  logic [7:0] fu_err_code;
  logic [31:0] fu_err_index;
  logic sc_start_q, sc_busy, sc_done;
  logic ev_clear, ev_busy, ev_start, ev_done;
  logic [15:0] ev_leaf;
  logic [31:0] ev_logits, ev_label;

  // byte requests of the three units, one phase at a time
  logic cg_mv, cg_mwe, fu_mv, fu_mwe, ev_mv, ev_mwe;
  logic [31:0] cg_ma, fu_ma, ev_ma;
  logic [7:0] cg_md, fu_md, ev_md;
  logic cp_valid, cp_ready, cp_we, cp_rsp, cp_err, cp_busy, cp_own;
  logic [31:0] cp_addr;
  logic [7:0] cp_wdata, cp_rdata;

  nasa_top_pkg::tstate_e st_q, st_d;

  nasa_cand_gen #(.MaxLayers(MaxLayers)) u_cand_gen (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .start_i        (cg_start),
    .abort_i        (abort_units),
    .busy_o         (cg_busy),
    .done_o         (cg_done),
    .mode_i         (cfg.gen_mode[1:0]),
    .seed_i         (cfg.gen_seed),
    .prob_i         (cfg.gen_prob[16:0]),
    .num_layers_i   (cfg.num_layers[7:0]),
    .layer_k_i      (layer_k_flat),
    .out_addr_i     (cfg.cand_addr),
    .stride_i       (cfg.cand_stride),
    .count_i        (cfg.cand_count),
    .parent_addr_i  (cfg.parent_addr),
    .parent_count_i (cfg.parent_count),
    .mreq_valid_o   (cg_mv),
    .mreq_ready_i   (cp_ready && st_q == nasa_top_pkg::TGen),
    .mreq_we_o      (cg_mwe),
    .mreq_addr_o    (cg_ma),
    .mreq_wdata_o   (cg_md),
    .mrsp_valid_i   (cp_rsp && st_q == nasa_top_pkg::TGen),
    .mrsp_data_i    (cp_rdata)
  );

  logic [15:0] node_idx;
  assign node_idx = busy_o ? s_node_idx : tbl_idx_d;

  nasa_fusion_unit #(
    .NodeCap   (NodeCap),
    .MaxLayers (MaxLayers),
    .MaxChoices(MaxChoices),
    .MaxCands  (MaxCands)
  ) u_fusion (
    .clk_i         (clk_i),
    .rst_ni        (rst_ni),
    .start_i       (fu_start_q),
    .abort_i       (abort_units),
    .busy_o        (fu_busy),
    .done_o        (fu_done),
    .err_o         (fu_err),
    .err_code_o    (fu_err_code),
    .err_index_o   (fu_err_index),
    .num_layers_i  (cfg.num_layers[7:0]),
    .layer_k_i     (layer_k_flat),
    .cand_addr_i   (cfg.cand_addr),
    .cand_stride_i (cfg.cand_stride),
    .cand_count_i  (cfg.cand_count),
    .node_count_o  (node_count),
    .mreq_valid_o  (fu_mv),
    .mreq_ready_i  (cp_ready && st_q == nasa_top_pkg::TFuse),
    .mreq_we_o     (fu_mwe),
    .mreq_addr_o   (fu_ma),
    .mreq_wdata_o  (fu_md),
    .mrsp_valid_i  (cp_rsp && st_q == nasa_top_pkg::TFuse),
    .mrsp_data_i   (cp_rdata),
    .node_idx_i    (node_idx),
    .node_parent_o (n_parent),
    .node_first_o  (n_first),
    .node_next_o   (n_next),
    .node_layer_o  (n_layer),
    .node_choice_o (n_choice),
    .leaf_idx_i    (tbl_idx_d),
    .leaf_o        (leaf_rd)
  );

  nasa_scheduler #(
    .NodeCap   (NodeCap),
    .MaxLayers (MaxLayers),
    .MaxChoices(MaxChoices)
  ) u_sched (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .start_i        (sc_start_q),
    .abort_i        (abort_units),
    .busy_o         (sc_busy),
    .done_o         (sc_done),
    .num_layers_i   (cfg.num_layers[7:0]),
    .tpl_addr_i     (cfg.tpl_addr),
    .stem_tpl_i     (cfg.stem_tpl),
    .head_tpl_i     (cfg.head_tpl),
    .img_addr_i     (cfg.img_addr),
    .img_stride_i   (cfg.img_stride),
    .img_count_i    (cfg.img_count),
    .label_addr_i   (cfg.label_addr),
    .mini_batch_i   (cfg.mini_batch),
    .classes_i      (cfg.classes[15:0]),
    .logits_addr_i  (cfg.logits_addr),
    .logits_stride_i(cfg.logits_stride),
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
    .classes_i    (cfg.classes[15:0]),
    .done_o       (ev_done),
    .mreq_valid_o (ev_mv),
    .mreq_ready_i (cp_ready && st_q == nasa_top_pkg::TSched),
    .mreq_we_o    (ev_mwe),
    .mreq_addr_o  (ev_ma),
    .mreq_wdata_o (ev_md),
    .mrsp_valid_i (cp_rsp && st_q == nasa_top_pkg::TSched),
    .mrsp_data_i  (cp_rdata),
    .cnt_idx_i    (tbl_idx_d),
    .cnt_o        (ev_cnt)
  );

  always_comb begin
    cp_valid = 1'b0;
    cp_we    = 1'b0;
    cp_addr  = '0;
    cp_wdata = '0;
    unique case (st_q)
      nasa_top_pkg::TGen: begin
        cp_valid = cg_mv;
        cp_we    = cg_mwe;
        cp_addr  = cg_ma;
        cp_wdata = cg_md;
      end
      nasa_top_pkg::TFuse: begin
        cp_valid = fu_mv;
        cp_we    = fu_mwe;
        cp_addr  = fu_ma;
        cp_wdata = fu_md;
      end
      nasa_top_pkg::TSched: begin
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
    cfg_bad = (cfg.num_layers == '0) || (cfg.num_layers > 32'(MaxLayers)) ||
              (cfg.mini_batch == '0) || (cfg.cand_count > 32'(MaxCands)) ||
              (cfg.gen_mode > 32'(nasa_pkg::GenCrossover)) || (cfg.classes == '0) ||
              (cfg.classes > 32'hFFFF) || (cfg.gen_prob > 32'h10000) ||
              ((cfg.gen_mode == 32'(nasa_pkg::GenMutate) ||
                cfg.gen_mode == 32'(nasa_pkg::GenCrossover)) && cfg.parent_count == '0);
    for (int i = 0; i < MaxLayers; i++) begin
      if (32'(i) < cfg.num_layers &&
          (layer_k_flat[i*8 +: 8] == '0 || layer_k_flat[i*8 +: 8] > 8'(MaxChoices))) begin
        cfg_bad = 1'b1;
      end
    end
  end

  logic [7:0] end_err_q, end_err_d;
  logic [31:0] end_index_q, end_index_d, fused_cands_d;
  logic fu_start_d, sc_start_d;
  assign xd_end       = (st_q == nasa_top_pkg::TEnd);
  assign xd_err       = end_err_q;
  assign xd_err_index = end_index_q;
  // the engine stopped the run (its error)
  assign abort_units  = (st_q != nasa_top_pkg::TIdle) && !busy_o;
  assign cg_start     = (st_q == nasa_top_pkg::TIdle) && batch_start && !cfg_bad &&
                        cfg.cand_count != '0 && cfg.img_count != '0 && cfg.gen_mode != '0;
  assign ev_clear     = (st_q == nasa_top_pkg::TIdle) && batch_start;

  always_comb begin
    st_d          = st_q;
    end_err_d     = end_err_q;
    end_index_d   = end_index_q;
    fused_cands_d = fused_cands_q;
    fu_start_d    = 1'b0;
    sc_start_d    = 1'b0;
    if (abort_units) begin
      st_d = nasa_top_pkg::TIdle;
    end else begin
      unique case (st_q)
        nasa_top_pkg::TIdle: begin
          if (batch_start) begin
            end_err_d     = nasa_pkg::ErrNone;
            end_index_d   = '0;
            fused_cands_d = '0;
            if (cfg.cand_count == '0 || cfg.img_count == '0) begin
              end_err_d = nasa_pkg::ErrEmptyBatch;
              st_d      = nasa_top_pkg::TEnd;
            end else if (cfg_bad) begin
              end_err_d = nasa_pkg::ErrBadBatchCfg;
              st_d      = nasa_top_pkg::TEnd;
            end else if (cfg.gen_mode != '0) begin
              st_d = nasa_top_pkg::TGen;
            end else begin
              fu_start_d = 1'b1;
              st_d       = nasa_top_pkg::TFuse;
            end
          end
        end
        nasa_top_pkg::TGen: begin
          if (cp_err) begin
            end_err_d = nasa_pkg::ErrWindow;
            st_d      = nasa_top_pkg::TEnd;
          end else if (cg_done) begin
            fu_start_d = 1'b1;
            st_d       = nasa_top_pkg::TFuse;
          end
        end
        nasa_top_pkg::TFuse: begin
          if (cp_err) begin
            end_err_d = nasa_pkg::ErrWindow;
            st_d      = nasa_top_pkg::TEnd;
          end else if (fu_err) begin
            end_err_d   = fu_err_code;
            end_index_d = fu_err_index;
            st_d        = nasa_top_pkg::TEnd;
          end else if (fu_done) begin
            fused_cands_d = cfg.cand_count;
            st_d          = nasa_top_pkg::TClear;
          end
        end
        nasa_top_pkg::TClear: begin
          if (!ev_busy && !fu_busy) begin
            sc_start_d = 1'b1;
            st_d       = nasa_top_pkg::TSched;
          end
        end
        nasa_top_pkg::TSched: begin
          if (cp_err) begin
            end_err_d = nasa_pkg::ErrWindow;
            st_d      = nasa_top_pkg::TEnd;
          end else if (sc_done) begin
            st_d = nasa_top_pkg::TEnd;
          end
        end
        nasa_top_pkg::TEnd: ;  // the engine ends the run and goes idle; abort_units: to TIdle
        default: st_d = nasa_top_pkg::TIdle;
      endcase
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      st_q          <= nasa_top_pkg::TIdle;
      end_err_q     <= '0;
      end_index_q   <= '0;
      fu_start_q      <= 1'b0;
      sc_start_q      <= 1'b0;
      fused_cands_q <= '0;
    end else begin
      st_q          <= st_d;
      end_err_q     <= end_err_d;
      end_index_q   <= end_index_d;
      fu_start_q      <= fu_start_d;
      sc_start_q      <= sc_start_d;
      fused_cands_q <= fused_cands_d;
    end
  end

`ifndef SYNTHESIS
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   st_q == nasa_top_pkg::TIdle || st_q == nasa_top_pkg::TGen ||
                   st_q == nasa_top_pkg::TFuse || st_q == nasa_top_pkg::TClear ||
                   st_q == nasa_top_pkg::TSched || st_q == nasa_top_pkg::TEnd)
    else $error("batch sequencer state is not a legal state");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   !$isunknown({st_q, fu_start_q, sc_start_q, xd_end, abort_units}))
    else $error("X on batch sequencer control");
`endif

  logic unused;
  assign unused = ^{s_optab_idx[15:OTW], cg_busy, sc_busy, cp_busy, ev_mwe, ev_md, fu_mwe, fu_md};
endmodule
