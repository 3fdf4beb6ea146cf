// On-chip scratch memory (docs/engine.md "On-chip scratch"): Bytes of activation memory behind
// the window [base, base + Bytes) of CSR ScratchBase. The input loader's read jobs inside the
// window come here instead of the DMA, the output writer's strobed word writes inside it too, so
// a layer's output kept in the window costs the memory port nothing.
// Reads: one job at a time (job_ready_o while none is held), beats realigned as the DMA does
// (beat i carries the job's bytes [i*MemBytes, (i+1)*MemBytes)): the memory keeps even and odd
// words in two banks, so the two words an unaligned beat spans come out in one cycle. A beat is
// read into the output register when it is empty or being taken (out_ready_i: the response path
// is free of DMA beats this cycle), so the job streams a beat a cycle while the path is free.
// Writes: one strobed port word a cycle, always accepted; and a second one (we2_i: the dual
// drain, docs/engine.md "Dual drain") in the other bank than the first's. stop_i drops the job and the beat
// held (an aborted run's loads are discarded, as the DMA's are).
module nasa_scratch #(
  parameter int unsigned Bytes    = 2097152,
  parameter int unsigned MemBytes = 32,
  parameter int unsigned AddrBits = 32,
  parameter int unsigned TagW     = 40,
  parameter int unsigned MaxJob   = 256
) (
  input  logic                  clk_i,
  input  logic                  rst_ni,
  input  logic                  stop_i,
  output logic                  busy_o,       // a job held or a beat not yet taken
  // read jobs
  input  logic                  job_valid_i,
  output logic                  job_ready_o,
  input  logic [AddrBits-1:0]   job_src_i,    // inside the window (the low bits address it)
  input  logic [31:0]           job_len_i,    // 1..MaxJob
  input  logic [TagW-1:0]       job_tag_i,
  // realigned read beats
  output logic                  out_valid_o,
  input  logic                  out_ready_i,
  output logic [TagW-1:0]       out_tag_o,
  output logic [31:0]           out_idx_o,
  output logic                  out_last_o,
  output logic [MemBytes*8-1:0] out_data_o,
  // writes: a port word with byte strobes (the window's low address bits)
  input  logic                  we_i,
  input  logic [AddrBits-1:0]   waddr_i,
  input  logic [MemBytes*8-1:0] wdata_i,
  input  logic [MemBytes-1:0]   wstrb_i,
  input  logic                  we2_i,
  input  logic [AddrBits-1:0]   waddr2_i,
  input  logic [MemBytes*8-1:0] wdata2_i,
  input  logic [MemBytes-1:0]   wstrb2_i
);
  localparam int unsigned OffW  = $clog2(MemBytes);
  localparam int unsigned Words = Bytes / MemBytes;
  localparam int unsigned WW    = $clog2(Words);
  localparam int unsigned BW    = (WW > 1) ? WW - 1 : 1;  // word index within a bank
  localparam int unsigned NBW   = $clog2((MaxJob + MemBytes - 1) / MemBytes + 1);

  // (public: the simulation harness loads and reads the window's bytes, sim/src/verilated_engine.h)
  logic [MemBytes*8-1:0] even_q [Words / 2] /* verilator public_flat_rw */;
  logic [MemBytes*8-1:0] odd_q [Words / 2] /* verilator public_flat_rw */;

  // the job: next beat's first word, byte offset, beats left
  logic j_valid_q;
  logic [WW-1:0] j_word_q;
  logic [OffW-1:0] j_off_q;
  logic [NBW-1:0] j_idx_q, j_nb_q;
  logic [TagW-1:0] j_tag_q;
  // the output register
  logic o_valid_q, o_last_q, o_odd_lo_q;
  logic [OffW-1:0] o_off_q;
  logic [NBW-1:0] o_idx_q;
  logic [TagW-1:0] o_tag_q;
  logic [MemBytes*8-1:0] ew_q, ow_q;

  logic take, issue, accept;
  logic [WW-1:0] rw, rw1, wword, wword2;
  assign take        = o_valid_q && out_ready_i;
  assign issue       = j_valid_q && (!o_valid_q || take) && !stop_i;
  assign job_ready_o = !j_valid_q;
  assign accept      = job_valid_i && !j_valid_q && !stop_i;
  assign busy_o      = j_valid_q || o_valid_q;
  assign rw          = j_word_q;
  assign rw1         = j_word_q + WW'(1);  // (wraps at the window's end: its bytes unused)
  assign wword       = waddr_i[OffW +: WW];
  assign wword2      = waddr2_i[OffW +: WW];

  // each bank takes one word a cycle: port 1's when it addresses the bank, else port 2's (the
  // writer sends a second word only into the other bank than the first's)
  logic e_we, o_we;
  logic [BW-1:0] e_idx, o_idx;
  logic [MemBytes*8-1:0] e_data, o_data;
  logic [MemBytes-1:0] e_strb, o_strb;
  always_comb begin
    e_we = 1'b0;
    o_we = 1'b0;
    e_idx = BW'(wword2 >> 1);
    o_idx = BW'(wword2 >> 1);
    e_data = wdata2_i;
    o_data = wdata2_i;
    e_strb = wstrb2_i;
    o_strb = wstrb2_i;
    if (we2_i) begin
      e_we = !wword2[0];
      o_we = wword2[0];
    end
    if (we_i && !wword[0]) begin
      e_we = 1'b1;
      e_idx = BW'(wword >> 1);
      e_data = wdata_i;
      e_strb = wstrb_i;
    end
    if (we_i && wword[0]) begin
      o_we = 1'b1;
      o_idx = BW'(wword >> 1);
      o_data = wdata_i;
      o_strb = wstrb_i;
    end
  end

  always_ff @(posedge clk_i) begin
    for (int b = 0; b < MemBytes; b++) begin
      if (e_we && e_strb[b]) even_q[e_idx][b*8 +: 8] <= e_data[b*8 +: 8];
      if (o_we && o_strb[b]) odd_q[o_idx][b*8 +: 8] <= o_data[b*8 +: 8];
    end
    if (issue) begin
      ew_q       <= even_q[BW'(rw[0] ? (rw1 >> 1) : (rw >> 1))];
      ow_q       <= odd_q[BW'(rw >> 1)];
      o_odd_lo_q <= rw[0];
      o_off_q    <= j_off_q;
      o_idx_q    <= j_idx_q;
      o_last_q   <= j_idx_q + NBW'(1) == j_nb_q;
      o_tag_q    <= j_tag_q;
    end
    if (accept) begin
      j_word_q <= job_src_i[OffW +: WW];
      j_off_q  <= job_src_i[OffW-1:0];
      j_nb_q   <= NBW'((job_len_i + 32'(MemBytes - 1)) >> OffW);
      j_tag_q  <= job_tag_i;
    end else if (issue) begin
      j_word_q <= j_word_q + WW'(1);
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      j_valid_q <= 1'b0;
      j_idx_q   <= '0;
      o_valid_q <= 1'b0;
    end else if (stop_i) begin
      j_valid_q <= 1'b0;
      o_valid_q <= 1'b0;
    end else begin
      if (accept) begin
        j_valid_q <= 1'b1;
        j_idx_q   <= '0;
      end else if (issue) begin
        j_idx_q <= j_idx_q + NBW'(1);
        if (j_idx_q + NBW'(1) == j_nb_q) j_valid_q <= 1'b0;
      end
      if (issue) o_valid_q <= 1'b1;
      else if (take) o_valid_q <= 1'b0;
    end
  end

  logic [2*MemBytes*8-1:0] win;
  assign win         = o_odd_lo_q ? {ew_q, ow_q} : {ow_q, ew_q};
  assign out_valid_o = o_valid_q;
  assign out_tag_o   = o_tag_q;
  assign out_idx_o   = 32'(o_idx_q);
  assign out_last_o  = o_last_q;
  assign out_data_o  = (MemBytes * 8)'(win >> {o_off_q, 3'b000});

  // the window's high address bits select it (the job arbiter and the writer route by them)
  logic unused_addr;
  assign unused_addr = ^{job_src_i, waddr_i, waddr2_i, job_len_i};

`ifndef SYNTHESIS
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   accept |-> (job_len_i != '0 && job_len_i <= 32'(MaxJob)))
    else $error("nasa_scratch: job of %0d bytes (1..%0d)", job_len_i, MaxJob);
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   !$isunknown({job_valid_i, we_i, out_ready_i, stop_i}))
    else $error("nasa_scratch: X on a control signal");
  if (MemBytes > 1) begin : g_chk_align
    assert property (@(posedge clk_i) disable iff (!rst_ni) we_i |-> (waddr_i[OffW-1:0] == '0))
      else $error("nasa_scratch: unaligned write at %h", waddr_i);
    assert property (@(posedge clk_i) disable iff (!rst_ni)
                     we2_i |-> (we_i && waddr2_i[OffW-1:0] == '0 && wword2[0] != wword[0]))
      else $error("nasa_scratch: second write at %h not beside one in the other bank", waddr2_i);
  end
`endif
endmodule
