// Output writer: queues entries of one drained row of up to Cols int8 results (one output
// pixel's channels of a tile), or two (the dual drain, docs/engine.md "Dual drain": rows at
// row_addr_i and row_addr2_i, row_n_i bytes each), and turns each into its strobed bus words in
// order: a row's low word, and its high word when it straddles a word boundary. One word a
// cycle on the write port (wr_*); with Dual, when the word offered goes to the scratch
// (wr_sc_i: its window holds it) and so does the next one (wr2_sc_i, of wr2_addr_o), the next
// word goes too: into the same write when it is the same word (strobes merged), else on the
// second port (wr2_*) when it lies in the scratch's other bank (even / odd words). An entry
// marked last (a layer's last row) pulses last_o when its final write is accepted: the memory
// port takes a write in the cycle it accepts it, so the layer's results are then in memory.
module nasa_out_writer #(
  parameter int unsigned Cols     = 16,
  parameter int unsigned MemBytes = 32,
  parameter int unsigned Depth    = 4,
  parameter int unsigned AddrBits = 32,
  parameter bit          Dual     = 1'b0,
  localparam int unsigned NW      = $clog2(Cols + 1)
) (
  input  logic                  clk_i,
  input  logic                  rst_ni,
  input  logic                  flush_i,
  input  logic                  row_valid_i,
  output logic                  row_ready_o,
  input  logic [AddrBits-1:0]   row_addr_i,
  input  logic [NW-1:0]         row_n_i,       // bytes in the row, 1..Cols
  input  logic [Cols*8-1:0]     row_data_i,
  input  logic                  row_two_i,     // a second row (Dual only)
  input  logic [AddrBits-1:0]   row_addr2_i,
  input  logic [Cols*8-1:0]     row_data2_i,
  input  logic                  row_last_i,
  output logic                  last_o,
  output logic                  wr_valid_o,
  input  logic                  wr_ready_i,
  output logic [AddrBits-1:0]   wr_addr_o,
  output logic [MemBytes*8-1:0] wr_data_o,
  output logic [MemBytes-1:0]   wr_strb_o,
  input  logic                  wr_sc_i,       // wr_addr_o lies in the scratch's window
  input  logic                  wr2_sc_i,      // wr2_addr_o lies in the scratch's window
  output logic                  wr2_valid_o,   // a second word into the scratch, this cycle
  output logic [AddrBits-1:0]   wr2_addr_o,
  output logic [MemBytes*8-1:0] wr2_data_o,
  output logic [MemBytes-1:0]   wr2_strb_o
);
  localparam int unsigned OffW = $clog2(MemBytes);
  localparam int unsigned AW   = AddrBits;
  localparam int unsigned EntW = 2 + 2 * AW + NW + 2 * Cols * 8;

  logic q_valid, q_pop;
  logic [EntW-1:0] q_data;
  nasa_fifo #(.Width(EntW), .Depth(Depth)) u_q (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .flush_i    (flush_i),
    .in_valid_i (row_valid_i),
    .in_ready_o (row_ready_o),
    .in_data_i  ({row_last_i, Dual && row_two_i, Dual ? row_data2_i : '0,
                  Dual ? row_addr2_i : '0, row_data_i, row_n_i, row_addr_i}),
    .out_valid_o(q_valid),
    .out_ready_i(q_pop),
    .out_data_o (q_data),
    .count_o    ()
  );

  logic [NW-1:0] n;
  logic two;
  logic [AW-1:0] addr [2];
  logic [Cols*8-1:0] data [2];
  assign addr[0] = q_data[AW-1:0];
  assign n       = q_data[AW +: NW];
  assign data[0] = q_data[AW + NW +: Cols * 8];
  assign addr[1] = q_data[AW + NW + Cols * 8 +: AW];
  assign data[1] = q_data[2 * AW + NW + Cols * 8 +: Cols * 8];
  assign two     = q_data[EntW-2];

  // the entry's words: w_*[0..3] in order, nw of them
  logic [AW-1:0] w_addr [4];
  logic [MemBytes*8-1:0] w_data [4];
  logic [MemBytes-1:0] w_strb [4];
  logic [2:0] nw;
  always_comb begin
    logic [AW-1:0] a_lo [2];
    logic [2*MemBytes*8-1:0] wide [2];
    logic [2*MemBytes-1:0] strb2 [2];
    logic tp [2];
    for (int i = 0; i < 2; i++) begin
      a_lo[i]  = {addr[i][AW-1:OffW], {OffW{1'b0}}};
      wide[i]  = (2 * MemBytes * 8)'(data[i]) << {addr[i][OffW-1:0], 3'b000};
      strb2[i] = (((2 * MemBytes)'(1) << n) - 1'b1) << addr[i][OffW-1:0];
      tp[i]    = strb2[i][2*MemBytes-1:MemBytes] != '0;
    end
    for (int k = 0; k < 4; k++) begin
      w_addr[k] = a_lo[1];
      w_data[k] = wide[1][MemBytes*8-1:0];
      w_strb[k] = strb2[1][MemBytes-1:0];
    end
    w_addr[0] = a_lo[0];
    w_data[0] = wide[0][MemBytes*8-1:0];
    w_strb[0] = strb2[0][MemBytes-1:0];
    if (tp[0]) begin
      w_addr[1] = a_lo[0] + AW'(MemBytes);
      w_data[1] = wide[0][2*MemBytes*8-1:MemBytes*8];
      w_strb[1] = strb2[0][2*MemBytes-1:MemBytes];
    end
    // the second row's words after the first's
    w_addr[tp[0] ? 3 : 2] = a_lo[1] + AW'(MemBytes);
    w_data[tp[0] ? 3 : 2] = wide[1][2*MemBytes*8-1:MemBytes*8];
    w_strb[tp[0] ? 3 : 2] = strb2[1][2*MemBytes-1:MemBytes];
    if (tp[0]) begin
      w_addr[2] = a_lo[1];
      w_data[2] = wide[1][MemBytes*8-1:0];
      w_strb[2] = strb2[1][MemBytes-1:0];
    end
    nw = 3'(1 + 32'(tp[0]) + (two ? 1 + 32'(tp[1]) : 0));
  end

  logic [1:0] k_q;  // the head entry's next word
  logic has_b, merge, pair, adv;
  logic [2:0] step;
  logic [1:0] kb;
  assign kb    = k_q + 2'd1;
  assign has_b = Dual && (3'(k_q) + 3'd1 < nw);
  assign merge = has_b && wr_sc_i && wr2_sc_i && w_addr[kb] == w_addr[k_q];
  assign pair  = has_b && wr_sc_i && wr2_sc_i && !merge &&
                 (w_addr[kb][OffW] != w_addr[k_q][OffW]);
  assign step  = (merge || pair) ? 3'd2 : 3'd1;
  assign adv   = q_valid && wr_ready_i;

  always_comb begin
    wr_valid_o = q_valid;
    wr_addr_o  = w_addr[k_q];
    wr_data_o  = w_data[k_q];
    wr_strb_o  = w_strb[k_q];
    if (merge) begin
      for (int b = 0; b < MemBytes; b++) begin
        if (w_strb[kb][b]) wr_data_o[b*8 +: 8] = w_data[kb][b*8 +: 8];
      end
      wr_strb_o = w_strb[k_q] | w_strb[kb];
    end
    wr2_valid_o = q_valid && pair;
    wr2_addr_o  = w_addr[kb];
    wr2_data_o  = w_data[kb];
    wr2_strb_o  = w_strb[kb];
    q_pop       = adv && 3'(k_q) + step == nw;
  end
  assign last_o = q_pop && q_data[EntW-1];

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) k_q <= '0;
    else if (flush_i) k_q <= '0;
    else if (q_pop) k_q <= '0;
    else if (adv) k_q <= k_q + 2'(step);
  end

`ifndef SYNTHESIS
  // Simulation-only checks (Verilator --assert; Yosys defines SYNTHESIS and skips them).
  // Write port, valid/ready: a write waiting for ready is held, unchanged, until accepted (or
  // withdrawn by a flush_i).
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (wr_valid_o && !wr_ready_i && !flush_i) |=>
                   (flush_i || (wr_valid_o && $stable({wr_addr_o, wr_data_o, wr_strb_o}))))
    else $error("nasa_out_writer: write changed or withdrawn while stalled");
  // Rows carry 1..Cols bytes; a write carries at least one.
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   row_valid_i |-> (row_n_i != '0 && 32'(row_n_i) <= Cols))
    else $error("nasa_out_writer: row of %0d bytes (1..%0d)", row_n_i, Cols);
  // An entry leaves the queue (and last_o pulses) only with its final write accepted.
  assert property (@(posedge clk_i) disable iff (!rst_ni) q_pop |-> (wr_valid_o && wr_ready_i))
    else $error("nasa_out_writer: row popped without its write accepted");
  assert property (@(posedge clk_i) disable iff (!rst_ni) wr_valid_o |-> (wr_strb_o != '0))
    else $error("nasa_out_writer: write without byte strobes");
  // the second port only beside a scratch write, into the other bank
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   wr2_valid_o |-> (wr_valid_o && wr_sc_i && wr2_strb_o != '0 &&
                                    wr2_addr_o[OffW] != wr_addr_o[OffW]))
    else $error("nasa_out_writer: second write not beside a scratch write in the other bank");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   !$isunknown({flush_i, row_valid_i, wr_valid_o, wr_ready_i}))
    else $error("nasa_out_writer: X on a control signal");
`endif
endmodule
