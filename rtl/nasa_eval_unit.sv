// Evaluation unit: for one (leaf, image) reads the image's logits and its label through the
// control byte port, takes the argmax (first maximum: the lowest index on ties, as the host does)
// and counts a correct answer for the leaf. Per-node counters live in a RAM cleared at the start of
// every batch run (clear_i, NodeCap cycles; busy_o meanwhile). The host reads them through
// cnt_idx_i / cnt_o (registered read, used while idle).
`include "nasa_regs.svh"

module nasa_eval_unit #(
  parameter int unsigned NodeCap = nasa_pkg::NodeCap
) (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        clear_i,   // pulse: zero every counter
  input  logic        abort_i,
  output logic        busy_o,
  input  logic        start_i,   // pulse while idle: evaluate one (leaf, image)
  input  logic [15:0] leaf_i,
  input  logic [31:0] logits_addr_i,
  input  logic [31:0] label_addr_i,
  input  logic [15:0] classes_i,  // >= 1
  output logic        done_o,     // pulse
  // control memory byte port (reads only)
  output nasa_pkg::byte_req_t mreq_o,
  input  nasa_pkg::byte_rsp_t mrsp_i,
  // counter read port (host)
  input  logic [15:0] cnt_idx_i,
  output logic [31:0] cnt_o
);
  localparam int unsigned NW = $clog2(NodeCap);

  typedef enum logic [2:0] {EIdle, EClear, ELogit, ELabel, ERead, EWrite} estate_e;
  logic [31:0] cnt_mem [NodeCap];
  // registers (all zero after reset)
  typedef struct packed {
    estate_e st;   // the FSM state (EIdle: 0)
    logic [NW-1:0] clr;
    logic [15:0]   leaf;
    logic [15:0]   k;
    logic [15:0]   best_i;
    logic [7:0]    best;
    logic [31:0]   la;
    logic [31:0]   lb;
    logic [15:0]   classes;
    logic          req_pend;                     // a request was accepted, waiting for its response
    logic          ok;
    logic          done;                         // done_o
  } regs_t;
  regs_t q, d;
  logic [31:0] rd_q;

  assign busy_o       = (q.st != EIdle);
  assign mreq_o.we    = 1'b0;
  assign mreq_o.wdata = '0;
  assign mreq_o.valid = ((q.st == ELogit) || (q.st == ELabel)) && !q.req_pend;
  assign mreq_o.addr  = (q.st == ELabel) ? q.lb : q.la + 32'(q.k);

  // the counter RAM: one write port, one synchronous read port shared by update and host
  logic we;
  logic [NW-1:0] waddr, raddr;
  logic [31:0] wdata;
  assign raddr = (q.st == EIdle) ? cnt_idx_i[NW-1:0] : q.leaf[NW-1:0];
  always_ff @(posedge clk_i) begin
    if (we) cnt_mem[waddr] <= wdata;
    rd_q <= cnt_mem[raddr];
  end
  assign cnt_o = rd_q;
  always_comb begin
    we    = 1'b0;
    waddr = q.leaf[NW-1:0];
    wdata = rd_q + 32'd1;
    if (q.st == EClear) begin
      we    = 1'b1;
      waddr = q.clr;
      wdata = '0;
    end else if (q.st == EWrite) begin
      we = q.ok;
    end
  end

  assign done_o = q.done;

  // next state and registers
  always_comb begin
    d      = q;
    d.done = 1'b0;
    if (abort_i) begin
      d.st       = EIdle;
      d.req_pend = 1'b0;
    end else begin
      if (mreq_o.valid && mrsp_i.ready) d.req_pend = 1'b1;
      unique case (q.st)
        EIdle: begin
          if (clear_i) begin
            d.st  = EClear;
            d.clr = '0;
          end else if (start_i) begin
            d.st      = ELogit;
            d.leaf    = leaf_i;
            d.la      = logits_addr_i;
            d.lb      = label_addr_i;
            d.classes = classes_i;
            d.k       = '0;
            d.best_i  = '0;
            d.best    = 8'h80;
          end
        end
        EClear: begin
          d.clr = q.clr + 1'b1;
          if (32'(q.clr) == NodeCap - 1) d.st = EIdle;
        end
        ELogit: begin
          if (mrsp_i.valid) begin
            d.req_pend = 1'b0;
            if (q.k == 16'd0 || $signed(mrsp_i.rdata) > $signed(q.best)) begin
              d.best   = mrsp_i.rdata;
              d.best_i = q.k;
            end
            d.k = q.k + 16'd1;
            if (q.k + 16'd1 == q.classes) d.st = ELabel;
          end
        end
        ELabel: begin
          if (mrsp_i.valid) begin  // rd_q holds the leaf's counter from the next cycle on
            d.req_pend = 1'b0;
            d.ok       = (16'(mrsp_i.rdata) == q.best_i);
            d.st       = ERead;
          end
        end
        ERead: d.st = EWrite;
        EWrite: begin
          d.st   = EIdle;
          d.done = 1'b1;
        end
        default: d.st = EIdle;
      endcase
    end
  end

  `NASA_FF(q, d, '0)
  logic unused;
  assign unused = ^{cnt_idx_i, q.leaf};

`ifndef SYNTHESIS
  // Simulation-only checks (Verilator --assert; Yosys defines SYNTHESIS and skips them).
  // valid/ready: a read waiting for ready is held, unchanged, until accepted (abort_i drops it).
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   (mreq_o.valid && !mrsp_i.ready && !abort_i) |=>
                   (mreq_o.valid && $stable(mreq_o.addr)))
    else $error("nasa_eval_unit: request changed or withdrawn while stalled");
  // FSM legality; start and clear come while idle.
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   q.st inside {EIdle, EClear, ELogit, ELabel, ERead, EWrite})
    else $error("nasa_eval_unit: illegal state %0d", q.st);
  assert property (@(posedge clk_i) disable iff (!rst_ni) (start_i || clear_i) |-> !busy_o)
    else $error("nasa_eval_unit: start or clear while busy");
  assert property (@(posedge clk_i) disable iff (!rst_ni)
                   !$isunknown({clear_i, abort_i, start_i, mreq_o.valid, mrsp_i.ready,
                                mrsp_i.valid}))
    else $error("nasa_eval_unit: X on a control signal");
`endif
endmodule
