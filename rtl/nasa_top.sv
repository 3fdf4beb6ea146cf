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
  parameter int unsigned WTiles     = 16,    // channel tiles the weight ring holds (power of two)
  parameter int unsigned ScratchBytes = 2097152  // on-chip scratch bytes (power of two; 0: none)
) (
`include "nasa_core_ports.svh"
);
  localparam int unsigned OTW = $clog2(MaxLayers * MaxChoices);
  // The configuration as one value (the fields of nasa_pkg::cfg_t, in order), for the engine.
  /* verilator lint_off WIDTHCONCAT */  // (Verilator 5.006 warns on the casts of the parameters)
  localparam nasa_pkg::cfg_t Cfg = {32'(Rows), 32'(Cols), 32'(MemBytes), 32'(InBufBytes),
                                    32'(KredMax), 32'(BurstMax), 32'(NodeCap), 32'(MaxLayers),
                                    32'(MaxChoices), 32'(MaxCands), 32'(RqLanes), 32'(AddrBits),
                                    32'(DmaInflight), 32'(WTiles), 32'(ScratchBytes)};
  /* verilator lint_on WIDTHCONCAT */

  // ======================= engine =======================
  nasa_pkg::mem_req_t e_req;
  nasa_pkg::mem_rsp_t e_rsp;
  logic [31:0] b_rdata;  // read data of the batch CSRs (the engine's CSR block registers it)
  logic batch_start, xd_valid, xd_ready, xd_cov, xd_done, xd_end, ext_wait;
  logic [7:0] xd_n;
  logic [31:0] xd_tpl, xd_x, xd_y, xd_l, xd_s, xd_err_index, win_base, win_limit, sc_base;
  logic [7:0] xd_err;
  logic c_rd_beat, c_wr;

  nasa_engine #(
    .Cfg(Cfg)
  ) u_engine (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .csr_req_i      (csr_req_i),
    .csr_rsp_o      (csr_rsp_o),
    .csr_ext_rdata_i(b_rdata),
    .mem_req_o      (e_req),
    .mem_rsp_i      (e_rsp),
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
    .xd_s_i         (xd_s),
    .xd_n_i         (xd_n),
    .xd_cov_o       (xd_cov),
    .xd_done_o      (xd_done),
    .xd_end_i       (xd_end),
    .xd_err_i       (xd_err),
    .xd_err_index_i (xd_err_index),
    .ext_wait_o     (ext_wait),
    .win_base_o     (win_base),
    .win_limit_o    (win_limit),
    .scratch_base_o (sc_base),
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
    .csr_req_i     (csr_req_i),
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
  nasa_pkg::byte_req_t cg_req, fu_req, ev_req, cp_req;
  nasa_pkg::byte_rsp_t cg_rsp, fu_rsp, ev_rsp, cp_rsp;
  logic cp_err, cp_busy, cp_own;

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
    .mreq_o         (cg_req),
    .mrsp_i         (cg_rsp)
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
    .mreq_o         (fu_req),
    .mrsp_i         (fu_rsp),
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
    .scratch_stride_i(cfg.scratch_stride),
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
    .xd_s_o         (xd_s),
    .xd_n_o         (xd_n),
    .xd_cov_i       (xd_cov),
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
    .mreq_o         (ev_req),
    .mrsp_i         (ev_rsp),
    .cnt_idx_i    (tbl_idx_d),
    .cnt_o        (ev_cnt)
  );

  // the unit of the phase owns the control port; the others see no handshake
  always_comb begin
    cp_req = '0;
    cg_rsp = '0;
    fu_rsp = '0;
    ev_rsp = '0;
    unique case (st_q)
      nasa_top_pkg::TGen: begin
        cp_req = cg_req;
        cg_rsp = cp_rsp;
      end
      nasa_top_pkg::TFuse: begin
        cp_req = fu_req;
        fu_rsp = cp_rsp;
      end
      nasa_top_pkg::TSched: begin
        cp_req = ev_req;
        ev_rsp = cp_rsp;
      end
      default: ;
    endcase
  end

  nasa_pkg::mem_req_t c_req;
  nasa_ctrl_port #(.MemBytes(MemBytes), .ScratchBytes(ScratchBytes)) u_ctrl_port (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .inval_i        (batch_start || xd_ready),
    .port_free_i    (ext_wait),
    .win_base_i     (win_base),
    .win_limit_i    (win_limit),
    .scratch_base_i (sc_base),
    .err_o          (cp_err),
    .busy_o         (cp_busy),
    .req_i          (cp_req),
    .rsp_o          (cp_rsp),
    .own_o          (cp_own),
    .mem_req_o      (c_req),
    .mem_rsp_i      (mem_rsp_i),
    .ev_rd_beat_o   (c_rd_beat),
    .ev_wr_o        (c_wr)
  );

  // memory port: the control master only while the engine's DMA is idle (it waits in ext mode)
  assign mem_req_o = cp_own ? c_req : e_req;
  always_comb begin
    e_rsp = mem_rsp_i;
    e_rsp.ready = !cp_own && mem_rsp_i.ready;
    e_rsp.valid = !cp_own && mem_rsp_i.valid;
  end

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
  assign unused = ^{s_optab_idx[15:OTW], cg_busy, sc_busy, cp_busy};
endmodule
