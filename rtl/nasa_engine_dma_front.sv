// Engine unit: the job arbiter and the DMA. Read jobs come from the sequencer (descriptors,
// first), the input loader and the tile loader. Loads the compute is waiting for go first: the
// weights of its channel tile before input when both are missing, but input before the weights
// of a later tile (the tile loader runs a tile ahead); otherwise input chunks and weight jobs
// alternate. A job's routing (nasa_engine_pkg::job_t base, bank, flag, dst) travels in the DMA
// tag, {base, bank, flag, dst}, and comes back with every response beat (rsp_*_o). The output
// writer's stores go straight to the DMA's write path.
module nasa_engine_dma_front #(
  parameter int unsigned MemBytes    = 32,
  parameter int unsigned InBufBytes  = 131072,
  parameter int unsigned KredMax     = 8192,
  parameter int unsigned BurstMax    = 8,
  parameter int unsigned Cols        = 16,
  parameter int unsigned AddrBits    = 32,
  parameter int unsigned DmaInflight = 16
) (
  input  logic                      clk_i,
  input  logic                      rst_ni,
  input  logic                      abort_i,
  output logic                      idle_o,
  // job requests
  input  logic                      desc_valid_i,
  input  logic [AddrBits-1:0]       desc_src_i,
  input  logic                      il_valid_i,
  input  nasa_engine_pkg::job_t     il_job_i,
  output logic                      il_grant_o,
  input  logic                      tl_valid_i,
  input  nasa_engine_pkg::job_t     tl_job_i,
  output logic                      tl_grant_o,
  output logic                      job_ready_o,  // the DMA takes a job (grants a descriptor)
  // what the compute waits for
  input  logic                      want_i,       // the issue stage has a step to issue
  input  logic                      w_ok_i,       // its weights are in
  input  logic                      in_ok_i,      // its input is in
  input  logic                      tl_cur_i,     // the tile loader works on the compute's tile
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
  // output writes
  input  logic                      wr_valid_i,
  output logic                      wr_ready_o,
  input  logic [AddrBits-1:0]       wr_addr_i,
  input  logic [MemBytes*8-1:0]     wr_data_i,
  input  logic [MemBytes-1:0]       wr_strb_i,
  // traffic (counters)
  output logic                      ev_rd_beat_o,
  output logic                      ev_wr_o,
  output logic [$clog2(MemBytes):0] ev_wr_bytes_o,
  // memory port
  output nasa_pkg::mem_req_t mem_req_o,
  input  nasa_pkg::mem_rsp_t mem_rsp_i
);
  localparam int unsigned AW    = AddrBits;
  localparam int unsigned OffW  = $clog2(MemBytes);
  localparam int unsigned IAW   = $clog2(InBufBytes);
  localparam int unsigned WRW   = $clog2(2 * KredMax);
  // tag = {base, bank[7:0], flag, dst[2:0]}; base: an input-buffer byte offset, a weight-ring
  // byte address or a record slot, so as wide as the larger buffer's addresses (and >= 6)
  localparam int unsigned BaseW = (IAW > WRW) ? ((IAW > 6) ? IAW : 6) : ((WRW > 6) ? WRW : 6);
  localparam int unsigned TagW  = BaseW + 12;
  localparam int unsigned Chunk = BurstMax * MemBytes;  // input chunk per read job
  // the largest DMA job: a descriptor, an input chunk, or a tile's per-channel records
  localparam int unsigned MaxJob = (Chunk > Cols * 8) ? ((Chunk > 64) ? Chunk : 64) :
                                   ((Cols * 8 > 64) ? Cols * 8 : 64);
  localparam int unsigned LBW   = nasa_engine_pkg::LyBw;

  logic job_valid, job_ready;
  logic [AW-1:0] job_src;
  logic [31:0] job_len;
  logic [TagW-1:0] job_tag;
  logic o_valid, o_last;
  logic [TagW-1:0] o_tag;
  logic [31:0] o_idx;
  logic [MemBytes*8-1:0] o_data;
  logic rr_q, prefer_tl, prefer_il;

  assign prefer_tl = want_i && !w_ok_i && tl_cur_i;
  assign prefer_il = want_i && !in_ok_i && !prefer_tl;
  always_comb begin
    il_grant_o = 1'b0;
    tl_grant_o = 1'b0;
    job_valid  = 1'b0;
    job_src    = '0;
    job_len    = '0;
    job_tag    = '0;
    if (desc_valid_i) begin
      job_valid = 1'b1;
      job_src   = desc_src_i;
      job_len   = 32'(nasa_pkg::DescBytes);
      job_tag   = {BaseW'(0), 8'd0, 1'b0, nasa_engine_pkg::DstDesc};
    end else if (il_valid_i && (!tl_valid_i || (!prefer_tl && (prefer_il || !rr_q)))) begin
      job_valid  = 1'b1;
      job_src    = AW'(il_job_i.src);
      job_len    = il_job_i.len;
      job_tag    = {BaseW'(il_job_i.base), il_job_i.bank, il_job_i.flag, il_job_i.dst};
      il_grant_o = job_ready;
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
  assign job_ready_o = job_ready;

  nasa_dma #(
    .MemBytes(MemBytes),
    .BurstMax(BurstMax),
    .TagW    (TagW),
    .AddrBits(AW),
    .JobDepth(nasa_pkg::JobDepth),
    .Inflight(DmaInflight),
    .MaxJob  (MaxJob)
  ) u_dma (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .abort_i        (abort_i),
    .idle_o         (idle_o),
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
    .wr_valid_i     (wr_valid_i),
    .wr_ready_o     (wr_ready_o),
    .wr_addr_i      (wr_addr_i),
    .wr_data_i      (wr_data_i),
    .wr_strb_i      (wr_strb_i),
    .ev_rd_beat_o   (ev_rd_beat_o),
    .ev_wr_o        (ev_wr_o),
    .ev_wr_bytes_o  (ev_wr_bytes_o),
    .mem_req_o      (mem_req_o),
    .mem_rsp_i      (mem_rsp_i)
  );

  // response routing
  assign rsp_valid_o = o_valid;
  assign rsp_last_o  = o_last;
  assign rsp_dst_o   = o_tag[2:0];
  assign rsp_flag_o  = o_tag[3];
  assign rsp_bank_o  = o_tag[11:4];
  assign rsp_base_o  = LBW'(o_tag[TagW-1:12]);
  assign rsp_idx_o   = o_idx;
  assign rsp_addr_o  = 32'(o_tag[TagW-1:12]) + (o_idx << OffW);
  assign rsp_data_o  = o_data;

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
                   rsp_valid_o |-> (rsp_dst_o <= 3'(nasa_engine_pkg::DstPrm)))
    else $error("response beat for an unknown destination");
`endif
endmodule
