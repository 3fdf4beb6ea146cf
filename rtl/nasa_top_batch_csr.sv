// Accelerator top unit: the batch-run CSRs and tables (docs/fusion.md). Host writes land here
// while the engine is idle; reads of the table window (CsrTblData) walk the table TblAddr selects,
// one entry per access (synchronous table RAMs read the next index one cycle ahead: tbl_idx_o).
// Read data of this block's addresses (rdata_o, zero elsewhere and when not reading) goes to the
// engine's CSR block, whose one decoder selects and registers the read data of every CSR.
module nasa_top_batch_csr #(
  parameter int unsigned NodeCap    = nasa_pkg::NodeCap,
  parameter int unsigned MaxLayers  = nasa_pkg::MaxLayers,
  parameter int unsigned MaxChoices = nasa_pkg::MaxChoices,
  localparam int unsigned OpTabN    = MaxLayers * MaxChoices,
  localparam int unsigned OTW       = $clog2(OpTabN)
) (
  input  logic                         clk_i,
  input  logic                         rst_ni,
  input  nasa_pkg::csr_req_t           csr_req_i,
  output logic [31:0]                  rdata_o,       // this cycle's read data (its addresses)
  input  logic                         busy_i,        // a run: writes ignored, tables the units'
  output nasa_top_pkg::batch_cfg_t     cfg_o,
  output logic [MaxLayers*8-1:0]       layer_k_o,     // TblLayerK
  output logic [(MaxLayers+1)*32-1:0]  arena_addr_o,  // TblArenaAddr
  output logic [(MaxLayers+1)*32-1:0]  arena_stride_o,
  output logic [15:0]                  tbl_idx_o,     // the table index after this cycle
  // the op table (TblOpTab): the scheduler reads it while a run is busy
  input  logic [OTW-1:0]               optab_idx_i,
  output logic [31:0]                  optab_o,
  // the units' tables, read through the window
  input  logic [15:0]                  node_count_i,
  input  logic [31:0]                  node_i,        // TblNode: {choice, layer, parent}
  input  logic [15:0]                  leaf_i,        // TblLeaf
  input  logic [31:0]                  fused_cands_i, // candidates the node table holds
  input  logic [31:0]                  correct_i      // TblCorrect
);
  localparam int unsigned LKW = $clog2(MaxLayers);
  localparam int unsigned LAW = $clog2(MaxLayers + 1);

  nasa_top_pkg::batch_cfg_t cfg_q;
  logic [31:0] tbl_addr_q;
  logic [7:0] layer_k_q [MaxLayers];
  logic [31:0] arena_addr_q [MaxLayers+1];
  logic [31:0] arena_stride_q [MaxLayers+1];
  logic wr, rd, tbl_acc;
  logic [7:0] tbl_sel;
  logic [23:0] tbl_idx, tbl_idx_d;

  assign wr      = csr_req_i.valid && csr_req_i.we && !busy_i;
  assign rd      = csr_req_i.valid && !csr_req_i.we;
  assign tbl_sel = tbl_addr_q[31:24];
  assign tbl_idx = tbl_addr_q[23:0];
  assign tbl_acc = csr_req_i.valid && (csr_req_i.addr == 12'(nasa_pkg::CsrTblData)) && (rd || wr);
  // the index after this cycle: synchronous table RAMs read it one cycle ahead
  always_comb begin
    tbl_idx_d = tbl_idx;
    if (wr && csr_req_i.addr == 12'(nasa_pkg::CsrTblAddr)) tbl_idx_d = csr_req_i.wdata[23:0];
    else if (tbl_acc) tbl_idx_d = tbl_idx + 24'd1;
  end

  // op table RAM (host writes, scheduler reads while running)
  logic [31:0] optab_mem [OpTabN];
  logic [OTW-1:0] optab_raddr;
  logic optab_we;
  logic [31:0] optab_q;
  assign optab_we    = wr && tbl_acc && tbl_sel == 8'(nasa_pkg::TblOpTab) &&
                       tbl_idx < 24'(OpTabN);
  assign optab_raddr = busy_i ? optab_idx_i : tbl_idx_d[OTW-1:0];
  always_ff @(posedge clk_i) begin
    if (optab_we) optab_mem[tbl_idx[OTW-1:0]] <= csr_req_i.wdata;
    optab_q <= optab_mem[optab_raddr];
  end
  assign optab_o = optab_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      cfg_q      <= '0;
      tbl_addr_q <= '0;
      for (int i = 0; i < MaxLayers; i++) layer_k_q[i] <= '0;
      for (int i = 0; i <= MaxLayers; i++) begin
        arena_addr_q[i]   <= '0;
        arena_stride_q[i] <= '0;
      end
    end else begin
      if (wr) begin
        unique case (csr_req_i.addr)
          12'(nasa_pkg::CsrNumLayers):    cfg_q.num_layers <= csr_req_i.wdata;
          12'(nasa_pkg::CsrCandAddr):     cfg_q.cand_addr <= csr_req_i.wdata;
          12'(nasa_pkg::CsrCandStride):   cfg_q.cand_stride <= csr_req_i.wdata;
          12'(nasa_pkg::CsrCandCount):    cfg_q.cand_count <= csr_req_i.wdata;
          12'(nasa_pkg::CsrTplAddr):      cfg_q.tpl_addr <= csr_req_i.wdata;
          12'(nasa_pkg::CsrStemTpl):      cfg_q.stem_tpl <= csr_req_i.wdata;
          12'(nasa_pkg::CsrHeadTpl):      cfg_q.head_tpl <= csr_req_i.wdata;
          12'(nasa_pkg::CsrImgAddr):      cfg_q.img_addr <= csr_req_i.wdata;
          12'(nasa_pkg::CsrImgStride):    cfg_q.img_stride <= csr_req_i.wdata;
          12'(nasa_pkg::CsrImgCount):     cfg_q.img_count <= csr_req_i.wdata;
          12'(nasa_pkg::CsrLabelAddr):    cfg_q.label_addr <= csr_req_i.wdata;
          12'(nasa_pkg::CsrMiniBatch):    cfg_q.mini_batch <= csr_req_i.wdata;
          12'(nasa_pkg::CsrClasses):      cfg_q.classes <= csr_req_i.wdata;
          12'(nasa_pkg::CsrLogitsAddr):   cfg_q.logits_addr <= csr_req_i.wdata;
          12'(nasa_pkg::CsrLogitsStride): cfg_q.logits_stride <= csr_req_i.wdata;
          12'(nasa_pkg::CsrGenMode):      cfg_q.gen_mode <= csr_req_i.wdata;
          12'(nasa_pkg::CsrGenSeed):      cfg_q.gen_seed <= csr_req_i.wdata;
          12'(nasa_pkg::CsrGenProb):      cfg_q.gen_prob <= csr_req_i.wdata;
          12'(nasa_pkg::CsrParentAddr):   cfg_q.parent_addr <= csr_req_i.wdata;
          12'(nasa_pkg::CsrParentCount):  cfg_q.parent_count <= csr_req_i.wdata;
          12'(nasa_pkg::CsrScratchStride): cfg_q.scratch_stride <= csr_req_i.wdata;
          12'(nasa_pkg::CsrTblAddr):      tbl_addr_q <= csr_req_i.wdata;
          12'(nasa_pkg::CsrTblData): begin
            if (tbl_sel == 8'(nasa_pkg::TblLayerK) && tbl_idx < 24'(MaxLayers)) begin
              layer_k_q[tbl_idx[LKW-1:0]] <= csr_req_i.wdata[7:0];
            end
            if (tbl_sel == 8'(nasa_pkg::TblArenaAddr) && tbl_idx <= 24'(MaxLayers)) begin
              arena_addr_q[tbl_idx[LAW-1:0]] <= csr_req_i.wdata;
            end
            if (tbl_sel == 8'(nasa_pkg::TblArenaStride) && tbl_idx <= 24'(MaxLayers)) begin
              arena_stride_q[tbl_idx[LAW-1:0]] <= csr_req_i.wdata;
            end
          end
          default: ;
        endcase
      end
      if (tbl_acc) tbl_addr_q <= {tbl_sel, tbl_idx_d};
    end
  end

  for (genvar i = 0; i < MaxLayers; i++) begin : g_kflat
    assign layer_k_o[i*8 +: 8] = layer_k_q[i];
  end
  for (genvar i = 0; i <= MaxLayers; i++) begin : g_aflat
    assign arena_addr_o[i*32 +: 32]   = arena_addr_q[i];
    assign arena_stride_o[i*32 +: 32] = arena_stride_q[i];
  end
  assign cfg_o     = cfg_q;
  assign tbl_idx_o = tbl_idx_d[15:0];  // (the units' tables hold < 2^16 entries)

  // ======================= reads =======================
  logic [31:0] tbl_rd, rdata_d;
  always_comb begin
    tbl_rd = '0;
    unique case (tbl_sel)
      8'(nasa_pkg::TblNode):
        if (tbl_idx < 24'(node_count_i)) tbl_rd = node_i;
      8'(nasa_pkg::TblLeaf):
        if (32'(tbl_idx) < fused_cands_i) tbl_rd = 32'(leaf_i);
      8'(nasa_pkg::TblCorrect):
        if (tbl_idx < 24'(NodeCap)) tbl_rd = correct_i;
      8'(nasa_pkg::TblOpTab):
        if (tbl_idx < 24'(OpTabN)) tbl_rd = optab_q;
      8'(nasa_pkg::TblLayerK):
        if (tbl_idx < 24'(MaxLayers)) tbl_rd = 32'(layer_k_q[tbl_idx[LKW-1:0]]);
      8'(nasa_pkg::TblArenaAddr):
        if (tbl_idx <= 24'(MaxLayers)) tbl_rd = arena_addr_q[tbl_idx[LAW-1:0]];
      8'(nasa_pkg::TblArenaStride):
        if (tbl_idx <= 24'(MaxLayers)) tbl_rd = arena_stride_q[tbl_idx[LAW-1:0]];
      default: ;
    endcase
  end

  always_comb begin
    rdata_d = '0;
    unique case (csr_req_i.addr)
      12'(nasa_pkg::CsrNumLayers):    rdata_d = cfg_q.num_layers;
      12'(nasa_pkg::CsrCandAddr):     rdata_d = cfg_q.cand_addr;
      12'(nasa_pkg::CsrCandStride):   rdata_d = cfg_q.cand_stride;
      12'(nasa_pkg::CsrCandCount):    rdata_d = cfg_q.cand_count;
      12'(nasa_pkg::CsrTplAddr):      rdata_d = cfg_q.tpl_addr;
      12'(nasa_pkg::CsrStemTpl):      rdata_d = cfg_q.stem_tpl;
      12'(nasa_pkg::CsrHeadTpl):      rdata_d = cfg_q.head_tpl;
      12'(nasa_pkg::CsrImgAddr):      rdata_d = cfg_q.img_addr;
      12'(nasa_pkg::CsrImgStride):    rdata_d = cfg_q.img_stride;
      12'(nasa_pkg::CsrImgCount):     rdata_d = cfg_q.img_count;
      12'(nasa_pkg::CsrLabelAddr):    rdata_d = cfg_q.label_addr;
      12'(nasa_pkg::CsrMiniBatch):    rdata_d = cfg_q.mini_batch;
      12'(nasa_pkg::CsrClasses):      rdata_d = cfg_q.classes;
      12'(nasa_pkg::CsrLogitsAddr):   rdata_d = cfg_q.logits_addr;
      12'(nasa_pkg::CsrLogitsStride): rdata_d = cfg_q.logits_stride;
      12'(nasa_pkg::CsrGenMode):      rdata_d = cfg_q.gen_mode;
      12'(nasa_pkg::CsrGenSeed):      rdata_d = cfg_q.gen_seed;
      12'(nasa_pkg::CsrGenProb):      rdata_d = cfg_q.gen_prob;
      12'(nasa_pkg::CsrParentAddr):   rdata_d = cfg_q.parent_addr;
      12'(nasa_pkg::CsrParentCount):  rdata_d = cfg_q.parent_count;
      12'(nasa_pkg::CsrScratchStride): rdata_d = cfg_q.scratch_stride;
      12'(nasa_pkg::CsrNodeCount):    rdata_d = 32'(node_count_i);
      12'(nasa_pkg::CsrTblAddr):      rdata_d = tbl_addr_q;
      12'(nasa_pkg::CsrTblData):      rdata_d = tbl_rd;
      12'(nasa_pkg::CsrHwBatch):
        rdata_d = {8'(MaxChoices), 8'(MaxLayers), 16'(NodeCap)};
      default: ;
    endcase
  end
  assign rdata_o = rd ? rdata_d : '0;

  logic unused_idx;
  assign unused_idx = ^tbl_idx[23:16];

`ifndef SYNTHESIS
  assert property (@(posedge clk_i) disable iff (!rst_ni) !$isunknown({optab_we, tbl_acc}))
    else $error("X on batch CSR control");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   csr_req_i.valid |-> !$isunknown(rdata_o))
    else $error("X on batch CSR read data");
`endif
endmodule
