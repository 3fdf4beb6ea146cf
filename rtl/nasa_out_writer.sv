// Output writer: queues rows of up to Cols int8 results (one output pixel's channels of a tile)
// and turns each into one or two strobed bus-word writes (a row may straddle a word boundary).
// A row marked last (a layer's last) pulses last_o when its final write is accepted: the memory
// port takes a write in the cycle it accepts it, so the layer's results are then in memory.
module nasa_out_writer #(
  parameter int unsigned Cols     = 16,
  parameter int unsigned MemBytes = 32,
  parameter int unsigned Depth    = 4,
  parameter int unsigned AddrBits = 32,
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
  input  logic                  row_last_i,
  output logic                  last_o,
  output logic                  wr_valid_o,
  input  logic                  wr_ready_i,
  output logic [AddrBits-1:0]   wr_addr_o,
  output logic [MemBytes*8-1:0] wr_data_o,
  output logic [MemBytes-1:0]   wr_strb_o
);
  localparam int unsigned OffW = $clog2(MemBytes);
  localparam int unsigned AW   = AddrBits;
  localparam int unsigned RowW = 1 + AW + NW + Cols * 8;

  logic q_valid, q_pop;
  logic [RowW-1:0] q_data;
  nasa_fifo #(.Width(RowW), .Depth(Depth)) u_q (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .flush_i    (flush_i),
    .in_valid_i (row_valid_i),
    .in_ready_o (row_ready_o),
    .in_data_i  ({row_last_i, row_data_i, row_n_i, row_addr_i}),
    .out_valid_o(q_valid),
    .out_ready_i(q_pop),
    .out_data_o (q_data),
    .count_o    ()
  );

  logic [AW-1:0] addr;
  logic [NW-1:0] n;
  logic [Cols*8-1:0] data;
  logic [OffW-1:0] off;
  logic [2*MemBytes*8-1:0] wide;
  logic [2*MemBytes-1:0] strb2;
  logic second_q;  // the low word of the head row is written, the high word is pending

  assign addr  = q_data[AW-1:0];
  assign n     = q_data[AW +: NW];
  assign data  = q_data[AW + NW +: Cols * 8];
  assign last_o = q_pop && q_data[RowW-1];
  assign off   = addr[OffW-1:0];
  assign wide  = (2 * MemBytes * 8)'(data) << {off, 3'b000};
  assign strb2 = (((2 * MemBytes)'(1) << n) - 1'b1) << off;

  always_comb begin
    wr_valid_o = q_valid;
    wr_addr_o  = {addr[AW-1:OffW], {OffW{1'b0}}};
    wr_data_o  = wide[MemBytes*8-1:0];
    wr_strb_o  = strb2[MemBytes-1:0];
    q_pop      = 1'b0;
    if (second_q) begin
      wr_addr_o = {addr[AW-1:OffW], {OffW{1'b0}}} + AW'(MemBytes);
      wr_data_o = wide[2*MemBytes*8-1:MemBytes*8];
      wr_strb_o = strb2[2*MemBytes-1:MemBytes];
      q_pop     = q_valid && wr_ready_i;
    end else if (strb2[2*MemBytes-1:MemBytes] == '0) begin
      q_pop = q_valid && wr_ready_i;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) second_q <= 1'b0;
    else if (flush_i) second_q <= 1'b0;
    else if (q_valid && wr_ready_i) begin
      if (second_q) second_q <= 1'b0;
      else if (strb2[2*MemBytes-1:MemBytes] != '0) second_q <= 1'b1;
    end
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
  // A row leaves the queue (and last_o pulses) only with its final write accepted.
  assert property (@(posedge clk_i) disable iff (!rst_ni) q_pop |-> (wr_valid_o && wr_ready_i))
    else $error("nasa_out_writer: row popped without its write accepted");
  assert property (@(posedge clk_i) disable iff (!rst_ni) wr_valid_o |-> (wr_strb_o != '0))
    else $error("nasa_out_writer: write without byte strobes");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   !$isunknown({flush_i, row_valid_i, wr_valid_o, wr_ready_i}))
    else $error("nasa_out_writer: X on a control signal");
`endif
endmodule
