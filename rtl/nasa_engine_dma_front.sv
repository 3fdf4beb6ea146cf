// Engine unit: the job arbiter in front of the DMA (nasa_dma) and the routing of its responses.
// Read jobs come from the sequencer (descriptors,
// first), the input loader and the tile loader. Loads the compute is waiting for go first: the
// weights of its channel tile before input when both are missing, but input before the weights
// of a later tile (the tile loader runs a tile ahead); otherwise input chunks and weight jobs
// alternate. A job's routing (nasa_engine_pkg::job_t base, bank, flag, dst) travels in the DMA
// tag, {base, bank, flag, dst}, and comes back with every response beat (rsp_*_o). (The output
// writer's stores go straight to the DMA's write path, or to the scratch inside its window.)
// On-chip scratch (docs/engine.md "On-chip scratch"): an input job whose source lies in the
// window of CSR ScratchBase goes to the scratch (nasa_scratch), whose beats take the response
// path in the cycles the DMA has none. A layer's input bytes must arrive in order (its loader
// counts them), so an input job goes to the scratch only when no input job is queued or in
// flight in the DMA, and to the DMA only when the scratch holds no job or beat.
module nasa_engine_dma_front #(
  parameter nasa_pkg::cfg_t Cfg = nasa_pkg::CfgSim,  // the configuration (nasa_pkg::cfg_t)
  localparam int unsigned MemBytes = Cfg.mem_bytes, AddrBits = Cfg.addr_bits,
  localparam int unsigned TagW = nasa_engine_pkg::dma_tag_w($clog2(Cfg.in_buf_bytes),
                                                            $clog2(2 * Cfg.kred_max))
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  input  logic                      stop_i,       // the run stops: the DMA drops its jobs
  // job requests
  input  logic                      desc_valid_i,
  input  logic [AddrBits-1:0]       desc_src_i,
  input  logic                      il_valid_i,
  input  nasa_engine_pkg::job_t     il_job_i,
  output logic                      il_grant_o,
  input  logic                      tl_valid_i,
  input  nasa_engine_pkg::job_t     tl_job_i,
  output logic                      tl_grant_o,
  // what the compute waits for
  input  logic                      want_i,       // the issue stage has a step to issue
  input  logic                      w_ok_i,       // its weights are in
  input  logic                      in_ok_i,      // its input is in
  input  logic                      tl_cur_i,     // the tile loader works on the compute's tile
  // the on-chip scratch: its window (CSR ScratchBase, aligned; 0: none) and read side
  input  logic [31:0]               sc_base_i,
  output logic                      sc_job_valid_o,
  input  logic                      sc_job_ready_i,
  input  logic                      sc_busy_i,
  input  logic                      sc_valid_i,
  output logic                      sc_ready_o,
  input  logic [TagW-1:0]           sc_tag_i,
  input  logic [31:0]               sc_idx_i,
  input  logic                      sc_last_i,
  input  logic [MemBytes*8-1:0]     sc_data_i,
  // response beats
  output logic                      rsp_valid_o,
  output logic                      rsp_last_o,   // a job's last beat
  output logic [2:0]                rsp_dst_o,    // nasa_engine_pkg::dst_e
  output logic                      rsp_flag_o,
  output logic [7:0]                rsp_bank_o,
  output logic [nasa_engine_pkg::LyBw-1:0] rsp_base_o,
  output logic [31:0]               rsp_idx_o,    // beat index within the job
  output logic [31:0]               rsp_addr_o,   // base + beat offset
  output logic [MemBytes*8-1:0]     rsp_data_o,
  // the DMA's job and read-data sides
  output logic                      job_valid_o,
  input  logic                      job_ready_i,
  output logic [AddrBits-1:0]       job_src_o,
  output logic [31:0]               job_len_o,
  output logic [TagW-1:0]           job_tag_o,
  input  logic                      o_valid_i,
  input  logic [TagW-1:0]           o_tag_i,
  input  logic [31:0]               o_idx_i,
  input  logic                      o_last_i,
  input  logic [MemBytes*8-1:0]     o_data_i
);
  localparam int unsigned AW    = AddrBits;
  localparam int unsigned OffW  = $clog2(MemBytes);
  localparam int unsigned BaseW = TagW - 12;
  localparam int unsigned LBW   = nasa_engine_pkg::LyBw;

  logic job_valid, job_ready;
  logic [AW-1:0] job_src;
  logic [31:0] job_len;
  logic [TagW-1:0] job_tag;
  logic rr_q, prefer_tl, prefer_il;
  // the input loader's job: to the scratch; input jobs the DMA holds (queued or in flight)
  logic il_sc, il_dma_ok, il_sc_ok;
  logic [5:0] dma_in_q;
  assign il_sc     = nasa_engine_pkg::in_scratch(32'(il_job_i.src), sc_base_i,
                                                 Cfg.scratch_bytes);
  assign il_dma_ok = !sc_busy_i;
  assign il_sc_ok  = dma_in_q == '0;

  assign prefer_tl = want_i && !w_ok_i && tl_cur_i;
  assign prefer_il = want_i && !in_ok_i && !prefer_tl;
  always_comb begin
    il_grant_o     = 1'b0;
    tl_grant_o     = 1'b0;
    job_valid      = 1'b0;
    sc_job_valid_o = 1'b0;
    job_src    = '0;
    job_len    = '0;
    job_tag    = '0;
    if (desc_valid_i) begin
      job_valid = 1'b1;
      job_src   = desc_src_i;
      job_len   = 32'(nasa_pkg::DescBytes);
      job_tag   = {BaseW'(0), 8'd0, 1'b0, nasa_engine_pkg::DstDesc};
    end else if (il_valid_i && (!tl_valid_i || (!prefer_tl && (prefer_il || !rr_q)))) begin
      job_valid      = !il_sc && il_dma_ok;
      sc_job_valid_o = il_sc && il_sc_ok;
      job_src        = AW'(il_job_i.src);
      job_len        = il_job_i.len;
      job_tag        = {BaseW'(il_job_i.base), il_job_i.bank, il_job_i.flag, il_job_i.dst};
      il_grant_o     = il_sc ? (il_sc_ok && sc_job_ready_i) : (il_dma_ok && job_ready);
    end else if (tl_valid_i) begin
      job_valid  = 1'b1;
      job_src    = AW'(tl_job_i.src);
      job_len    = tl_job_i.len;
      job_tag    = {BaseW'(tl_job_i.base), tl_job_i.bank, tl_job_i.flag, tl_job_i.dst};
      tl_grant_o = job_ready;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) rr_q <= 1'b0;
    else if (il_grant_o) rr_q <= 1'b1;
    else if (tl_grant_o) rr_q <= 1'b0;
  end

  // input jobs in the DMA: granted there, not yet out with their last beat (an aborted run's
  // jobs are all flushed out of the DMA with it, so the count comes back to 0)
  logic dma_in_inc, dma_in_dec;
  assign dma_in_inc = il_grant_o && !il_sc;
  assign dma_in_dec = o_valid_i && o_last_i && o_tag_i[2:0] == 3'(nasa_engine_pkg::DstIn);
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) dma_in_q <= '0;
    else if (stop_i) dma_in_q <= '0;
    else if (dma_in_inc && !dma_in_dec) dma_in_q <= dma_in_q + 6'd1;
    else if (dma_in_dec && !dma_in_inc) dma_in_q <= dma_in_q - 6'd1;
  end

  assign job_ready   = job_ready_i;
  assign job_valid_o = job_valid;
  assign job_src_o   = job_src;
  assign job_len_o   = job_len;
  assign job_tag_o   = job_tag;

  // response routing: the DMA's beats, the scratch's in the cycles without one
  logic [TagW-1:0] r_tag;
  logic [31:0] r_idx;
  assign sc_ready_o  = !o_valid_i;
  assign r_tag       = o_valid_i ? o_tag_i : sc_tag_i;
  assign r_idx       = o_valid_i ? o_idx_i : sc_idx_i;
  assign rsp_valid_o = o_valid_i || sc_valid_i;
  assign rsp_last_o  = o_valid_i ? o_last_i : sc_last_i;
  assign rsp_dst_o   = r_tag[2:0];
  assign rsp_flag_o  = r_tag[3];
  assign rsp_bank_o  = r_tag[11:4];
  assign rsp_base_o  = LBW'(r_tag[TagW-1:12]);
  assign rsp_idx_o   = r_idx;
  assign rsp_addr_o  = 32'(r_tag[TagW-1:12]) + (r_idx << OffW);
  assign rsp_data_o  = o_valid_i ? o_data_i : sc_data_i;

  // the high bits of the requests' fields (see nasa_engine_pkg)
  logic unused_job;
  assign unused_job = ^{il_job_i, tl_job_i};

`ifndef SYNTHESIS
  assert property (@(posedge clk_i) disable iff (!rst_ni) !(il_grant_o && tl_grant_o))
    else $error("two jobs granted at once");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   !$isunknown({job_valid, il_grant_o, tl_grant_o, rsp_valid_o}))
    else $error("X on the job arbiter's control");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   rsp_valid_o |-> (rsp_dst_o <= 3'(nasa_engine_pkg::DstWK4)))
    else $error("response beat for an unknown destination");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (sc_valid_i && !o_valid_i) |-> (sc_tag_i[2:0] == 3'(nasa_engine_pkg::DstIn)))
    else $error("a scratch beat for a destination other than the input buffer");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   !(dma_in_dec && dma_in_q == '0 && !dma_in_inc))
    else $error("an input job left the DMA that was not counted in");
`endif
endmodule
