// Synchronous FIFO with valid/ready on both sides (fall-through read: data is valid while not
// empty). Depth must be a power of two.
module nasa_fifo #(
  parameter int unsigned Width = 8,
  parameter int unsigned Depth = 4,
  // Simulation only: the sender holds an entry offered while the FIFO is full until it is taken
  // (valid/ready), checked by an assertion. A sender that may change its offer while not ready (a
  // priority arbiter in front of the FIFO, which loses nothing since an entry is only sampled when
  // pushed) turns the check off.
  parameter bit HeldInput = 1'b1
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  input  logic             flush_i,
  input  logic             in_valid_i,
  output logic             in_ready_o,
  input  logic [Width-1:0] in_data_i,
  output logic             out_valid_o,
  input  logic             out_ready_i,
  output logic [Width-1:0] out_data_o,
  output logic [$clog2(Depth):0] count_o
);
  localparam int unsigned AW = $clog2(Depth);

  logic [Width-1:0] mem_q [Depth];
  logic [AW-1:0] wptr_q, rptr_q;
  logic [AW:0] count_q;
  logic push, pop;

  assign in_ready_o  = (count_q != (AW + 1)'(Depth));
  assign out_valid_o = (count_q != '0);
  assign out_data_o  = mem_q[rptr_q];
  assign count_o     = count_q;
  assign push        = in_valid_i && in_ready_o;
  assign pop         = out_valid_o && out_ready_i;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      wptr_q  <= '0;
      rptr_q  <= '0;
      count_q <= '0;
    end else if (flush_i) begin
      wptr_q  <= '0;
      rptr_q  <= '0;
      count_q <= '0;
    end else begin
      if (push) wptr_q <= wptr_q + 1'b1;
      if (pop) rptr_q <= rptr_q + 1'b1;
      count_q <= count_q + (AW + 1)'(push) - (AW + 1)'(pop);
    end
  end

  always_ff @(posedge clk_i) begin
    if (push) mem_q[wptr_q] <= in_data_i;
  end

`ifndef SYNTHESIS
  // Simulation-only checks (Verilator --assert; Yosys defines SYNTHESIS and skips them).
  // No overflow or underflow: the count stays within [0, Depth] and agrees with the pointers.
  assert property (@(posedge clk_i) disable iff (!rst_ni) count_q <= (AW + 1)'(Depth))
    else $error("nasa_fifo: overflow, count %0d > Depth %0d", count_q, Depth);
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   AW'(wptr_q - rptr_q) == AW'(count_q))
    else $error("nasa_fifo: pointers disagree with the count (overflow or underflow)");
  // The sender's side of valid/ready (HeldInput): an entry offered while the FIFO is full is
  // held, unchanged, until it is taken (a flush_i withdraws it).
  if (HeldInput) begin : g_chk_held
    assert property (@(posedge clk_i) disable iff (!rst_ni)
                     (in_valid_i && !in_ready_o && !flush_i) |=>
                     (flush_i || (in_valid_i && $stable(in_data_i))))
      else $error("nasa_fifo: input data changed or withdrawn while stalled (valid && !ready)");
  end
  // The receiver's side, the FIFO's own promise: the head stays until popped.
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (out_valid_o && !out_ready_i && !flush_i) |=> (out_valid_o && $stable(out_data_o)))
    else $error("nasa_fifo: head changed while stalled");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   !$isunknown({flush_i, in_valid_i, out_ready_i}))
    else $error("nasa_fifo: X on a control input");
`endif
endmodule
