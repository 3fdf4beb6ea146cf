// DMA between the engine's buffers and the memory port.
// Read jobs (byte source address, byte length, destination tag) are split into bursts of at most
// BurstMax bus words; responses (in order) are realigned so that output beat i of a job carries
// job bytes [i*MemBytes, (i+1)*MemBytes). Several jobs may be in flight to hide memory latency.
// Writes are single bus words with byte strobes; reads and writes share the request channel with
// round-robin priority. abort_i drops queued jobs and refuses writes; bursts already started are
// completed and their data discarded, so the port is left clean. A job is at most MaxJob bytes
// (the engine's largest job): lengths and beat counts are only as wide as that needs.
module nasa_dma #(
  parameter int unsigned MemBytes = 32,
  parameter int unsigned BurstMax = 8,
  parameter int unsigned TagW     = 40,
  parameter int unsigned AddrBits = 32,   // width of the addresses (the port carries 32 bits)
  parameter int unsigned JobDepth = 4,
  parameter int unsigned Inflight = 8,
  parameter int unsigned MaxJob   = 256
) (
  input  logic                  clk_i,
  input  logic                  rst_ni,
  input  logic                  abort_i,
  output logic                  idle_o,
  // read jobs
  input  logic                  job_valid_i,
  output logic                  job_ready_o,
  input  logic [AddrBits-1:0]   job_src_i,
  input  logic [31:0]           job_len_i,     // 1..MaxJob
  input  logic [TagW-1:0]       job_tag_i,
  // realigned read data
  output logic                  out_valid_o,
  output logic [TagW-1:0]       out_tag_o,
  output logic [31:0]           out_idx_o,
  output logic                  out_last_o,
  output logic [MemBytes*8-1:0] out_data_o,
  // writes
  input  logic                  wr_valid_i,
  output logic                  wr_ready_o,
  input  logic [AddrBits-1:0]   wr_addr_i,
  input  logic [MemBytes*8-1:0] wr_data_i,
  input  logic [MemBytes-1:0]   wr_strb_i,
  // events for the performance counters
  output logic                  ev_rd_beat_o,
  output logic                  ev_wr_o,
  output logic [$clog2(MemBytes):0] ev_wr_bytes_o,
  // memory port
  output nasa_pkg::mem_req_t mem_req_o,
  input  nasa_pkg::mem_rsp_t mem_rsp_i
);
  localparam int unsigned OffW = (MemBytes > 1) ? $clog2(MemBytes) : 1;
  localparam int unsigned LenW = $clog2(MaxJob + 1);                      // a job's byte length
  localparam int unsigned BW   = $clog2((MaxJob + MemBytes - 1) / MemBytes + 2);  // its beats
  localparam int unsigned AW   = AddrBits;
  localparam int unsigned DW   = nasa_pkg::MemBytesMax * 8;  // the port's data fields
  localparam int unsigned SW   = nasa_pkg::MemBytesMax;
  localparam int unsigned JobW = AW + LenW + TagW;
  // in-flight entry: offset, input beats, output beats, tag
  localparam int unsigned InfW = OffW + BW + BW + TagW;

  // ---------------- job queue ----------------
  logic job_q_valid, job_q_pop;
  logic [JobW-1:0] job_q_data;
  // (the engine's job arbiter may switch to a more urgent load while the queue is full: its
  // offer is not held, so the queue does not check that it is)
  nasa_fifo #(.Width(JobW), .Depth(JobDepth), .HeldInput(1'b0)) u_job_q (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .flush_i    (abort_i),
    .in_valid_i (job_valid_i && !abort_i),
    .in_ready_o (job_ready_o),
    .in_data_i  ({job_tag_i, job_len_i[LenW-1:0], job_src_i}),
    .out_valid_o(job_q_valid),
    .out_ready_i(job_q_pop),
    .out_data_o (job_q_data),
    .count_o    ()
  );
  logic unused_len;
  assign unused_len = ^job_len_i[31:LenW];

  logic [AW-1:0] jq_src;
  logic [LenW-1:0] jq_len;
  logic [TagW-1:0] jq_tag;
  assign jq_src = job_q_data[AW-1:0];
  assign jq_len = job_q_data[AW +: LenW];
  assign jq_tag = job_q_data[JobW-1 -: TagW];

  logic [OffW-1:0] jq_off;
  logic [LenW+1:0] jq_span;
  logic [BW-1:0] jq_nb, jq_no;
  assign jq_off  = (MemBytes > 1) ? jq_src[OffW-1:0] : '0;
  assign jq_span = (LenW + 2)'(jq_len) + (LenW + 2)'(jq_off) + (LenW + 2)'(MemBytes - 1);
  assign jq_nb   = BW'(jq_span >> OffW);
  assign jq_no   = BW'(((LenW + 2)'(jq_len) + (LenW + 2)'(MemBytes - 1)) >> OffW);

  // ---------------- request generator ----------------
  logic [AW-1:0] rq_addr_q;
  logic [BW-1:0] rq_left_q;
  logic inf_ready, inf_push;
  logic rd_req_valid, rd_req_fire, wr_fire;
  logic [BW-1:0] burst;
  logic take_job;

  assign burst        = (32'(rq_left_q) > BurstMax) ? BW'(BurstMax) : rq_left_q;
  assign rd_req_valid = (rq_left_q != '0);
  // a new job is taken when no burst is pending or the last one is accepted this cycle
  assign take_job     = job_q_valid && inf_ready && !abort_i &&
                        (!rd_req_valid || (rd_req_fire && rq_left_q == burst));
  assign job_q_pop    = take_job;
  assign inf_push     = take_job;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rq_addr_q <= '0;
      rq_left_q <= '0;
    end else if (take_job) begin
      rq_addr_q <= {jq_src[AW-1:OffW], {OffW{1'b0}}};
      rq_left_q <= jq_nb;
    end else if (rd_req_fire) begin
      rq_addr_q <= rq_addr_q + (AW'(burst) << OffW);
      rq_left_q <= rq_left_q - burst;
    end
  end

  // round-robin between reads and writes; a request waiting for ready is held until accepted
  logic last_was_wr_q, grant_wr, hold_q, hold_wr_q;
  assign grant_wr        = hold_q ? hold_wr_q :
                           (wr_valid_i && !abort_i && (!rd_req_valid || !last_was_wr_q));
  assign mem_req_o.valid = grant_wr || rd_req_valid;
  assign mem_req_o.we    = grant_wr;
  logic [AW-1:0] req_addr;
  assign req_addr        = grant_wr ? {wr_addr_i[AW-1:OffW], {OffW{1'b0}}} : rq_addr_q;
  assign mem_req_o.addr  = 32'(req_addr);
  assign mem_req_o.len   = grant_wr ? 8'd0 : 8'(burst) - 8'd1;
  assign mem_req_o.wdata = DW'(wr_data_i);
  assign mem_req_o.wstrb = grant_wr ? SW'(wr_strb_i) : '0;
  assign rd_req_fire     = mem_req_o.valid && mem_rsp_i.ready && !grant_wr;
  assign wr_fire         = mem_req_o.valid && mem_rsp_i.ready && grant_wr;
  assign wr_ready_o      = grant_wr && mem_rsp_i.ready;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      last_was_wr_q <= 1'b0;
      hold_q        <= 1'b0;
      hold_wr_q     <= 1'b0;
    end else begin
      if (wr_fire) last_was_wr_q <= 1'b1;
      else if (rd_req_fire) last_was_wr_q <= 1'b0;
      hold_q    <= mem_req_o.valid && !mem_rsp_i.ready;
      hold_wr_q <= grant_wr;
    end
  end

  assign ev_wr_o = wr_fire;
  always_comb begin
    ev_wr_bytes_o = '0;
    for (int i = 0; i < MemBytes; i++) begin
      ev_wr_bytes_o = ev_wr_bytes_o + ($clog2(MemBytes) + 1)'(wr_strb_i[i]);
    end
  end

  // ---------------- in-flight jobs and response realignment ----------------
  logic inf_valid, inf_pop;
  logic [InfW-1:0] inf_data;
  logic [$clog2(Inflight):0] inf_count;
  nasa_fifo #(.Width(InfW), .Depth(Inflight)) u_inflight (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .flush_i    (1'b0),
    .in_valid_i (inf_push),
    .in_ready_o (inf_ready),
    .in_data_i  ({jq_tag, jq_no, jq_nb, jq_off}),
    .out_valid_o(inf_valid),
    .out_ready_i(inf_pop),
    .out_data_o (inf_data),
    .count_o    (inf_count)
  );

  logic [OffW-1:0] h_off;
  logic [BW-1:0] h_nb, h_no;
  logic [TagW-1:0] h_tag;
  assign h_off = inf_data[OffW-1:0];
  assign h_nb  = inf_data[OffW +: BW];
  assign h_no  = inf_data[OffW + BW +: BW];
  assign h_tag = inf_data[InfW-1 -: TagW];

  logic [BW-1:0] beat_q, oidx_q;
  logic [MemBytes*8-1:0] prev_q;
  logic flush_q, discard_q;
  logic rsp_fire, last_beat, h_aligned;
  logic [2*MemBytes*8-1:0] cat;
  logic [MemBytes*8-1:0] shifted;

  logic [MemBytes*8-1:0] rdata;  // the port's data bytes this configuration uses
  assign rdata           = mem_rsp_i.rdata[MemBytes*8-1:0];
  assign h_aligned       = (h_off == '0);
  assign mem_req_o.rsp_ready = inf_valid && !flush_q;
  assign rsp_fire            = mem_rsp_i.valid && mem_req_o.rsp_ready;
  assign last_beat       = (beat_q == h_nb - BW'(1));
  assign cat             = flush_q ? {{(MemBytes * 8) {1'b0}}, prev_q} : {rdata, prev_q};
  assign shifted         = (MemBytes * 8)'(cat >> {h_off, 3'b000});

  always_comb begin
    out_valid_o = 1'b0;
    out_data_o  = rdata;
    out_last_o  = 1'b0;
    inf_pop     = 1'b0;
    if (flush_q) begin
      out_valid_o = 1'b1;
      out_data_o  = shifted;
      out_last_o  = 1'b1;
      inf_pop     = 1'b1;
    end else if (rsp_fire) begin
      if (h_aligned) begin
        out_valid_o = 1'b1;
        out_data_o  = rdata;
        out_last_o  = last_beat;
      end else if (beat_q != '0) begin
        out_valid_o = 1'b1;
        out_data_o  = shifted;
        out_last_o  = (beat_q == h_no);
      end
      if (last_beat && (h_aligned || h_no != h_nb)) inf_pop = 1'b1;
    end
    if (discard_q || abort_i) out_valid_o = 1'b0;
  end
  assign out_tag_o    = h_tag;
  assign out_idx_o    = 32'(oidx_q);
  assign ev_rd_beat_o = rsp_fire;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      beat_q    <= '0;
      oidx_q    <= '0;
      prev_q    <= '0;
      flush_q   <= 1'b0;
      discard_q <= 1'b0;
    end else begin
      if (abort_i) discard_q <= 1'b1;
      else if (idle_o) discard_q <= 1'b0;
      if (flush_q) begin
        flush_q <= 1'b0;
        beat_q  <= '0;
        oidx_q  <= '0;
      end else if (rsp_fire) begin
        prev_q <= rdata;
        if (h_aligned || beat_q != '0) oidx_q <= oidx_q + BW'(1);
        if (last_beat) begin
          if (!h_aligned && h_no == h_nb) begin
            flush_q <= 1'b1;
          end else begin
            beat_q <= '0;
            oidx_q <= '0;
          end
        end else begin
          beat_q <= beat_q + BW'(1);
        end
      end
    end
  end

  // write addresses are word aligned by the writer; the offset bits are not needed
  logic unused_wr;
  assign unused_wr = ^wr_addr_i[OffW-1:0];

  assign idle_o = !job_q_valid && !rd_req_valid && (inf_count == '0) && !flush_q;

`ifndef SYNTHESIS
  // Simulation-only checks (Verilator --assert; Yosys defines SYNTHESIS and skips them).
  // Memory port, valid/ready: a request waiting for ready is held, unchanged, until accepted
  // (abort_i included: started bursts and a granted write complete).
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (mem_req_o.valid && !mem_rsp_i.ready) |=>
                   (mem_req_o.valid && $stable({mem_req_o.we, mem_req_o.addr})))
    else $error("nasa_dma: memory request changed or withdrawn while stalled");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (mem_req_o.valid && !mem_rsp_i.ready && !mem_req_o.we) |=>
                   $stable(mem_req_o.len))
    else $error("nasa_dma: read burst length changed while stalled");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (mem_req_o.valid && !mem_rsp_i.ready && mem_req_o.we) |=>
                   $stable({mem_req_o.wdata, mem_req_o.wstrb}))
    else $error("nasa_dma: write data or strobes changed while stalled");
  // Reads are whole bursts of 1..BurstMax aligned words; writes carry at least one byte.
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (mem_req_o.valid && !mem_req_o.we) |->
                   (32'(mem_req_o.len) < BurstMax && mem_req_o.addr[OffW-1:0] == '0))
    else $error("nasa_dma: read burst of %0d beats at %h", 32'(mem_req_o.len) + 1, mem_req_o.addr);
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (mem_req_o.valid && mem_req_o.we) |-> (mem_req_o.wstrb != '0))
    else $error("nasa_dma: write without byte strobes");
  // Read jobs: 1..MaxJob bytes. (A job offered while the queue is full need not be held: the
  // engine's arbiter may offer a more urgent one instead; a job counts only when job_ready_o.)
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (job_valid_i && !abort_i) |-> (job_len_i != '0 && job_len_i <= MaxJob))
    else $error("nasa_dma: job of %0d bytes (1..%0d)", job_len_i, MaxJob);
  // After an abort the DMA discards read data until it is idle: a job offered before that would
  // lose its data, so none may come.
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (discard_q && !idle_o) |-> !(job_valid_i && !abort_i))
    else $error("nasa_dma: read job offered after an abort before the DMA was idle");
  // Read data comes only while a read is in flight.
  assert property (@(posedge clk_i) disable iff (!rst_ni) mem_rsp_i.valid |-> inf_valid)
    else $error("nasa_dma: read data with no read in flight");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   !$isunknown({abort_i, job_valid_i, wr_valid_i, mem_req_o.valid, mem_rsp_i.ready,
                                mem_rsp_i.valid, mem_req_o.rsp_ready}))
    else $error("nasa_dma: X on a control signal");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   mem_req_o.valid |-> !$isunknown({mem_req_o.we, mem_req_o.addr, mem_req_o.len}))
    else $error("nasa_dma: X on the memory request");
`endif
endmodule
